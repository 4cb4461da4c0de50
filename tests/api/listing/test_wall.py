"""GET /wall, the hosted offerwall (docs/publisher-integration.md#the-hosted-wall)."""

from __future__ import annotations

import re
from datetime import timedelta
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import pytest

from api.core.db import write_session
from api.publishers import offerwalls, signature
from api.routes import wall as wall_routes
from models import Offerwall
from models.types import utcnow
from tests.api.steps import at, start
from tests.api.tracking_helpers import click
from tests.factories import (
    ANDROID_UA,
    IPHONE_UA,
    WINDOWS_UA,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)

KILLS_3 = {
    "event": "GAME_END",
    "conditions": [{"field": "traits.kills", "op": ">=", "value": 1}],
    "completion": {"kind": "count", "threshold": 3},
}
US, DE = "203.0.113.7", "198.51.100.9"  # tests.factories.FixedCountries


class Cards(HTMLParser):
    """The offer cards of a wall page: id → (section, status), and every URL it loads."""

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, tuple[str, str]] = {}
        self.section = ""
        self.loads: list[str] = []
        self.links: dict[str, str] = {}
        self._card = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("aria-labelledby") or ""
        if tag == "article":
            self._card = (a.get("id") or "").removeprefix("offer-")
            self.cards[self._card] = (self.section, a.get("data-status") or "")
        if tag in ("img", "script", "link", "iframe") and (a.get("src") or a.get("href")):
            self.loads.append(a.get("src") or a.get("href") or "")
        if tag == "a" and "go" in (a.get("class") or "") and self._card:
            self.links[self._card] = a.get("href") or ""


def wall_page(client, owid, uid, *, ip=US, ua=ANDROID_UA, lang=None, **params):
    headers = {"user-agent": ua, "x-forwarded-for": ip}
    if lang:
        headers["accept-language"] = lang
    return client.get("/wall", params={"owid": owid, "uid": uid, **params}, headers=headers)


def cards(answer) -> Cards:
    assert answer.status_code == 200, answer.text
    parsed = Cards()
    parsed.feed(answer.text)
    return parsed


def api_offers(client, key, **params) -> list[str]:
    body = client.get(
        "/offerwall/offers", params={"limit": "100", **params}, headers={"x-api-key": key}
    ).json()
    return [o["id"] for o in body["data"]["missions"]] + [o["id"] for o in body["data"]["quests"]]


@pytest.fixture
def offers(engine, game):
    return {
        "kills": make_mission(engine, game.game_id, title="Kill 3", rule=KILLS_3).id,
        "once": make_mission(engine, game.game_id, title="Win once").id,
        "ios": make_mission(engine, game.game_id, title="iOS", operatingSystem=["iOS"]).id,
        "no_de": make_mission(
            engine,
            game.game_id,
            title="Not DE",
            geotargeting={"countriesInclude": [], "countriesExclude": ["DE"]},
        ).id,
        "quest": make_quest(
            engine, game.game_id, [mission_data(title="Q1"), mission_data(title="Q2", rule=KILLS_3)]
        ).id,
    }


def test_the_wall_shows_exactly_what_the_offers_api_returns_for_the_player(
    client, signed, wall, offers
):
    owall, key = wall
    start(client, signed, wall, offers["kills"], "p1", uid="alice")
    start(client, signed, wall, offers["once"], "p1", uid="alice")
    start(client, signed, wall, offers["quest"], "p1", kind="quest", uid="alice")
    signed.events(
        {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 12}},
        {"userId": "p1", "event": "GAME_END", "time": at(2), "traits": {"kills": 0}},
    )
    for ip, ua, country, os_name in (
        (US, ANDROID_UA, "US", "Android"),
        (DE, IPHONE_UA, "DE", "iOS"),
    ):
        page = cards(wall_page(client, owall.owid, "alice", ip=ip, ua=ua))
        doable = {i for i, (section, _) in page.cards.items() if section != "finished"}
        assert doable == set(api_offers(client, key, uid="alice", country=country, os=os_name))
    page = cards(wall_page(client, owall.owid, "alice"))
    assert page.cards[offers["kills"]] == ("continuing", "started")
    assert page.cards[offers["quest"]] == ("continuing", "started")
    assert page.cards[offers["no_de"]] == ("offers", "new")
    assert page.cards[offers["once"]] == ("finished", "completed")
    assert offers["ios"] not in page.cards  # an Android phone
    # The tallies: 1 of 3 kills; the quest's first mission done, 1 of 3 on the second.
    text = wall_page(client, owall.owid, "alice").text
    assert "1 / 3" in text
    assert "1 of 2 missions done" in text
    # The button goes through the tracking link with the player's uid and the wall's language.
    link = urlsplit(page.links[offers["no_de"]])
    assert link.path == f"/missions/{offers['no_de']}"
    assert parse_qs(link.query) == {"owid": [owall.owid], "uid": ["alice"], "lang": ["en"]}
    assert offers["once"] not in page.links


def test_following_the_wall_and_playing_completes_the_offer(client, signed, wall, offers):
    owall, _ = wall
    first = cards(wall_page(client, owall.owid, "bob", sub1="campaign-7"))
    assert first.cards[offers["kills"]] == ("offers", "new")
    href = first.links[offers["kills"]]
    assert "platform_sub1=campaign-7" in href
    followed = client.get(href, headers={"user-agent": ANDROID_UA, "x-forwarded-for": US})
    assert followed.status_code == 302
    player = parse_qs(urlsplit(followed.headers["location"]).query)["platformid"][0]
    signed.identifiers({"userId": "bob-game", "platformUserId": player})
    assert cards(wall_page(client, owall.owid, "bob")).cards[offers["kills"]] == (
        "continuing",
        "started",
    )
    for second in (1, 2, 3):
        signed.events(
            {"userId": "bob-game", "event": "GAME_END", "time": at(second), "traits": {"kills": 1}}
        )
    done = cards(wall_page(client, owall.owid, "bob"))
    assert done.cards[offers["kills"]] == ("finished", "completed")


def test_targeting_by_country_and_os(client, wall, offers):
    owid = wall[0].owid
    android_us = cards(wall_page(client, owid, "c", ip=US, ua=ANDROID_UA)).cards
    iphone_de = cards(wall_page(client, owid, "c", ip=DE, ua=IPHONE_UA)).cards
    windows_unknown = cards(wall_page(client, owid, "c", ip="192.0.2.200", ua=WINDOWS_UA)).cards
    assert offers["ios"] not in android_us and offers["no_de"] in android_us
    assert offers["ios"] in iphone_de and offers["no_de"] not in iphone_de
    # An unknown country passes an exclusion list; no OS list means every device.
    assert offers["no_de"] in windows_unknown and offers["kills"] in windows_unknown


def require_signature(engine, offerwall_id: str, required: bool = True) -> None:
    with write_session(engine) as session:
        row = session.get(Offerwall, offerwall_id)
        assert row is not None
        row.wall_require_signature = required
        session.add(row)


def test_signed_links(client, engine, wall, offers):
    owall, key = wall
    good = signature(key, owall.owid, "alice")
    assert re.fullmatch(r"[0-9a-f]{64}", good)
    # Not required: an unsigned link opens, a wrong signature never does.
    assert wall_page(client, owall.owid, "alice").status_code == 200
    assert wall_page(client, owall.owid, "alice", sig="0" * 64).status_code == 403
    require_signature(engine, owall.id)
    assert wall_page(client, owall.owid, "alice").status_code == 403
    assert wall_page(client, owall.owid, "alice", sig=good).status_code == 200
    assert wall_page(client, owall.owid, "alice", sig=good.upper()).status_code == 200
    # Changing the uid (someone else's wall) with the same signature is refused.
    assert wall_page(client, owall.owid, "mallory", sig=good).status_code == 403
    tampered = good[:-1] + ("0" if good[-1] != "0" else "1")
    refused = wall_page(client, owall.owid, "alice", sig=tampered)
    assert refused.status_code == 403
    assert "not valid" in refused.text
    # Links in the page keep the signature.
    assert f"sig={good}" in wall_page(client, owall.owid, "alice", sig=good).text


def test_a_link_signed_with_the_replaced_key_opens_until_its_grace_ends(
    client, engine, box, wall, offers, monkeypatch
):
    owall, old = wall
    require_signature(engine, owall.id)
    with write_session(engine) as session:
        row = offerwalls.get_offerwall(session=session, ref=owall.id)
        new = offerwalls.rotate_key(session=session, box=box, offerwall=row, grace="1h").api_key
    # Another offerwall's key, and a key nobody has: never a signer here.
    _, unrelated = make_offerwall(engine, box)
    signed_with = {
        k: signature(key, owall.owid, "alice")
        for k, key in (
            ("old", old),
            ("new", new),
            ("unrelated", unrelated),
            ("nobody", "qw_ak_nobody"),
        )
    }

    def statuses() -> dict[str, int]:
        return {
            k: wall_page(client, owall.owid, "alice", sig=sig).status_code
            for k, sig in signed_with.items()
        }

    inside = {"old": 200, "new": 200, "unrelated": 403, "nobody": 403}
    assert statuses() == inside
    # The old key's sig signs for alice only, like the current key's.
    assert wall_page(client, owall.owid, "mallory", sig=signed_with["old"]).status_code == 403
    now = utcnow()
    monkeypatch.setattr(wall_routes, "utcnow", lambda: now + timedelta(minutes=59))
    assert statuses() == inside
    monkeypatch.setattr(wall_routes, "utcnow", lambda: now + timedelta(hours=1, minutes=1))
    assert statuses() == {"old": 403, "new": 200, "unrelated": 403, "nobody": 403}


def test_framing_only_by_configured_origins(client, engine, wall, offers):
    owall, _ = wall
    answer = wall_page(client, owall.owid, "alice")
    csp = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert answer.headers["x-frame-options"] == "DENY"
    with write_session(engine) as session:
        row = session.get(Offerwall, owall.id)
        assert row is not None
        row.wall_origins = ["https://games.example.com", "https://m.example.com"]
        session.add(row)
    answer = wall_page(client, owall.owid, "alice")
    csp = answer.headers["content-security-policy"]
    assert "frame-ancestors https://games.example.com https://m.example.com" in csp
    assert "x-frame-options" not in answer.headers
    assert "script-src" not in csp and "default-src 'none'" in csp


def test_the_page_is_small_and_loads_nothing_but_images(client, engine, game, wall):
    owall, _ = wall
    for n in range(60):
        make_mission(
            engine, game.game_id, title=f"Offer {n}", thumbnail="https://cdn.example/t.png"
        )
    answer = wall_page(client, owall.owid, "alice")
    page = cards(answer)
    assert len(page.cards) == 20  # a page of new offers
    assert len(answer.content) <= 100_000
    assert "<script" not in answer.text
    assert all(url.startswith("https://cdn.example/") for url in page.loads)
    second = cards(wall_page(client, owall.owid, "alice", page="3"))
    assert len(second.cards) == 20
    assert not set(second.cards) & set(page.cards)


def test_language_from_the_browser_or_lang(client, wall, offers):
    owid = wall[0].owid
    german = wall_page(client, owid, "alice", lang="de-AT,de;q=0.9,en;q=0.5")
    assert '<html lang="de">' in german.text
    assert "Angebote" in german.text and "Belohnung fehlt?" in german.text
    english = wall_page(client, owid, "alice", lang="fr-FR,fr;q=0.9")
    assert '<html lang="en">' in english.text and "Offers" in english.text
    forced = client.get("/wall", params={"owid": owid, "uid": "alice", "lang": "de"})
    assert '<html lang="de">' in forced.text


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"owid": "x"},
        {"uid": "alice"},
        {"owid": "nope", "uid": "alice"},
        {"owid": "{owid}", "uid": "a\x00b"},
        {"owid": "{owid}", "uid": "u" * 300},
        {"owid": "{owid}", "uid": "alice", "sub1": "s" * 300},
        {"owid": "{owid}", "uid": "alice", "page": "99999999999999999999"},
        {"owid": "{owid}", "uid": "alice", "page": "-1"},
        {"owid": "{owid}", "uid": "alice", "lang": "x" * 5000},
        {"owid": "{owid}", "uid": "alice", "sig": "zz"},
    ],
)
def test_odd_links_get_a_page_never_a_5xx(client, wall, params):
    filled = {k: v.replace("{owid}", wall[0].owid) for k, v in params.items()}
    answer = client.get("/wall", params=filled)
    assert answer.status_code in (200, 400, 403, 404), answer.text
    assert answer.headers["content-type"].startswith("text/html")


def test_an_unapproved_offerwall_has_no_wall(client, engine, box):
    pending, _ = make_offerwall(engine, box, name="Pending", approve=False)
    with write_session(engine) as session:
        offerwalls.get_offerwall(session=session, ref=pending.id)
    answer = client.get("/wall", params={"owid": "anything", "uid": "alice"})
    assert answer.status_code == 404


def test_clicks_from_the_wall_are_recorded_like_any_other(client, engine, wall, offers):
    owall, _ = wall
    href = cards(wall_page(client, owall.owid, "dana")).links[offers["no_de"]]
    kind_and_id = urlsplit(href).path.split("/")
    answer = click(client, kind_and_id[1][:-1], kind_and_id[2], owall.owid, uid="dana")
    assert answer.status_code == 302


# --- "Missing reward?" ------------------------------------------------------------------


def report(client, owid, uid, **form):
    return client.post(
        "/wall/support",
        data={"owid": owid, "uid": uid, **form},
        headers={"user-agent": ANDROID_UA, "x-forwarded-for": US},
    )


def test_a_ticket_travels_from_the_wall_to_the_publisher_and_back(
    client, signed, engine, wall, offers
):
    from api.tickets import desk
    from models import Role
    from tests.factories import make_account

    owall, _ = wall
    start(client, signed, wall, offers["kills"], "p1", uid="alice")
    form_page = client.get("/wall/support", params={"owid": owall.owid, "uid": "alice"})
    assert form_page.status_code == 200
    assert f'<option value="{offers["kills"]}">Kill 3</option>' in form_page.text
    assert offers["once"] not in form_page.text  # never opened: nothing to report

    # Wrong input first: nothing chosen, then an empty message; what was typed is kept.
    missing = report(client, owall.owid, "alice", offer="", message="I got nothing")
    assert missing.status_code == 400
    assert "Choose the offer" in missing.text and "I got nothing" in missing.text
    empty = report(client, owall.owid, "alice", offer=offers["kills"], message="   ")
    assert empty.status_code == 400 and "Write what happened" in empty.text

    sent = report(client, owall.owid, "alice", offer=offers["kills"], message="3 kills, no gems")
    assert sent.status_code == 303, sent.text
    reference = parse_qs(urlsplit(sent.headers["location"]).query)["sent"][0]
    thanks = client.get(sent.headers["location"])
    assert reference in thanks.text and "3 kills, no gems" in thanks.text
    assert "Waiting for an answer" in thanks.text

    # A second report on the same offer is refused, kept on the form.
    again = report(client, owall.owid, "alice", offer=offers["kills"], message="Still nothing")
    assert again.status_code == 400 and "already reported" in again.text
    assert "Still nothing" in again.text

    # The publisher sees it with what we knew, and answers.
    publisher = make_account(Role.PUBLISHER, offerwall_id=owall.id)
    with write_session(engine) as session:
        found = desk.search_tickets(session, account=publisher).rows
        assert [t.reference for t in found] == [reference]
        ticket = desk.ticket_for(session, account=publisher, ticket_id=found[0].id)
        assert ticket.context["clicks"]["count"] == 1
        desk.answer(
            session, account=publisher, ticket_id=ticket.id, text="Credited 150 gems.", close=True
        )
    answered = client.get("/wall/support", params={"owid": owall.owid, "uid": "alice"})
    assert "Credited 150 gems." in answered.text and "Closed" in answered.text
    # Another player's page shows none of it.
    other = client.get("/wall/support", params={"owid": owall.owid, "uid": "bob"})
    assert reference not in other.text


def test_a_report_needs_the_signature_the_wall_needs(client, engine, signed, wall, offers):
    owall, key = wall
    start(client, signed, wall, offers["kills"], "p1", uid="alice")
    require_signature(engine, owall.id)
    unsigned = report(client, owall.owid, "alice", offer=offers["kills"], message="Where?")
    assert unsigned.status_code == 403
    sig = signature(key, owall.owid, "alice")
    signed_report = report(
        client, owall.owid, "alice", sig=sig, offer=offers["kills"], message="Where?"
    )
    assert signed_report.status_code == 303
    assert f"sig={sig}" in signed_report.headers["location"]


@pytest.mark.parametrize(
    "form",
    [
        {"offer": "x\x00", "message": "hi"},
        {"offer": "nope", "message": "hi"},
        {"offer": "{kills}", "message": "m" * 2001},
        {"offer": "{kills}", "message": "a\x00b"},
        {"offer": "{kills}", "message": "hi", "uid": "u" * 300},
    ],
)
def test_odd_reports_never_get_a_5xx(client, signed, wall, offers, form):
    start(client, signed, wall, offers["kills"], "p1", uid="alice")
    filled = {k: v.replace("{kills}", offers["kills"]) for k, v in form.items()}
    answer = report(client, wall[0].owid, filled.pop("uid", "alice"), **filled)
    assert answer.status_code in (400, 403, 404), answer.text
    huge = client.post("/wall/support", content=b"message=" + b"x" * 40_000)
    assert huge.status_code == 413


def test_the_german_wall_refuses_a_report_in_german(client, engine, game, wall, offers):
    """Every refusal of a report by the service reaches the player in their language, its
    values (a ticket's reference, a quest's name) filled in."""
    from sqlmodel import col, select

    from api.core.db import new_session
    from api.tickets.report import OPEN_PER_PLAYER
    from models import Mission

    owall, _ = wall
    with new_session(engine) as session:
        in_quest = session.exec(
            select(Mission.id).where(col(Mission.quest_id) == offers["quest"])
        ).first()
    assert in_quest is not None
    more = [make_mission(engine, game.game_id, title=f"More {n}").id for n in range(2)]

    def german(offer: str, uid: str = "alice") -> str:
        """The form's answer to a report in German: "" once it is sent (a 303)."""
        answer = client.post(
            "/wall/support",
            data={"owid": owall.owid, "uid": uid, "offer": offer, "message": "Nichts bekommen"},
            headers={"user-agent": ANDROID_UA, "x-forwarded-for": US, "accept-language": "de"},
        )
        assert answer.status_code in (303, 400), answer.text
        return answer.text if answer.status_code == 400 else ""

    assert "Wir haben keinen Eintrag, dass du dieses Angebot" in german(offers["kills"])
    assert "Dieses Angebot gibt es nicht." in german("no-such-offer")
    assert "gehört zur Quest „Season opener“: Melde stattdessen die Quest." in german(in_quest)

    for offer in (offers["kills"], offers["once"], offers["no_de"], *more):
        assert click(client, "mission", offer, owall.owid, uid="alice").status_code == 302
    assert click(client, "quest", offers["quest"], owall.owid, uid="alice").status_code == 302
    waiting = [offers["kills"], offers["once"], offers["no_de"], offers["quest"], more[0]]
    assert len(waiting) == OPEN_PER_PLAYER
    assert german(waiting[0]) == ""
    again = german(waiting[0])
    assert re.search(
        r"Du hast dieses Angebot schon gemeldet \(Meldung [A-Z0-9]{4}-[A-Z0-9]{4}\)", again
    )
    for offer in waiting[1:]:
        assert german(offer) == ""
    assert "Du hast 5 offene Meldungen: Warte auf ihre Antworten" in german(more[1])
