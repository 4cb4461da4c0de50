"""The hosted wall in real Chromium on a phone: a player opens it, follows an offer, plays
it through signed events and sees it completed (screenshots in test-artifacts/)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import screenshot
from tests.e2e.missions.test_portal_editors import import_missions
from tests.e2e.steps import approved_wall, send_events

pytestmark = pytest.mark.e2e

PHONE_UA = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0 Mobile Safari/537.36"
)
KILLS_3 = {
    "event": "GAME_END",
    "conditions": [{"field": "traits.kills", "op": ">=", "value": 1}],
    "completion": {"kind": "count", "threshold": 3},
}


def kills(portal, user: str, *counts: int) -> None:
    game = portal.game
    now = datetime.now(UTC)
    events = [
        {
            "userId": user,
            "event": "GAME_END",
            "time": (now + timedelta(seconds=1 + i)).isoformat(),
            "traits": {"kills": n},
        }
        for i, n in enumerate(counts)
    ]
    answer = send_events(
        portal.url,
        game["clientId"],
        game["clientSecret"],
        {"gameId": game["gameId"], "events": events},
    )
    assert answer.json()["message"] == "OK", answer.text


class _Game(BaseHTTPRequestHandler):
    """The game's web page the offer sends the player to."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>Game</title><h1>The game</h1>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def game_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Game)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_player_follows_an_offer_from_the_wall_and_completes_it(portal, browser, game_site):
    owid = approved_wall(portal, "Phone Wall")
    missions = import_missions(
        portal,
        portal.game["gameId"],
        {
            "title": "Score 3 kills",
            "payout": 2,
            "destinationUrl": f"{game_site}/play",
            "instructions": "Play a match and take down 3 players.",
            "rule": KILLS_3,
        },
        {
            "title": "Win a match",
            "payout": 1,
            "destinationUrl": f"{game_site}/play",
            "rule": {"event": "MATCH_WON"},
        },
    )
    target = next(m["id"] for m in missions if m["title"] == "Score 3 kills")

    context = browser.new_context(
        viewport={"width": 390, "height": 844}, user_agent=PHONE_UA, is_mobile=True
    )
    page = context.new_page()
    wall_url = (
        f"{portal.url}/wall?{urlencode({'owid': owid, 'uid': 'phone-player', 'sub1': 'spring'})}"
    )
    page.goto(wall_url)
    card = page.locator(f"#offer-{target}")
    expect(card).to_have_attribute("data-status", "new")
    expect(page.get_by_role("heading", name="Offers", exact=True)).to_be_visible()
    # Fits a phone: nothing wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(page, "wall-390-new")

    with page.expect_popup() as opened:
        card.get_by_role("link", name="Start").click()
    game_page = opened.value
    game_page.wait_for_load_state()
    landed = urlsplit(game_page.url)
    assert landed.netloc == urlsplit(game_site).netloc
    player = parse_qs(landed.query)["platformid"][0]
    game_page.close()

    # The game links its user to the player and sends the events, signed.
    linked = send_events(
        portal.url,
        portal.game["clientId"],
        portal.game["clientSecret"],
        {
            "gameId": portal.game["gameId"],
            "identifiers": [{"userId": "phone-game-user", "platformUserId": player}],
        },
    )
    assert linked.json()["message"] == "OK", linked.text
    kills(portal, "phone-game-user", 2)
    page.reload()
    expect(card).to_have_attribute("data-status", "started")
    expect(card.locator(".tally")).to_have_text("1 / 3")
    expect(page.locator("#continuing")).to_be_visible()
    screenshot(page, "wall-390-in-progress")

    kills(portal, "phone-game-user", 1, 4)
    page.reload()
    expect(card).to_have_attribute("data-status", "completed")
    expect(page.locator("#finished")).to_be_visible()
    expect(card.locator(".badge")).to_have_text("Completed")
    expect(card.get_by_role("link", name="Start")).to_have_count(0)
    screenshot(page, "wall-390-completed")

    # The click kept the wall's sub1 as the tracking link's platform_sub1.
    from sqlmodel import Session, select

    from models import Click

    with Session(portal.engine()) as session:
        click = session.exec(select(Click).where(Click.uid == "phone-player")).one()
    assert click.sub1 == "spring"

    # In German, when the browser asks for it.
    german = browser.new_context(
        viewport={"width": 390, "height": 844}, user_agent=PHONE_UA, locale="de-DE"
    )
    de_page = german.new_page()
    de_page.goto(wall_url)
    expect(de_page.locator("html")).to_have_attribute("lang", "de")
    expect(de_page.get_by_role("heading", name="Angebote", exact=True)).to_be_visible()
    screenshot(de_page, "wall-390-de")
    german.close()
    context.close()
