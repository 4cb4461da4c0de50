"""Reports for every role: staff see everything, designers their studio's offers,
publishers their offerwall (scoped on the server by api/services/reports.py)."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.services import reports
from api.services.access import Account
from models import Role
from portal.state.auth import AuthState, refusals

EVERYONE = (Role.STAFF, Role.DESIGNER, Role.PUBLISHER)


class ReportState(AuthState):
    dimension: str = "day"
    start: str = ""
    end: str = ""
    rows: list[reports.ReportRow] = []
    totals: reports.ReportRow | None = None
    chart: list[dict[str, float | str]] = []
    error: str = ""

    @rx.event
    @refusals()
    async def load(self):
        guard = await self._guard(*EVERYONE)
        if guard is not None:
            return guard
        return await self._build()

    async def _build(self, download: bool = False):
        self.error = ""
        dimension = self.dimension
        try:
            first, last = reports.parse_range(self.start, self.end)
        except reports.ReportError as exc:
            # The figures of the previous range would read as this range's: none are shown.
            self.error = str(exc)
            self.rows, self.totals, self.chart = [], None, []
            return None
        self.start, self.end = first.isoformat(), last.isoformat()

        def work(session: Session, account: Account) -> reports.Report:
            return reports.build_report(
                session=session, account=account, dimension=dimension, first=first, last=last
            )

        report = await self._run(work, *EVERYONE)
        if download:
            return rx.download(
                data=reports.to_csv(report, dimension),
                filename=f"questwall-{dimension}-{self.start}-{self.end}.csv",
            )
        self.rows, self.totals = report.rows, report.totals
        self.chart = [
            {
                "label": r.label,
                "clicks": r.clicks,
                "conversions": r.conversions,
                "payout": r.payout_usd,
            }
            for r in report.rows[:60]
        ]
        return None

    @rx.event
    @refusals()
    async def apply(self, form: dict[str, str]):
        self.dimension = form.get("dimension", "day") or "day"
        self.start, self.end = form.get("start", ""), form.get("end", "")
        return await self._build()

    @rx.event
    @refusals()
    async def export(self):
        return await self._build(download=True)
