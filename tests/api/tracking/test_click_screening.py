"""Click screening and refused clicks (docs/fraud.md): every refused click is recorded with
its reason; clicks past the per-IP and per-player limits are refused with a neutral page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import col, func, select

from api.app import create_api
from api.core.config import Settings
from api.core.db import new_session, write_session
from api.core.net import parse_networks
from api.tracking.screening import MESSAGE, ClickScreen, MemoryCounts, Networks, SharedCounts
from models import Click, Mission, RefusalReason, RefusedClick
from tests.api.conftest import PROXY
from tests.api.tracking_helpers import click
from tests.factories import (
    ANDROID_UA,
    IPHONE_UA,
    WINDOWS_UA,
    FixedCountries,
    make_mission,
    make_offerwall,
)

DEFAULTS = {
    name: Settings.model_fields[name].default
    for name in ("clicks_per_ip_minute", "clicks_per_uid_minute", "refuse_scripted_agents")
}


@pytest.fixture
def screened(engine, api_settings, box) -> TestClient:
    """The API with the click screening at its defaults."""
    settings = api_settings.model_copy(update=DEFAULTS)
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    return TestClient(app, client=(PROXY, 50000), follow_redirects=False)


def _refused(engine) -> list[RefusedClick]:
    with new_session(engine) as session:
        return list(session.exec(select(RefusedClick).order_by(col(RefusedClick.id))))


def _clicks(engine) -> int:
    with new_session(engine) as session:
        return session.exec(select(func.count()).select_from(Click)).one()


def _frozen_screen(per_ip: int, per_uid: int) -> ClickScreen:
    """The configured screen with time standing still: no allowance refills mid-test."""
    return ClickScreen(per_ip, per_uid, MemoryCounts(clock=lambda: 0.0))


def test_fifty_clicks_from_one_ip_in_a_minute_are_refused_past_the_threshold(
    screened, game, wall, engine
):
    assert DEFAULTS == {
        "clicks_per_ip_minute": 30,
        "clicks_per_uid_minute": 10,
        "refuse_scripted_agents": True,
    }
    client = screened
    client.app.state.click_screen = _frozen_screen(30, 10)
    mission = make_mission(engine, game.game_id)
    answers = [
        click(client, "mission", mission.id, wall[0].owid, uid=f"p{i}", ip="203.0.113.7")
        for i in range(50)
    ]
    assert [a.status_code for a in answers] == [302] * 30 + [403] * 20
    assert MESSAGE in answers[-1].text and "IP" not in answers[-1].text  # neutral
    # Another address is not held back by this one.
    other = click(client, "mission", mission.id, wall[0].owid, uid="p-other", ip="192.0.2.44")
    assert other.status_code == 302
    assert _clicks(engine) == 31
    refused = _refused(engine)
    assert len(refused) == 20
    assert {r.reason for r in refused} == {RefusalReason.IP_RATE}
    assert [r.uid for r in refused] == [f"p{i}" for i in range(30, 50)]
    first = refused[0]
    assert (first.ip, first.country, first.offer_id, first.kind) == (
        "203.0.113.7",
        "US",
        mission.id,
        "mission",
    )
    assert (first.owid, first.offerwall_id) == (wall[0].owid, wall[0].id)


def test_one_player_clicking_too_fast_is_refused(screened, game, wall, engine, box):
    client = screened
    missions = [make_mission(engine, game.game_id) for _ in range(3)]
    answers = [
        click(client, "mission", missions[i % 3].id, wall[0].owid, uid="fast", ip=f"192.0.2.{i}")
        for i in range(12)
    ]
    # The default: 10 a minute for one player of one offerwall, from any address.
    assert [a.status_code for a in answers] == [302] * 10 + [403] * 2
    assert {r.reason for r in _refused(engine)} == {RefusalReason.UID_RATE}
    # The same uid at another offerwall is another player.
    other, _ = make_offerwall(engine, box, name="Other")
    assert click(client, "mission", missions[0].id, other.owid, uid="fast").status_code == 302


def test_screening_off_lets_every_click_through(client, api_settings, game, wall, engine):
    assert (api_settings.clicks_per_ip_minute, api_settings.clicks_per_uid_minute) == (0, 0)
    mission = make_mission(engine, game.game_id)
    for _ in range(40):
        assert click(client, "mission", mission.id, wall[0].owid, uid="same").status_code == 302
    assert _refused(engine) == []


def test_the_limits_are_shared_through_redis(
    engine, api_settings, box, game, wall, redis_url, redis_prefix
):
    """Two API processes (two apps) on one Redis count one address's clicks together."""
    settings = api_settings.model_copy(
        update={**DEFAULTS, "redis_url": redis_url, "redis_key_prefix": redis_prefix}
    )
    clients = [
        TestClient(
            create_api(engine=engine, settings=settings, box=box, countries=FixedCountries()),
            client=(PROXY, 50000),
            follow_redirects=False,
        )
        for _ in range(2)
    ]
    mission = make_mission(engine, game.game_id)
    statuses = [
        click(clients[i % 2], "mission", mission.id, wall[0].owid, uid=f"r{i}").status_code
        for i in range(40)
    ]
    # 30 a minute in a sliding window: one more may pass if the test crosses a window edge.
    assert statuses.count(302) in (30, 31) and statuses[:30] == [302] * 30
    assert statuses.count(403) == len(_refused(engine))


def test_every_refused_click_is_recorded_with_its_reason(client, game, wall, engine, box):
    owid = wall[0].owid
    pending, _ = make_offerwall(engine, box, name="Pending", approve=False)
    plain = make_mission(engine, game.game_id)
    only_us = make_mission(engine, game.game_id, geotargeting={"countriesInclude": ["US"]})
    mobile = make_mission(engine, game.game_id, operatingSystem=["android", "iOS"])
    inactive = make_mission(engine, game.game_id, isActive=False)
    expired = make_mission(
        engine, game.game_id, expirationDate=(datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    )
    capped = make_mission(engine, game.game_id, cap=1)
    with write_session(engine) as session:
        row = session.get(Mission, capped.id)
        row.conversions = 1
        session.add(row)
    cases = [
        (("mission", plain.id, "ow-nope"), {"uid": "a"}, RefusalReason.UNKNOWN_OFFERWALL, None),
        # A pending offerwall has no owid yet: its link names none.
        (("mission", plain.id, pending.owid), {"uid": "b"}, RefusalReason.UNKNOWN_OFFERWALL, None),
        (("mission", "no-such-offer", owid), {"uid": "c"}, RefusalReason.UNKNOWN_OFFER, 1),
        (("quest", "no-such-quest", owid), {"uid": "d"}, RefusalReason.UNKNOWN_OFFER, 1),
        (("mission", plain.id, owid), {}, RefusalReason.INVALID_LINK, 1),
        (("mission", plain.id, owid), {"uid": "e" * 256}, RefusalReason.INVALID_LINK, 1),
        (("mission", plain.id, owid), {"uid": "f\x00g"}, RefusalReason.INVALID_LINK, 1),
        (("mission", inactive.id, owid), {"uid": "h"}, RefusalReason.ENDED, 1),
        (("mission", expired.id, owid), {"uid": "i"}, RefusalReason.ENDED, 1),
        (("mission", capped.id, owid), {"uid": "j"}, RefusalReason.CAPPED, 1),
        (
            ("mission", only_us.id, owid),
            {"uid": "k", "ip": "198.51.100.9"},
            RefusalReason.COUNTRY,
            1,
        ),
        (("mission", mobile.id, owid), {"uid": "l", "ua": WINDOWS_UA}, RefusalReason.DEVICE, 1),
    ]
    for (kind, offer_id, ow), params, _, _ in cases:
        answer = click(client, kind, offer_id, ow, **params)
        assert answer.status_code in (400, 403, 404, 410), (offer_id, params)
    assert _clicks(engine) == 0
    refused = _refused(engine)
    assert [r.reason for r in refused] == [reason for *_, reason, _ in cases]
    for r, ((kind, offer_id, ow), _, _, known) in zip(refused, cases, strict=True):
        assert (r.kind, r.offer_id, r.owid) == (kind, offer_id, ow)
        assert r.offerwall_id == (None if known is None else wall[0].id)
    assert refused[5].uid == "e" * 255  # kept, cut to the column
    assert refused[6].uid == "f\ufffdg"  # the NUL made visible
    assert (refused[10].country, refused[11].os) == ("DE", "Windows")


@pytest.mark.parametrize("uid", ["", " ", "ü" * 300])
def test_odd_links_are_recorded_and_never_a_server_error(client, game, wall, engine, uid):
    mission = make_mission(engine, game.game_id)
    answer = click(client, "mission", mission.id, "\u202e" * 300, uid=uid)
    assert answer.status_code in (400, 404)
    [row] = _refused(engine)
    assert row.owid == "\u202e" * 255 and row.offerwall_id is None


def test_the_shared_window_slides_over_the_previous_minute(redis_url, redis_prefix):
    import redis

    now = [6000.0]  # the start of a minute
    counts = SharedCounts(redis.Redis.from_url(redis_url), redis_prefix, clock=lambda: now[0])
    first = [counts.over([("ip:a", 30)])[0] for _ in range(31)]
    assert first == [False] * 30 + [True]
    # Half the next minute later, half of the previous minute's 31 clicks still count.
    now[0] += 90
    second = [counts.over([("ip:a", 30)])[0] for _ in range(15)]
    assert second == [False] * 14 + [True]
    # Keys are counted apart, in one call.
    assert counts.over([("ip:b", 1), ("uid:b", 1)]) == [False, False]
    assert counts.over([("ip:b", 1), ("uid:c", 1)]) == [True, False]


def test_without_redis_the_clicks_pass_and_a_warning_is_logged(client, game, wall, engine, caplog):
    import redis

    unreachable = redis.Redis.from_url("redis://:secret-pw@127.0.0.1:1/0", socket_timeout=0.5)
    client.app.state.click_screen = ClickScreen(1, 1, SharedCounts(unreachable, "qw"))
    mission = make_mission(engine, game.game_id)
    with caplog.at_level("WARNING"):
        for _ in range(3):
            assert click(client, "mission", mission.id, wall[0].owid, uid="x").status_code == 302
    warnings = [r.getMessage() for r in caplog.records if "click screening" in r.getMessage()]
    assert len(warnings) == 1 and "secret-pw" not in warnings[0]


SCRIPTED = [
    "curl/8.5.0",
    "python-requests/2.31.0",
    "Go-http-client/1.1",
    "Wget/1.21.4",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "Scrapy/2.11 (+https://scrapy.org)",
    "",
]


def test_scripts_crawlers_and_headless_browsers_are_refused(screened, game, wall, engine):
    mission = make_mission(engine, game.game_id)
    for n, agent in enumerate(SCRIPTED):
        answer = click(screened, "mission", mission.id, wall[0].owid, uid=f"s{n}", ua=agent)
        assert answer.status_code == 403 and MESSAGE in answer.text, agent
    for n, agent in enumerate((ANDROID_UA, IPHONE_UA, WINDOWS_UA)):
        answer = click(screened, "mission", mission.id, wall[0].owid, uid=f"b{n}", ua=agent)
        assert answer.status_code == 302, agent
    refused = _refused(engine)
    assert [r.reason for r in refused] == [RefusalReason.SCRIPTED_AGENT] * len(SCRIPTED)
    assert refused[0].user_agent == "curl/8.5.0"


def test_blocked_networks_are_refused(engine, api_settings, box, game, wall):
    settings = api_settings.model_copy(
        update={"blocked_networks": "198.18.0.0/15, 2001:db8::/32,192.0.2.7"}
    )
    app = create_api(engine=engine, settings=settings, box=box, countries=FixedCountries())
    client = TestClient(app, client=(PROXY, 50000), follow_redirects=False)
    mission = make_mission(engine, game.game_id)
    for ip, status in (
        ("198.19.4.5", 403),
        ("198.20.0.1", 302),
        ("2001:db8::1", 403),
        ("2001:db9::1", 302),
        ("192.0.2.7", 403),
        ("192.0.2.8", 302),
    ):
        assert click(client, "mission", mission.id, wall[0].owid, uid=ip, ip=ip).status_code == (
            status
        ), ip
    assert {r.reason for r in _refused(engine)} == {RefusalReason.BLOCKED_NETWORK}
    assert [r.ip for r in _refused(engine)] == ["198.19.4.5", "2001:db8::1", "192.0.2.7"]


def test_network_sets_merge_nested_and_adjacent_ranges():
    nets = Networks(
        parse_networks("10.0.0.0/8,10.1.0.0/16,11.0.0.0/8,192.0.2.0/25,192.0.2.128/25,::1/128")
    )
    inside = ["10.0.0.0", "10.255.255.255", "11.2.3.4", "192.0.2.200", "::1"]
    outside = ["9.255.255.255", "12.0.0.0", "192.0.3.0", "::2", "not an address", ""]
    assert all(ip in nets for ip in inside)
    assert not any(ip in nets for ip in outside)
    assert not Networks(()) and "10.0.0.1" not in Networks(())


def test_a_bad_blocked_network_is_refused_at_start():
    with pytest.raises(ValueError, match="list IP addresses or networks"):
        Settings(QUESTWALL_BLOCKED_NETWORKS="10.0.0.0/8,not-a-network", SECRET_KEY="x" * 40)
