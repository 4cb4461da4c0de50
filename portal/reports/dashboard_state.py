"""The staff dashboard: pending applications, today's figures, failing and paused postbacks,
and the alerts that failed, each sent again by staff only (checked in
`api/postbacks/alerts.py` too, whatever the browser sends)."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.postbacks import alerts
from api.reports import dashboard
from models import Role
from models.types import utcnow
from portal.components.formatting import exact, when
from portal.reports.reports_state import ReportLine, report_line
from portal.state.auth import AuthState, refusals


@dataclass(frozen=True)
class FailingLine:
    """`dashboard.FailingEndpoint` as the page lists it."""

    offerwall_id: str
    company: str
    retrying: int
    failed: int
    last_due: str  # when the latest of them was (or is) due, UTC


def failing_line(row: dashboard.FailingEndpoint) -> FailingLine:
    return FailingLine(row.offerwall_id, row.company, row.retrying, row.failed, when(row.last_due))


@dataclass(frozen=True)
class PausedLine:
    """`dashboard.PausedEndpoint` as the page lists it."""

    offerwall_id: str
    company: str
    paused_since: str  # UTC
    failures: int  # attempts failed in a row
    queued: int  # postbacks waiting


def paused_line(row: dashboard.PausedEndpoint) -> PausedLine:
    return PausedLine(
        row.offerwall_id, row.company, when(row.paused_since), row.failures, row.queued
    )


@dataclass(frozen=True)
class AlertAttemptLine:
    """`alerts.AttemptRow` as the page lists it."""

    started_at: str  # UTC, to the second
    answer: str  # "HTTP 500", or "No answer"
    duration: str  # "120 ms", or "not sent"
    reply: str  # the first KiB of the answer, or the error


@dataclass(frozen=True)
class AlertLine:
    """`alerts.FailingAlert` as the page lists it."""

    id: int
    event: str
    offerwall: str
    status: str  # "failed", or "queued" while retried
    created_at: str
    next_attempt_at: str  # "" unless queued
    last_error: str
    attempts: list[AlertAttemptLine]


def alert_line(row: alerts.FailingAlert) -> AlertLine:
    return AlertLine(
        row.id,
        row.event,
        row.offerwall,
        row.status,
        exact(row.created_at),
        exact(row.next_attempt_at),
        row.last_error,
        [
            AlertAttemptLine(
                exact(a.started_at),
                "No answer" if a.status_code is None else f"HTTP {a.status_code}",
                f"{a.duration_ms} ms" if a.sent else "not sent",
                a.error or a.answer,
            )
            for a in row.attempts
        ],
    )


class DashboardState(AuthState):
    pending: int = 0
    open_tickets: int = 0
    day: str = ""
    today: ReportLine | None = None
    failing: list[FailingLine] = []
    paused: list[PausedLine] = []
    alerts: list[AlertLine] = []
    failing_alerts: int = 0

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        def work(session: Session, account: Account) -> dashboard.Dashboard:
            return dashboard.staff_dashboard(session=session, account=account, now=utcnow())

        found = await self._run(work, Role.STAFF)
        self.pending, self.day = found.pending_applications, found.day
        self.today = report_line(found.today)
        self.failing = [failing_line(row) for row in found.failing]
        self.paused = [paused_line(row) for row in found.paused]
        self.open_tickets = found.open_tickets
        self.alerts = [alert_line(row) for row in found.alerts]
        self.failing_alerts = found.failing_alerts

    @rx.event
    @refusals()
    async def send_alert_again(self, alert_id: int):
        """One more attempt of a failed alert, now (staff only: `_run` and the service both
        check)."""
        chosen = alert_id if isinstance(alert_id, int) else 0  # no alert has id 0
        await self._run(
            lambda s, a: alerts.send_again(session=s, account=a, alert_id=chosen, now=utcnow()),
            Role.STAFF,
            write=True,
        )
        await self._fetch()
        return rx.toast.success("The alert is queued to be sent again now.")
