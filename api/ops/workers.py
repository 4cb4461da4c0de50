"""Which processes deliver the outboxes, and whether they still do: each process that runs
the dispatchers (`questwall serve`'s backend processes, `questwall worker`) writes its
heartbeat into `worker_heartbeat` from the dispatcher's periodic task, once a minute
(`PERIODIC_EVERY`), and sets questwall_worker_heartbeat_timestamp_seconds.

A row whose last beat is older than `STALE_AFTER` is a process that stopped, or hangs;
`questwall prune` forgets rows unseen for `FORGOTTEN_AFTER`.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlmodel import Session

from api.core.sql import dialect_insert
from api.ops.metrics import WORKER_HEARTBEAT
from models import WorkerHeartbeat
from models.types import utcnow

log = logging.getLogger("questwall.worker")

# Three beats missed: the process is gone, or its dispatcher hangs.
STALE_AFTER = timedelta(minutes=3)
FORGOTTEN_AFTER = timedelta(days=7)

_table = WorkerHeartbeat.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ThisProcess:
    """The process a heartbeat speaks for."""

    id: str  # "host:pid"
    kind: str  # "serve" or "worker"
    delivers: str  # "postbacks, webhooks, mail"
    started_at: datetime


def this_process(kind: str, delivers: Sequence[str]) -> ThisProcess:
    """This process, started now, as `kind`, delivering `delivers`."""
    return ThisProcess(
        id=f"{socket.gethostname()}:{os.getpid()}"[:200],
        kind=kind,
        delivers=", ".join(delivers)[:100],
        started_at=utcnow(),
    )


def record_heartbeat(engine: Engine, process: ThisProcess, *, now: datetime | None = None) -> None:
    """Insert the process's row, or move its last beat (and its start, when another process
    had the same host and pid before) to now: one statement, one short transaction."""
    insert = dialect_insert(engine.dialect.name, _table).values(
        id=process.id,
        kind=process.kind,
        delivers=process.delivers,
        started_at=process.started_at,
        last_beat_at=now or utcnow(),
    )
    statement = insert.on_conflict_do_update(
        index_elements=["id"],
        set_={c: insert.excluded[c] for c in ("kind", "delivers", "started_at", "last_beat_at")},
    )
    with engine.begin() as conn:
        conn.execute(statement)


def beat(engine: Engine, process: ThisProcess) -> None:
    """The process is alive and its dispatcher loops: the metric, then the row. A database
    that does not answer is logged and left for the next beat, never raised into the
    dispatcher."""
    WORKER_HEARTBEAT.set(time.time())
    try:
        record_heartbeat(engine, process)
    except Exception as exc:  # the heartbeat must never stop the deliveries
        log.warning("the worker's heartbeat was not recorded: %s", type(exc).__name__)


@dataclass(frozen=True)
class WorkerSeen:
    """A process as the System page lists it."""

    id: str
    kind: str
    delivers: str
    started_at: datetime
    last_beat_at: datetime
    stale: bool  # no beat for `STALE_AFTER`


def workers_seen(conn: Connection, *, now: datetime | None = None) -> list[WorkerSeen]:
    """Every process with a row, the latest beat first."""
    now = now or utcnow()
    rows = conn.execute(
        sa.select(_table).order_by(_table.c.last_beat_at.desc(), _table.c.id)
    ).mappings()
    return [
        WorkerSeen(
            id=row["id"],
            kind=row["kind"],
            delivers=row["delivers"],
            started_at=row["started_at"],
            last_beat_at=row["last_beat_at"],
            stale=now - row["last_beat_at"] > STALE_AFTER,
        )
        for row in rows
    ]


def forget_gone_workers(session: Session, now: datetime) -> int:
    """Delete the rows of processes unseen for `FORGOTTEN_AFTER`; returns how many."""
    gone = session.execute(sa.delete(_table).where(_table.c.last_beat_at < now - FORGOTTEN_AFTER))
    return int(gone.rowcount or 0)  # type: ignore[attr-defined]
