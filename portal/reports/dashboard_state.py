"""The staff dashboard: pending applications, today's figures, failing and paused postbacks."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.reports import dashboard
from models import Role
from models.types import utcnow
from portal.components.formatting import when
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


class DashboardState(AuthState):
    pending: int = 0
    open_tickets: int = 0
    day: str = ""
    today: ReportLine | None = None
    failing: list[FailingLine] = []
    paused: list[PausedLine] = []

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
