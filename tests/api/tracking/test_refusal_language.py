"""A tracking link's refusal page speaks the hosted wall's language
(docs/publisher-integration.md#the-hosted-wall): the wall's cards carry it as `lang`, a
link without one follows Accept-Language as the wall does, and English is the default."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

from api.core.db import write_session
from api.missions import offers
from tests.api.listing.test_wall import cards, wall_page
from tests.api.tracking_helpers import click
from tests.factories import ANDROID_UA, make_mission


def _deactivate(engine, mission_id: str) -> None:
    with write_session(engine) as session:
        offers.set_active(session=session, kind="mission", offer_id=mission_id, active=False)


def _follow(client, href: str, *, accept_language: str | None = None):
    link = urlsplit(href)
    headers = {"user-agent": ANDROID_UA, "x-forwarded-for": "203.0.113.7"}
    if accept_language:
        headers["accept-language"] = accept_language
    return client.get(f"{link.path}?{link.query}", headers=headers)


def test_a_refused_click_from_a_german_wall_gets_a_german_page(client, game, wall, engine):
    owid = wall[0].owid
    mission = make_mission(engine, game.game_id, title="Win once")
    # The wall in German by its link's `lang`, and by the browser's Accept-Language.
    by_link = cards(
        client.get(
            "/wall",
            params={"owid": owid, "uid": "alice", "lang": "de"},
            headers={"user-agent": ANDROID_UA, "x-forwarded-for": "203.0.113.7"},
        )
    )
    by_browser = cards(wall_page(client, owid, "bob", lang="de-AT,de;q=0.9,en;q=0.5"))
    for page in (by_link, by_browser):
        assert parse_qs(urlsplit(page.links[mission.id]).query)["lang"] == ["de"]
    _deactivate(engine, mission.id)  # ended while the wall was open

    for href in (by_link.links[mission.id], by_browser.links[mission.id]):
        # Opened in a browser of another language: the wall's language still.
        refused = _follow(client, href, accept_language="en-US,en;q=0.9")
        assert refused.status_code == 410
        assert '<html lang="de">' in refused.text
        assert "<title>Angebot beendet · Questwall</title>" in refused.text
        assert "Dieses Angebot ist nicht mehr verfügbar." in refused.text
        assert "no longer available" not in refused.text
        assert "Accept-Language" in refused.headers["vary"]


def test_a_refusal_with_a_moment_writes_it_the_languages_way(client, game, wall, engine, clock):
    from tests.api.missions.test_live_operations import import_file, mission

    clock.set(datetime(2026, 12, 10, 8, tzinfo=UTC))
    members = import_file(
        engine,
        game.game_id,
        pools=[{"name": "daily", "size": 1}],
        missions=[mission(f"M{n}", {"event": "WIN"}, pool="daily") for n in range(4)],
    )
    page = cards(wall_page(client, wall[0].owid, "alice", lang="de"))
    [picked] = set(page.cards) & {m.id for m in members}
    other = next(m.id for m in members if m.id != picked)
    refused = click(client, "mission", other, wall[0].owid, uid="alice", lang="de")
    assert refused.status_code == 403
    assert "Gerade keine deiner Missionen" in refused.text
    assert "Deine Missionen wechseln am 11 Dez., 00:00 UTC;" in refused.text
    english = click(client, "mission", other, wall[0].owid, uid="alice")
    assert "Your missions change on 11 Dec, 00:00 UTC;" in english.text


def test_a_refusal_is_english_by_default_and_for_an_unknown_language(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    _deactivate(engine, mission.id)
    for params, accept_language in (
        ({}, None),  # a publisher's own link, a browser that says nothing
        ({"lang": "zz"}, None),
        ({"lang": "x" * 5000}, None),
        ({}, "fr-FR,fr;q=0.9"),  # a language the wall does not speak
    ):
        headers = {"user-agent": ANDROID_UA, "x-forwarded-for": "203.0.113.7"}
        if accept_language:
            headers["accept-language"] = accept_language
        refused = client.get(
            f"/missions/{mission.id}",
            params={"owid": wall[0].owid, "uid": "u", **params},
            headers=headers,
        )
        assert refused.status_code == 410, params
        assert '<html lang="en">' in refused.text
        assert "<title>Offer ended · Questwall</title>" in refused.text
        assert "This offer is no longer available." in refused.text
    # Without `lang`, the browser's language, as the wall would choose it.
    german = client.get(
        f"/missions/{mission.id}",
        params={"owid": wall[0].owid, "uid": "u"},
        headers={"accept-language": "de-CH, en;q=0.5"},
    )
    assert '<html lang="de">' in german.text and "Angebot beendet" in german.text
