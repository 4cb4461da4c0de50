"""Tracking links (docs/contract.md#tracking-links): refusals, the click record, the redirect."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlsplit

from sqlmodel import func, select

from api.core.db import new_session, write_session
from api.missions import offers
from api.publishers import offerwalls
from models import Click, PlatformUser, Progress
from tests.api.tracking_helpers import click, platform_id
from tests.factories import (
    IPHONE_UA,
    WINDOWS_UA,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)


def _count(engine, model) -> int:
    with new_session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_redirect_keeps_the_destinations_parameters_and_adds_platformid(client, game, wall, engine):
    mission = make_mission(
        engine, game.game_id, destinationUrl="https://game.example/play?source=qw&x=1#top"
    )
    response = click(client, "mission", mission.id, wall[0].owid, uid="u-1")
    assert response.status_code == 302
    location = urlsplit(response.headers["location"])
    assert (location.scheme, location.netloc, location.path, location.fragment) == (
        "https",
        "game.example",
        "/play",
        "top",
    )
    query = parse_qsl(location.query)
    assert query[:2] == [("source", "qw"), ("x", "1")]
    assert query[2][0] == "platformid"


def test_the_click_is_recorded_with_everything(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    response = click(
        client,
        "mission",
        mission.id,
        wall[0].owid,
        uid="u-1",
        clickid="c-9",
        platform_sub1="a",
        platform_sub2="b",
        platform_sub3="c",
        ip="198.51.100.9",
        ua=IPHONE_UA,
    )
    player = platform_id(response)
    with new_session(engine) as session:
        [row] = session.exec(select(Click)).all()
    assert (row.offerwall_id, row.mission_id, row.quest_id) == (wall[0].id, mission.id, None)
    assert (row.uid, row.clickid, row.sub1, row.sub2, row.sub3) == ("u-1", "c-9", "a", "b", "c")
    assert (row.ip, row.country, row.os, row.platform_user_id) == (
        "198.51.100.9",
        "DE",
        "iOS",
        player,
    )
    assert row.user_agent == IPHONE_UA and row.started


def test_platform_user_is_stable_per_offerwall_and_uid(client, game, wall, engine, box):
    mission = make_mission(engine, game.game_id)
    first = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="u-1"))
    again = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="u-1"))
    other_uid = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="u-2"))
    other_wall, _ = make_offerwall(engine, box, name="Other")
    other_wall_player = platform_id(
        click(client, "mission", mission.id, other_wall.owid, uid="u-1")
    )
    assert first == again
    assert len({first, other_uid, other_wall_player}) == 3


def test_clickid_only_gets_its_own_platform_user_each_time(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    a = platform_id(click(client, "mission", mission.id, wall[0].owid, clickid="c-1"))
    b = platform_id(click(client, "mission", mission.id, wall[0].owid, clickid="c-1"))
    assert a != b
    assert _count(engine, PlatformUser) == 2


def test_first_click_starts_and_owns_the_attribution(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    click(client, "mission", mission.id, wall[0].owid, uid="u-1", clickid="first")
    click(client, "mission", mission.id, wall[0].owid, uid="u-1", clickid="second")
    with new_session(engine) as session:
        clicks = session.exec(select(Click).order_by(Click.id)).all()
        [progress] = session.exec(select(Progress)).all()
    assert [c.started for c in clicks] == [True, False]
    assert progress.click_id == clicks[0].id


def test_unknown_or_unapproved_offerwall_is_404_html(client, game, engine, box):
    mission = make_mission(engine, game.game_id)
    pending, _ = make_offerwall(engine, box, name="Pending", approve=False)
    for owid in (None, "ow-nope", pending.owid):
        response = click(client, "mission", mission.id, owid, uid="u")
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert "<h1>Offer not found</h1>" in response.text


def test_suspended_offerwall_is_404(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    with write_session(engine) as session:
        ow = offerwalls.get_offerwall(session=session, ref=wall[0].id)
        offerwalls.suspend(session=session, offerwall=ow)
    assert click(client, "mission", mission.id, wall[0].owid, uid="u").status_code == 404


def test_unknown_offer_and_quest_mission_alone_are_404(client, game, wall, engine):
    assert (
        click(
            client, "mission", "0d5a1c1e-0000-4000-8000-000000000000", wall[0].owid, uid="u"
        ).status_code
        == 404
    )
    quest = make_quest(engine, game.game_id, [mission_data()])
    with new_session(engine) as session:
        from models import Mission

        inside = session.exec(select(Mission).where(Mission.quest_id == quest.id)).first()
    assert click(client, "mission", inside.id, wall[0].owid, uid="u").status_code == 404
    assert click(client, "quest", quest.id, wall[0].owid, uid="u").status_code == 302


def test_neither_uid_nor_clickid_is_400(client, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    response = click(client, "mission", mission.id, wall[0].owid)
    assert response.status_code == 400
    assert "uid or a clickid" in response.text
    assert click(client, "mission", mission.id, wall[0].owid, uid="x" * 256).status_code == 400
    assert _count(engine, Click) == 0


def test_inactive_expired_and_capped_offers_are_410(client, game, wall, engine):
    inactive = make_mission(engine, game.game_id, isActive=False)
    expired = make_mission(
        engine, game.game_id, expirationDate=(datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    )
    capped = make_mission(engine, game.game_id, cap=1)
    with write_session(engine) as session:
        from models import Mission

        row = session.get(Mission, capped.id)
        row.conversions = 1
        session.add(row)
    for mission in (inactive, expired, capped):
        response = click(client, "mission", mission.id, wall[0].owid, uid="u")
        assert response.status_code == 410, mission.title
        assert "no longer available" in response.text or "limit" in response.text
    with write_session(engine) as session:
        offers.set_active(session=session, kind="mission", offer_id=inactive.id, active=True)
    assert click(client, "mission", inactive.id, wall[0].owid, uid="u").status_code == 302


def test_country_targeting_from_the_client_ip(client, game, wall, engine):
    only_us = make_mission(engine, game.game_id, geotargeting={"countriesInclude": ["US"]})
    not_de = make_mission(engine, game.game_id, geotargeting={"countriesExclude": ["de"]})
    assert (
        click(client, "mission", only_us.id, wall[0].owid, uid="u", ip="203.0.113.7").status_code
        == 302
    )
    refused = click(client, "mission", only_us.id, wall[0].owid, uid="u", ip="198.51.100.9")
    assert refused.status_code == 403 and "country" in refused.text
    # An address of no known country is outside an include list.
    assert (
        click(client, "mission", only_us.id, wall[0].owid, uid="u", ip="10.1.2.3").status_code
        == 403
    )
    assert (
        click(client, "mission", not_de.id, wall[0].owid, uid="u", ip="198.51.100.9").status_code
        == 403
    )
    assert (
        click(client, "mission", not_de.id, wall[0].owid, uid="u", ip="192.0.2.44").status_code
        == 302
    )


def test_operating_system_targeting_from_the_user_agent(client, game, wall, engine):
    mobile = make_mission(engine, game.game_id, operatingSystem=["android", "iOS"])
    assert (
        click(client, "mission", mobile.id, wall[0].owid, uid="u", ua=IPHONE_UA).status_code == 302
    )
    refused = click(client, "mission", mobile.id, wall[0].owid, uid="u", ua=WINDOWS_UA)
    assert refused.status_code == 403 and "device" in refused.text


def test_forwarded_for_is_ignored_from_an_untrusted_peer(engine, settings, box, game, wall):
    from fastapi.testclient import TestClient

    from api.app import create_api
    from tests.factories import FixedCountries

    only_us = make_mission(engine, game.game_id, geotargeting={"countriesInclude": ["US"]})
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    direct = TestClient(app, client=("198.51.100.9", 1234), follow_redirects=False)
    # The peer (DE) is not a trusted proxy, so its claim to be a US address is ignored.
    assert (
        click(direct, "mission", only_us.id, wall[0].owid, uid="u", ip="203.0.113.7").status_code
        == 403
    )


def test_quest_start_cap_limits_distinct_players(client, game, wall, engine):
    quest = make_quest(
        engine, game.game_id, [mission_data(), mission_data(title="Second")], startCap=2
    )
    assert click(client, "quest", quest.id, wall[0].owid, uid="p1").status_code == 302
    assert click(client, "quest", quest.id, wall[0].owid, uid="p2").status_code == 302
    assert click(client, "quest", quest.id, wall[0].owid, uid="p1").status_code == 302  # returning
    full = click(client, "quest", quest.id, wall[0].owid, uid="p3")
    assert full.status_code == 410
    with new_session(engine) as session:
        assert session.exec(select(func.count()).select_from(Progress)).one() == 4
