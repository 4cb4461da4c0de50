"""Every page of the portal, as each role opens it, at a laptop's and a phone's width.

The portal is seeded by `questwall demo` (a studio with a game, missions and a quest, an
approved publisher, players who clicked and converted), so each page shows real rows.
Each page must open as itself (not the sign-in page, not another role's), show its
title, and fit the screen without sideways scrolling at both widths (each page opens once
and is looked at in both), and every count on it agrees with
its number ("1 mission", never "1 missions"; a quest of one mission is added for it); a
screenshot of each goes to test-artifacts/screenshots/walk-<role>-<page>-<width>.png for
a person to look at. The hosted wall's page is read for its counts too."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.demo import DESIGNER, PUBLISHER
from models import Game, Mission, Offerwall, Quest
from portal import routes
from tests.e2e.conftest import widths_too_wide
from tests.e2e.steps import sign_in
from tests.live import cli

pytestmark = pytest.mark.e2e

WIDTHS = ((1366, 900), (390, 844))
# "1" before a word ending in s: a count whose noun disagrees with it ("1 missions"),
# but for the words that end in s in the singular.
ONE_PLURAL = re.compile(r"\b1 ([a-z]+s)\b")
SINGULAR = {"is", "was", "has", "this", "ms", "status", "access", "address", "progress"}


def disagreeing(text: str) -> list[str]:
    return [m.group(0) for m in ONE_PLURAL.finditer(text) if m.group(1) not in SINGULAR]


@pytest.fixture(scope="module")
def seeded(portal, tmp_path_factory) -> dict[str, str]:
    """The demo's rows, by what the walk needs of them."""
    cli(portal.env, "demo")
    with Session(portal.engine()) as session:
        game = session.exec(select(Game).where(Game.name == "Star Siege")).one()
        mission = session.exec(select(Mission).where(Mission.game_id == game.id)).first()
        quest = session.exec(select(Quest).where(Quest.game_id == game.id)).first()
        wall = session.exec(select(Offerwall).where(Offerwall.name == "Demo Rewards")).one()
    assert mission is not None and quest is not None
    # A quest of one mission: its count is "1 mission" wherever it shows.
    one = tmp_path_factory.mktemp("walk") / "one-mission-quest.json"
    step = {"title": "Only step", "payout": 1, "destinationUrl": "https://game.example/"}
    quest_of_one = {"name": "Short quest", "destinationUrl": "https://game.example/"}
    quest_of_one["missions"] = [{**step, "rule": {"event": "START_GAME"}}]
    one.write_text(json.dumps({"gameId": game.id, "quests": [quest_of_one]}))
    cli(portal.env, "offers", "import", str(one))
    return {
        "game": game.id,
        "mission": mission.id,
        "quest": quest.id,
        "offerwall": wall.id,
        "owid": wall.owid or "",
    }


def designer_pages(ids: dict[str, str]) -> dict[str, str]:
    game = ids["game"]
    return {
        "games": routes.GAMES,
        "game": routes.game(game),
        "missions": routes.missions(game),
        "mission": routes.mission(game, ids["mission"]),
        "new-mission": routes.with_game(routes.MISSION, game),
        "quest": routes.quest(game, ids["quest"]),
        "tester": routes.tester(game, ids["mission"]),
        "events": routes.with_game(routes.EVENTS, game),
        "reports": routes.REPORTS,
        "conversions": routes.CONVERSIONS,
        "fraud": routes.FRAUD,
        "account": routes.ACCOUNT,
    }


def publisher_pages(_ids: dict[str, str]) -> dict[str, str]:
    return {
        "offerwall": routes.PUBLISHER,
        "offers": routes.PUBLISHER_OFFERS,
        "wall": routes.PUBLISHER_WALL,
        "postback": routes.PUBLISHER_POSTBACK,
        "deliveries": routes.PUBLISHER_DELIVERIES,
        "tickets": routes.TICKETS,
        "reports": routes.REPORTS,
        "account": routes.ACCOUNT,
    }


def staff_pages(ids: dict[str, str]) -> dict[str, str]:
    wall = routes.offerwall_query(ids["offerwall"])
    return {
        "dashboard": routes.STAFF,
        "publishers": routes.STAFF_PUBLISHERS + "?status=all",
        "studios": routes.STAFF_STUDIOS,
        "games": routes.GAMES,
        "missions": routes.missions(ids["game"]),
        "publisher-offerwall": routes.PUBLISHER + wall,
        "publisher-deliveries": routes.PUBLISHER_DELIVERIES + wall,
        "reports": routes.REPORTS,
        "margin": routes.REPORTS_MARGIN,
        "conversions": routes.CONVERSIONS,
        "fraud": routes.FRAUD,
        "tickets": routes.TICKETS,
        "users": routes.STAFF_USERS,
        "mail": routes.STAFF_MAIL,
        "account": routes.ACCOUNT,
    }


ROLES: dict[str, tuple[Callable[[dict[str, str]], dict[str, str]], str]] = {
    "designer": (designer_pages, "designer"),
    "publisher": (publisher_pages, "publisher"),
    "staff": (staff_pages, "staff"),
}


def account(portal, role: str) -> tuple[str, str]:
    return {"designer": DESIGNER, "publisher": PUBLISHER, "staff": portal.staff}[role]


def open_page(page: Page, url: str, path: str) -> None:
    page.goto(url + path)
    expect(page).to_have_url(re.compile(re.escape(path.split("?")[0]) + r"/?(\?|$)"))
    expect(page.locator("h1")).to_be_visible()
    page.wait_for_load_state("networkidle")


@pytest.mark.parametrize("role", ROLES)
def test_every_page_of_a_role_opens_and_fits_a_laptop_and_a_phone(portal, seeded, new_page, role):
    pages, _ = ROLES[role]
    page = new_page(*WIDTHS[0])
    sign_in(page, portal.url, *account(portal, role))
    expect(page).not_to_have_url(re.compile("/login"))
    too_wide, miscounted = [], {}
    for name, path in pages(seeded).items():
        open_page(page, portal.url, path)
        too_wide += [
            f"{name} at {w} px" for w in widths_too_wide(page, f"walk-{role}-{name}", WIDTHS)
        ]
        if wrong := disagreeing(page.locator("body").inner_text()):
            miscounted[name] = wrong
    assert too_wide == [], f"wider than the screen: {too_wide}"
    assert miscounted == {}, f"counts that disagree with their number: {miscounted}"


def test_the_hosted_walls_counts_agree_with_their_numbers(portal, seeded):
    wall = httpx.get(f"{portal.url}/wall", params={"owid": seeded["owid"], "uid": "walker"})
    assert wall.status_code == 200, wall.text
    assert "Short quest" in wall.text
    assert disagreeing(re.sub(r"<[^>]+>", " ", wall.text)) == []


def test_the_public_pages_open_and_fit_a_laptop_and_a_phone(portal, new_page):
    page = new_page(*WIDTHS[0])
    public = {"login": routes.LOGIN, "signup": routes.SIGNUP, "forgot": routes.FORGOT_PAGE}
    too_wide = []
    for name, path in public.items():
        page.goto(portal.url + path)
        expect(page.locator("h1")).to_be_visible()
        too_wide += widths_too_wide(page, f"walk-public-{name}", WIDTHS)
    page.goto(portal.url + routes.HOME)
    too_wide += widths_too_wide(page, "walk-public-home", WIDTHS)
    assert too_wide == [], f"wider than the screen: {too_wide}"
