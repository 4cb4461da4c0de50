"""The offerwall's test player (docs/publisher-integration.md#the-test-player): its clicks
and conversions carry the test flag, are not paid (no place under the cap, not in the
reports) and send no postback unless the publisher asks for test postbacks."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlmodel import select

from api.accounts import Forbidden
from api.core.db import new_session, write_session
from api.publishers import signature, wall_settings
from api.reports import figures as reports
from models import Click, Conversion, Mission, Role
from models.tracking import TEST_UID
from portal.reports.reports_state import report_line
from tests.api.steps import KILLS, at, start
from tests.factories import make_account, make_mission, make_offerwall
from tests.outbox import TEMPLATE, configure, postback_rows, run_once
from tests.receiver import running_receiver

BASE = "http://testserver"


@pytest.fixture
def pb_settings(api_settings):
    return api_settings.model_copy(update={"postback_allow_private": True})


def complete(client, signed, wall, mission_id: str, user: str, uid: str) -> None:
    """The player `uid` clicks the mission's link and completes it in the game."""
    start(client, signed, wall, mission_id, user, uid=uid)
    answer = signed.events(
        {"userId": user, "event": "GAME_END", "time": at(1), "traits": {"kills": 11}}
    )
    assert answer.status_code == 200, answer.text


def publisher_totals(engine, offerwall_id: str) -> tuple[int, int, str]:
    today = datetime.now(UTC).date()
    with new_session(engine) as session:
        report = reports.build_report(
            session=session,
            account=make_account(Role.PUBLISHER, offerwall_id=offerwall_id),
            dimension="day",
            first=today,
            last=today,
        )
    totals = report_line(report.totals, report.currency)
    return totals.clicks, totals.conversions, totals.payout


def test_the_test_players_conversion_is_flagged_unpaid_and_sends_no_postback(
    client, signed, game, wall, engine, box, pb_settings
):
    mission = make_mission(engine, game.game_id, cap=5, **KILLS)
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        complete(client, signed, wall, mission.id, "tester", TEST_UID)
        complete(client, signed, wall, mission.id, "p1", "pub-p1")
        assert run_once(engine, box, pb_settings) == 1
    # Only the real player's conversion reached the publisher.
    assert [dict(q)["uid"] for q in receiver.queries()] == ["pub-p1"]
    with new_session(engine) as session:
        conversions = session.exec(select(Conversion).order_by(Conversion.id)).all()
        clicks = session.exec(select(Click).order_by(Click.id)).all()
        counted = session.get(Mission, mission.id)
    assert [(c.test, c.status) for c in conversions] == [(True, "approved"), (False, "approved")]
    assert [(c.uid, c.test) for c in clicks] == [(TEST_UID, True), ("pub-p1", False)]
    assert [p.conversion_id for p in postback_rows(engine)] == [conversions[1].id]
    assert counted is not None and counted.conversions == 1  # the cap counts the real one
    # The publisher's figures are the real player's alone.
    assert publisher_totals(engine, wall[0].id) == (1, 1, "$1.50")


def test_a_publisher_who_asks_gets_the_test_players_postbacks(
    client, signed, game, wall, engine, box, pb_settings
):
    mission = make_mission(engine, game.game_id, **KILLS)
    publisher = make_account(Role.PUBLISHER, offerwall_id=wall[0].id)
    with write_session(engine) as session:
        assert wall_settings.set_test_postbacks(session=session, account=publisher, send=True)
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        complete(client, signed, wall, mission.id, "tester", TEST_UID)
        assert run_once(engine, box, pb_settings) == 1
    assert [dict(q)["uid"] for q in receiver.queries()] == [TEST_UID]
    assert publisher_totals(engine, wall[0].id) == (0, 0, "$0.00")


def test_only_the_offerwalls_publisher_or_staff_switch_test_postbacks(engine, box, wall):
    other, _ = make_offerwall(engine, box, name="Other")
    with write_session(engine) as session, pytest.raises(Forbidden):
        wall_settings.set_test_postbacks(
            session=session,
            account=make_account(Role.PUBLISHER, offerwall_id=other.id),
            requested=wall[0].id,
            send=True,
        )
    with write_session(engine) as session:
        staff = make_account(Role.STAFF)
        assert not wall_settings.set_test_postbacks(
            session=session, account=staff, requested=wall[0].id, send=False
        )


def test_the_test_players_wall_link_is_signed_and_marked(client, engine, box, wall):
    owall, key = wall
    with write_session(engine) as session:
        found = session.get(type(owall), owall.id)
        assert found is not None
        found.wall_require_signature = True
        session.add(found)
    with new_session(engine) as session:
        found = session.get(type(owall), owall.id)
        link = wall_settings.test_player_link(base_url=BASE, box=box, offerwall=found)
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert query == {
        "owid": owall.owid,
        "uid": TEST_UID,
        "sig": signature(key, owall.owid, TEST_UID),
    }
    page = client.get(link)
    assert page.status_code == 200, page.text
    assert 'id="test-player"' in page.text and "never paid" in page.text
    unsigned = client.get("/wall", params={"owid": owall.owid, "uid": TEST_UID})
    assert unsigned.status_code == 403
    # A real player's wall carries no such notice.
    player = client.get("/wall", params={"owid": owall.owid, "uid": "pub-p1", "sig": "x"})
    assert 'id="test-player"' not in player.text
