"""The staff dashboard: pending applications, today's figures, failing and paused postbacks."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.accounts.access import Account
from api.reports import dashboard
from api.reports import figures as reports
from models import Role
from models.types import utcnow
from portal.state.auth import AuthState, refusals


class DashboardState(AuthState):
    pending: int = 0
    open_tickets: int = 0
    day: str = ""
    today: reports.ReportRow | None = None
    failing: list[dashboard.FailingEndpoint] = []
    paused: list[dashboard.PausedEndpoint] = []

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        def work(session: Session, account: Account) -> dashboard.Dashboard:
            return dashboard.staff_dashboard(session=session, account=account, now=utcnow())

        found = await self._run(work, Role.STAFF)
        self.pending, self.day, self.today = found.pending_applications, found.day, found.today
        self.failing, self.paused = found.failing, found.paused
        self.open_tickets = found.open_tickets
