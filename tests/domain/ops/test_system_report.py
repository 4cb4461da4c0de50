"""What the staff's System page reads: the readiness checks, every outbox's backlog and
paused endpoints, the processes seen, the last prune and the schema against the code's
head; and what it still shows when the database does not answer."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa

from api.core.db import build_engine, schema_heads, write_session
from api.ops import PruneRecord, Readiness, record_heartbeat, record_prune, system_report
from api.ops.workers import ThisProcess
from models import Offerwall, Postback, PruneRun
from models.types import utcnow
from tests.factories import make_paying_offerwall, make_postback
from tests.live import free_port

NOW = utcnow().replace(microsecond=0)


def _report(engine, now=None):
    readiness = Readiness(engine)
    return system_report(engine, readiness, now=now)


def test_a_fresh_database_is_ready_at_head_with_nothing_waiting(engine):
    report = _report(engine)

    assert {(c.name, c.ok) for c in report.checks} == {
        ("database", True),
        ("schema", True),
        ("draining", True),
    }
    assert report.unread == ""
    assert report.schema_at == report.schema_head == tuple(sorted(schema_heads()))
    assert report.outboxes is not None
    assert set(report.outboxes.backlogs) == {"postback", "webhook", "mail", "alert"}
    assert all(
        b.due == b.scheduled == 0 and b.oldest is None for b in report.outboxes.backlogs.values()
    )
    assert report.outboxes.paused == {"postback": 0, "webhook": 0}
    assert report.workers == [] and report.last_prune is None


def test_the_backlog_the_oldest_pending_and_paused_endpoints_are_counted(engine, box):
    wall = make_paying_offerwall(engine, box, postback_url="https://pub.example/pb")
    due, later = make_postback(engine, box, wall), make_postback(engine, box, wall)
    made = NOW - timedelta(minutes=7)
    with write_session(engine) as session:
        table = Postback.__table__
        session.execute(
            sa.update(table)
            .where(table.c.id == due)
            .values(next_attempt_at=NOW - timedelta(seconds=1), created_at=made)
        )
        session.execute(
            sa.update(table)
            .where(table.c.id == later)
            .values(next_attempt_at=NOW + timedelta(hours=1))
        )
        paused = session.get(Offerwall, wall.id)
        paused.deliveries_paused_at = NOW
        session.add(paused)

    report = _report(engine, now=NOW)

    postbacks = report.outboxes.backlogs["postback"]
    assert (postbacks.due, postbacks.scheduled, postbacks.oldest) == (1, 1, made)
    assert report.outboxes.paused["postback"] == 1


def test_the_processes_seen_and_the_last_prune_are_read(engine):
    record_heartbeat(
        engine,
        ThisProcess(id="web-1:12", kind="serve", delivers="postbacks", started_at=NOW),
        now=NOW - timedelta(minutes=5),
    )
    with write_session(engine) as session:
        record_prune(
            session,
            PruneRecord(NOW - timedelta(days=1, seconds=9), NOW - timedelta(days=1), 3, 40, 2),
        )
        record_prune(session, PruneRecord(NOW - timedelta(seconds=5), NOW, 1, 20, 0))

    report = _report(engine, now=NOW)

    [worker] = report.workers
    assert (worker.id, worker.kind, worker.stale) == ("web-1:12", "serve", True)
    assert report.last_prune == PruneRecord(NOW - timedelta(seconds=5), NOW, 1, 20, 0)
    assert report.last_prune.removed == 21


def test_a_prune_forgets_the_runs_older_than_90_days(engine):
    with write_session(engine) as session:
        old = NOW - timedelta(days=91)
        record_prune(session, PruneRecord(old, old, 0, 0, 0))
    with write_session(engine) as session:
        record_prune(session, PruneRecord(NOW, NOW, 0, 0, 0))

    with engine.connect() as conn:
        kept = conn.execute(sa.select(PruneRun.__table__.c.finished_at)).scalars().all()
    assert kept == [NOW]


def test_a_database_that_does_not_answer_leaves_the_checks_that_say_why():
    gone = build_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing")
    try:
        report = _report(gone)
    finally:
        gone.dispose()

    checks = {c.name: c for c in report.checks}
    assert not checks["database"].ok and "OperationalError" in checks["database"].why
    assert not checks["schema"].ok
    assert report.outboxes is None and report.unread.startswith("OperationalError")
