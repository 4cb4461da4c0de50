"""What the staff's System page shows, read in one go: the readiness checks of the process
that serves the page, every outbox's backlog and paused endpoints, the processes that
deliver them and their last heartbeat, the last prune, and the schema's revision against
the code's head. What an on-call person opens first."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Engine

from api.ops.outboxes import Outboxes, read_outboxes
from api.ops.probes import Readiness, reason_of, schema_revisions
from api.ops.prune_runs import PruneRecord, last_prune
from api.ops.workers import WorkerSeen, workers_seen
from models.types import utcnow

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    """One readiness check: database, schema, redis (when REDIS_URL is set), draining."""

    name: str
    ok: bool
    why: str  # "" when ok


@dataclass(frozen=True)
class SystemReport:
    now: datetime
    checks: list[Check]
    # None, with `unread` saying why, when the database did not answer.
    outboxes: Outboxes | None = None
    workers: list[WorkerSeen] = field(default_factory=list)
    last_prune: PruneRecord | None = None
    schema_at: tuple[str, ...] = ()  # the database's revision(s)
    schema_head: tuple[str, ...] = ()  # the code's
    unread: str = ""


def system_report(
    engine: Engine, readiness: Readiness, *, now: datetime | None = None
) -> SystemReport:
    """The page's figures. A database that does not answer leaves the readiness checks
    (which say so) and `unread`; the rest is read in one connection."""
    now = now or utcnow()
    _ready, document = readiness.report()
    checks = [
        Check(name, check["status"] == "ok", check.get("error", ""))
        for name, check in document["checks"].items()
    ]
    try:
        with engine.connect() as conn:
            outboxes = read_outboxes(conn, now=now)
            workers = workers_seen(conn, now=now)
            prune = last_prune(conn)
            at, head = schema_revisions(conn)
    except Exception as exc:  # the page still shows the checks that say why
        log.warning("the system page could not read the database: %s", type(exc).__name__)
        return SystemReport(now, checks, unread=reason_of(exc))
    return SystemReport(
        now, checks, outboxes, workers, prune, tuple(sorted(at)), tuple(sorted(head))
    )
