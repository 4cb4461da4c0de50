"""Reports → Margin, staff only: revenue, payout and margin per day, game, mission,
offerwall or country (`api/reports/margin.py`), its totals, a date range and the CSV."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.core.money import format_money
from api.reports import margin, ranges
from api.reports.csv_export import margin_csv
from api.reports.figures import Choice
from models import Role
from portal.components.formatting import usd
from portal.state.auth import AuthState, refusals

# The margin form's id: a changed grouping submits it with the dates.
FORM_ID = "margin-form"
SUBMIT_FORM = f"document.getElementById('{FORM_ID}').requestSubmit()"
NOTHING = "–"


@dataclass(frozen=True)
class MarginLine:
    """A margin row as the page shows it: amounts in dollars and cents."""

    key: str
    label: str
    conversions: int
    held: int
    revenue: str
    payout: str
    margin: str
    share: str  # "28.1%", "–" without revenue
    negative: bool  # a margin below zero, shown in red


def margin_line(row: margin.MarginRow) -> MarginLine:
    percent = row.margin_percent
    return MarginLine(
        key=row.key,
        label=row.label,
        conversions=row.conversions,
        held=row.held,
        revenue=usd(row.revenue_micros),
        payout=usd(row.payout_micros),
        margin=usd(row.margin_micros),
        share=NOTHING if percent is None else f"{format_money(percent, decimals=1, plain=True)}%",
        negative=row.margin_micros < 0,
    )


class MarginState(AuthState):
    by: str = "day"
    groupings: list[Choice] = [Choice(b, margin.BY_LABELS[b]) for b in margin.BY]
    start: str = ""
    end: str = ""
    rows: list[MarginLine] = []
    totals: MarginLine | None = None
    errors: dict[str, str] = {}

    @rx.event
    @refusals(into="errors")
    async def load(self):
        guard = await self._guard(Role.STAFF)
        if guard is not None:
            return guard
        preset = self.router.url.query_parameters.get("preset", "")
        if preset in ranges.PRESETS:
            self._set_range(*ranges.preset_range(preset))
        return await self._build()

    def _set_range(self, first: date, last: date) -> None:
        self.start, self.end = first.isoformat(), last.isoformat()

    async def _build(self, download: bool = False):
        self.errors, self.rows, self.totals = {}, [], None
        first, last = ranges.parse_range(self.start, self.end)
        self._set_range(first, last)
        by = self.by

        def work(session: Session, account: Account) -> margin.MarginReport:
            return margin.build_margin(
                session=session, account=account, by=by, first=first, last=last
            )

        report = await self._run(work, Role.STAFF)
        self.rows = [margin_line(r) for r in report.rows]
        self.totals = margin_line(report.totals)
        if download:
            return rx.download(
                data=margin_csv(report),
                filename=f"questwall-margin-{by}-{self.start}-{self.end}.csv",
            )
        return None

    @rx.event
    @refusals(into="errors")
    async def apply(self, form: dict[str, str]):
        self.by = form.get("by", "day") or "day"
        self.start, self.end = form.get("start", ""), form.get("end", "")
        return await self._build()

    @rx.event
    @refusals(into="errors")
    async def preset(self, name: str):
        self._set_range(*ranges.preset_range(name))
        return await self._build()

    @rx.event
    @refusals(into="errors")
    async def export(self):
        return await self._build(download=True)
