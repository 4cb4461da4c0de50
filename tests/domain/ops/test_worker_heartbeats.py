"""Each process that runs the dispatchers writes its heartbeat into one row of its own; the
System page lists them, a process silent for three minutes flagged stale, and `questwall
prune` forgets those unseen for a week."""

from __future__ import annotations

import logging
from datetime import timedelta

import sqlalchemy as sa

from api.core.db import build_engine, write_session
from api.ops import (
    ThisProcess,
    beat,
    forget_gone_workers,
    record_heartbeat,
    this_process,
    workers_seen,
)
from models import WorkerHeartbeat
from models.types import utcnow
from tests.live import free_port

NOW = utcnow().replace(microsecond=0)


def _process(name: str, kind: str = "worker", started=NOW) -> ThisProcess:
    return ThisProcess(id=name, kind=kind, delivers="postbacks, webhooks", started_at=started)


def _count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(sa.func.count()).select_from(WorkerHeartbeat)).scalar_one()


def test_a_beat_inserts_the_process_then_moves_its_last_beat(engine):
    process = _process("host-a:41")

    record_heartbeat(engine, process, now=NOW)
    record_heartbeat(engine, process, now=NOW + timedelta(minutes=1))

    with engine.connect() as conn:
        [seen] = workers_seen(conn, now=NOW + timedelta(minutes=1))
    assert (seen.id, seen.kind, seen.delivers) == ("host-a:41", "worker", "postbacks, webhooks")
    assert seen.started_at == NOW
    assert seen.last_beat_at == NOW + timedelta(minutes=1)
    assert not seen.stale


def test_a_new_process_with_the_same_host_and_pid_takes_the_row_over(engine):
    record_heartbeat(engine, _process("host-a:7", "worker"), now=NOW)
    later = NOW + timedelta(hours=1)

    record_heartbeat(engine, _process("host-a:7", "serve", started=later), now=later)

    with engine.connect() as conn:
        [seen] = workers_seen(conn, now=later)
    assert (seen.kind, seen.started_at, seen.last_beat_at) == ("serve", later, later)


def test_processes_are_listed_latest_beat_first_and_silent_ones_are_stale(engine):
    record_heartbeat(engine, _process("quiet:1"), now=NOW - timedelta(minutes=3, seconds=1))
    record_heartbeat(engine, _process("busy:2", "serve"), now=NOW - timedelta(seconds=30))

    with engine.connect() as conn:
        seen = workers_seen(conn, now=NOW)

    assert [(w.id, w.stale) for w in seen] == [("busy:2", False), ("quiet:1", True)]


def test_this_process_is_named_by_its_host_and_pid(engine):
    import os
    import socket

    process = this_process("serve", ["postbacks", "webhooks", "mail"])

    assert process.id == f"{socket.gethostname()}:{os.getpid()}"
    assert process.delivers == "postbacks, webhooks, mail"
    beat(engine, process)
    assert _count(engine) == 1


def test_a_beat_the_database_refuses_is_logged_and_never_raised(caplog):
    gone = build_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing")
    try:
        with caplog.at_level(logging.WARNING, logger="questwall.worker"):
            beat(gone, _process("host-a:9"))
    finally:
        gone.dispose()
    assert "heartbeat was not recorded: OperationalError" in caplog.text


def test_prune_forgets_processes_unseen_for_a_week(engine):
    record_heartbeat(engine, _process("gone:1"), now=NOW - timedelta(days=7, minutes=1))
    record_heartbeat(engine, _process("stale:2"), now=NOW - timedelta(days=6))

    with write_session(engine) as session:
        forgotten = forget_gone_workers(session, NOW)

    assert forgotten == 1
    with engine.connect() as conn:
        assert [w.id for w in workers_seen(conn, now=NOW)] == ["stale:2"]


def test_the_dispatchers_periodic_task_beats_before_its_work(engine):
    from api.worker import alive_then

    done = []
    periodic = alive_then(lambda: done.append(_count(engine)), engine=engine, kind="serve")

    periodic()

    assert done == [1]
    with engine.connect() as conn:
        [seen] = workers_seen(conn)
    assert seen.kind == "serve" and seen.delivers.startswith("postbacks, webhooks")
