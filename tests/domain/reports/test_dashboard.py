"""The staff dashboard (`api/reports/dashboard.py`): pending applications, today's
figures (the reports' own for the UTC day), the offerwalls whose postbacks are failing and
those whose deliveries are paused, and the alerts the webhook refused (SQLite and
PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Forbidden
from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.postbacks import AlertSender
from api.postbacks import endpoint as endpoints
from api.reports import dashboard
from api.reports import figures as reports
from models import Offerwall, PostbackAttempt, Role
from models.tables import postback as _postback
from models.types import utcnow
from portal.reports.dashboard_state import alert_line, failing_line, paused_line
from portal.reports.reports_state import report_line
from tests.factories import (
    make_account,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
)
from tests.receiver import running_receiver

STAFF = make_account(Role.STAFF)


def _dashboard(engine: Engine, **kwargs) -> dashboard.Dashboard:
    with new_session(engine) as session:
        return dashboard.staff_dashboard(
            session=session, account=kwargs.get("account", STAFF), now=utcnow()
        )


def _set(engine: Engine, postback_id: int, **values) -> None:
    if not values:
        return
    with write_session(engine) as session:
        session.execute(sa.update(_postback).where(_postback.c.id == postback_id).values(**values))


def test_pending_applications_are_counted(engine, box: SecretBox):
    make_offerwall(engine, box, name="Waiting one", approve=False)
    make_offerwall(engine, box, name="Waiting two", approve=False)
    make_offerwall(engine, box, name="Approved")
    assert _dashboard(engine).pending_applications == 2


def test_todays_figures_are_the_reports_figures_of_the_utc_day(engine, box):
    wall, _ = make_offerwall(engine, box)
    mission = make_mission(engine, make_game(engine, box).game_id).id
    make_conversion(engine, mission_id=mission, offerwall=wall, uid="p1")
    make_click(engine, offer_id=mission, offerwall=wall, uid="p2")
    board = _dashboard(engine)
    today = utcnow().date()
    assert board.day == today.isoformat()
    shown = report_line(board.today)
    assert (shown.clicks, shown.conversions, shown.payout) == (2, 1, "$1.50")
    with new_session(engine) as session:
        report = reports.build_report(
            session=session, account=STAFF, dimension="offer", first=today, last=today
        )
    assert board.today == report.totals


def test_todays_reversal_of_todays_conversion_shows_as_reversed_and_net(engine, box):
    wall, _ = make_offerwall(engine, box)
    mission = make_mission(engine, make_game(engine, box).game_id).id
    for uid in ("p1", "p2"):
        make_conversion(engine, mission_id=mission, offerwall=wall, uid=uid)
    with write_session(engine) as session:
        [row] = conversions.search(session=session, studio_id=None, text="p1").rows
        conversions.reverse(
            session=session,
            transaction_id=row.transaction_id,
            reason="a cheater",
            actor="staff@example.com",
            studio_id=None,
        )
    today = report_line(_dashboard(engine).today)
    assert (today.conversions, today.payout, today.reversed) == (2, "$3.00", 1)
    assert (today.reversed_payout, today.net_payout) == ("$1.50", "$1.50")


def test_failing_endpoints_are_offerwalls_with_retrying_or_recently_failed_postbacks(engine, box):
    mission = make_mission(engine, make_game(engine, box).game_id).id
    now = utcnow()
    walls = {
        name: make_offerwall(engine, box, name=name)[0]
        for name in ("Retrying", "Failed", "Healthy", "Failed long ago", "Both")
    }

    def postback(name: str, uid: str, **values) -> None:
        _set(
            engine,
            make_conversion(engine, mission_id=mission, offerwall=walls[name], uid=uid),
            **values,
        )

    postback("Retrying", "r1", attempts=2, next_attempt_at=now + timedelta(minutes=5))
    postback("Retrying", "r2")  # not tried yet: no failure so far
    postback("Failed", "f1", status="failed", attempts=8, next_attempt_at=now - timedelta(hours=1))
    postback("Healthy", "h1", status="delivered", attempts=1)
    postback(
        "Failed long ago",
        "l1",
        status="failed",
        attempts=8,
        next_attempt_at=now - timedelta(days=3),
    )
    postback("Both", "b1", attempts=1, next_attempt_at=now + timedelta(seconds=5))
    postback("Both", "b2", status="failed", attempts=8, next_attempt_at=now - timedelta(hours=2))
    failing = _dashboard(engine).failing
    assert [(f.company, f.retrying, f.failed) for f in failing] == [
        ("Both", 1, 1),
        ("Failed", 0, 1),
        ("Retrying", 1, 0),
    ]
    assert failing[0].offerwall_id == walls["Both"].id
    assert failing_line(failing[0]).last_due.endswith(" UTC")


def test_paused_endpoints_are_listed_longest_paused_first_with_their_queue(engine, box):
    mission = make_mission(engine, make_game(engine, box).game_id).id
    now = utcnow()
    walls = {
        name: make_offerwall(engine, box, name=name)[0]
        for name in ("Paused today", "Paused yesterday", "Flowing")
    }
    for name, uid in (("Paused today", "t1"), ("Paused today", "t2"), ("Flowing", "f1")):
        make_conversion(engine, mission_id=mission, offerwall=walls[name], uid=uid)
    with write_session(engine) as session:
        for name, ago in (
            ("Paused today", timedelta(hours=1)),
            ("Paused yesterday", timedelta(days=1)),
        ):
            wall = session.get(Offerwall, walls[name].id)
            wall.deliveries_paused_at, wall.consecutive_failures = now - ago, 7
    paused = _dashboard(engine).paused
    assert [(p.company, p.failures, p.queued) for p in paused] == [
        ("Paused yesterday", 7, 0),
        ("Paused today", 7, 2),
    ]
    assert paused[1].offerwall_id == walls["Paused today"].id
    assert paused_line(paused[1]).paused_since.endswith(" UTC")


def test_a_paused_endpoints_queue_is_what_its_banner_says_waits(engine, box):
    """Queued counts what a resume releases: pending postbacks and those that ran out of
    attempts during the outage, not those given up before it began."""
    wall, _ = make_offerwall(engine, box, name="Paused")
    mission = make_mission(engine, make_game(engine, box).game_id).id
    _pending, during, before = (
        make_conversion(engine, mission_id=mission, offerwall=wall, uid=uid)
        for uid in ("p1", "p2", "p3")
    )
    now = utcnow()
    since = now - timedelta(hours=30)
    for postback_id, tried in (
        (during, since + timedelta(hours=1)),
        (before, since - timedelta(days=2)),
    ):
        _set(engine, postback_id, status="failed")
        with write_session(engine) as session:
            session.add(
                PostbackAttempt(
                    postback_id=postback_id,
                    started_at=tried,
                    duration_ms=5,
                    status_code=500,
                    sent=True,
                )
            )
    with write_session(engine) as session:
        paused = session.get(Offerwall, wall.id)
        paused.deliveries_paused_at, paused.failing_since = now, since
    with new_session(engine) as session:
        banner = endpoints.waiting(session, session.get(Offerwall, wall.id))
    assert banner == 2
    assert [p.queued for p in _dashboard(engine).paused] == [banner]


def test_alerts_the_webhook_refused_are_listed_with_their_attempts(engine, box, settings):
    wall, _ = make_offerwall(engine, box, name="Paused Wall")
    alerting = settings.model_copy(
        update={
            "postback_allow_private": True,
            "postback_pause_after_seconds": 0,
            "postback_pause_min_failures": 1,
        }
    )
    with running_receiver() as receiver:
        receiver.post_statuses, receiver.post_replies = [500], [b"webhook down"]
        alerting = alerting.model_copy(update={"alert_webhook_url": receiver.url})
        with write_session(engine) as session:
            failed = endpoints.Outcome(wall.id, utcnow(), True, "HTTP 500")
            endpoints.record_outcomes(session, [failed], alerting, utcnow())
        assert AlertSender(engine=engine, settings=alerting).run_once() == 1
    found = _dashboard(engine)
    assert found.failing_alerts == 1
    [line] = [alert_line(row) for row in found.alerts]
    assert (line.event, line.offerwall, line.status, line.last_error) == (
        "endpoint.paused",
        "Paused Wall",
        "queued",
        "HTTP 500",
    )
    [attempt] = line.attempts
    assert (attempt.answer, attempt.reply) == ("HTTP 500", "webhook down")
    assert attempt.duration.endswith(" ms") and line.next_attempt_at.endswith(" UTC")


def test_the_dashboard_is_for_staff_only(engine):
    for role in (Role.DESIGNER, Role.PUBLISHER):
        with pytest.raises(Forbidden):
            _dashboard(engine, account=make_account(role))
