"""Staff's System page: the readiness of each dependency, every outbox's backlog, the
processes that deliver them and their last heartbeat, the last prune and the schema's
revision, read when the page opens and on Refresh (staff only, checked on the server by
`_run` in each handler)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import reflex as rx

from api.ops import STALE_AFTER, SystemReport, WorkerSeen, system_report
from models import Role
from portal.backend import engine, readiness
from portal.components.formatting import age, ago, exact, when
from portal.state.auth import AuthState, refusals

# What each readiness check means when it passes, in the page's words.
CHECKS = {
    "database": "Database answers",
    "schema": "Schema at the migrations' head",
    "redis": "Redis answers",
    "draining": "This process is not stopping",
}
OUTBOXES = {"postback": "Postbacks", "webhook": "Webhooks", "mail": "Mail", "alert": "Alerts"}
# A daily cron's prune that has not run for this long is flagged.
PRUNE_LATE = timedelta(days=2)
STALE_MINUTES = int(STALE_AFTER.total_seconds() // 60)


@dataclass(frozen=True)
class CheckLine:
    name: str
    ok: bool
    why: str


@dataclass(frozen=True)
class OutboxLine:
    kind: str
    due: int
    scheduled: int
    oldest: str  # the oldest waiting message's age, "" when none waits


@dataclass(frozen=True)
class WorkerLine:
    id: str  # "host:pid"
    kind: str
    delivers: str
    started: str
    last_beat: str  # "40 s ago"
    last_beat_at: str  # exact, UTC
    stale: bool


def _outbox_lines(report: SystemReport) -> list[OutboxLine]:
    if report.outboxes is None:
        return []
    return [
        OutboxLine(
            OUTBOXES.get(kind, kind),
            backlog.due,
            backlog.scheduled,
            age(report.now - backlog.oldest) if backlog.oldest else "",
        )
        for kind, backlog in report.outboxes.backlogs.items()
    ]


def _worker_line(now: datetime, w: WorkerSeen) -> WorkerLine:
    return WorkerLine(
        w.id,
        w.kind,
        w.delivers,
        when(w.started_at),
        ago(w.last_beat_at, now),
        exact(w.last_beat_at),
        w.stale,
    )


class SystemState(AuthState):
    checks: list[CheckLine] = []
    outboxes: list[OutboxLine] = []
    # Endpoints whose deliveries are paused: offerwalls' postback URLs, games' webhooks.
    paused_postbacks: int = 0
    paused_webhooks: int = 0
    workers: list[WorkerLine] = []
    prune_ran: str = ""  # "3 h ago (2026-11-29 14:03 UTC)", "" when no prune ran
    prune_removed: str = ""
    prune_late: bool = False
    schema_at: str = ""
    schema_head: str = ""
    unread: str = ""  # why the database could not be read, "" when it was
    read_at: str = ""

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_page(Role.STAFF)

    @rx.event
    @refusals()
    async def refresh(self):
        await self._fetch()

    async def _fetch(self) -> None:
        report = await self._run(lambda _s, _a: system_report(engine(), readiness()), Role.STAFF)
        self._show(report)

    def _show(self, report: SystemReport) -> None:
        now = report.now
        self.checks = [CheckLine(CHECKS.get(c.name, c.name), c.ok, c.why) for c in report.checks]
        self.outboxes = _outbox_lines(report)
        paused = report.outboxes.paused if report.outboxes else {}
        self.paused_postbacks = paused.get("postback", 0)
        self.paused_webhooks = paused.get("webhook", 0)
        self.workers = [_worker_line(now, w) for w in report.workers]
        prune = report.last_prune
        self.prune_ran = (
            f"{ago(prune.finished_at, now)} ({when(prune.finished_at)})" if prune else ""
        )
        self.prune_removed = (
            f"{prune.removed:,} rows: {prune.records:,} expired records, {prune.events:,} "
            f"events, {prune.refused:,} refused clicks and set-aside events"
            if prune
            else ""
        )
        self.prune_late = not report.unread and (
            prune is None or now - prune.finished_at > PRUNE_LATE
        )
        self.schema_at = ", ".join(report.schema_at) or ("" if report.unread else "no migration")
        self.schema_head = ", ".join(report.schema_head)
        self.unread = report.unread
        self.read_at = exact(now)
