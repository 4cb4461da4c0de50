"""Reports for every role: staff see everything, designers their studio's offers,
publishers their offerwall (scoped on the server by api/reports/figures.py). The rows carry
numbers; `report_line` writes them for people (through `portal/components/formatting.py`),
for this page and the staff dashboard's figures of the day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.reports import figures as reports
from api.reports import ranges, to_csv
from models import Role
from portal.components.formatting import money, usd
from portal.state.auth import AuthState, refusals

EVERYONE = (Role.STAFF, Role.DESIGNER, Role.PUBLISHER)
# The report form's id: a changed choice submits it (dates, group and filters together).
FORM_ID = "report-form"
SUBMIT_FORM = f"document.getElementById('{FORM_ID}').requestSubmit()"
# What a figure without clicks reads (the conversion rate, EPC).
NOTHING = "–"


@dataclass(frozen=True)
class ReportLine:
    """A report's row as the Reports page and the staff dashboard show it
    (`figures.ReportRow` with its rate and amounts written)."""

    key: str
    label: str
    clicks: int
    starts: int
    conversions: int
    rate: str  # "42.9%"
    epc: str  # "$1.00"
    payout: str  # "$3.01"
    reversed: int
    reversed_payout: str
    net_payout: str
    # In the publisher's currency ("" when the page shows USD only): "1,002 GEM".
    payout_local: str
    epc_local: str
    reversed_local: str
    net_local: str
    refused: int
    # A publisher's currency given to players with and without promotions, and the
    # conversions a promotion multiplied ("" and 0 for staff and designers).
    given: str = ""
    given_base: str = ""
    promoted: int = 0
    # What the games spent (staff, designers): "$3.20"; "" for publishers.
    spend: str = ""


def report_line(
    row: reports.ReportRow,
    currency: reports.Currency | None = None,
    amounts_in: reports.Currency | None = None,
) -> ReportLine:
    """`row` as the page shows it; `currency`: the publisher's, when the page shows it
    beside USD (`Report.currency`); `amounts_in`: every publisher's (`Report.amounts_in`),
    for the currency given with and without promotions."""
    given: dict[str, str] = {}
    if amounts_in is not None and row.given_amount is not None:
        places = amounts_in.decimals

        def amount(value: Decimal | None) -> str:
            value = value if value is not None else Decimal(0)
            if amounts_in.is_usd:
                return money(value, decimals=places)
            return money(value, decimals=places, code=amounts_in.code)

        given = {"given": amount(row.given_amount), "given_base": amount(row.payout_amount)}
    local = {"payout_local": "", "epc_local": "", "reversed_local": "", "net_local": ""}
    if currency is not None:

        def shown(amount: Decimal | None, decimals: int = currency.decimals) -> str:
            return (
                NOTHING if amount is None else money(amount, decimals=decimals, code=currency.code)
            )

        local = {
            "payout_local": shown(row.payout_amount),
            "epc_local": shown(row.epc_amount, max(currency.decimals, 2)),
            "reversed_local": shown(row.reversed_amount),
            "net_local": shown(row.net_amount),
        }
    return ReportLine(
        key=row.key,
        label=row.label,
        clicks=row.clicks,
        starts=row.starts,
        conversions=row.conversions,
        rate=NOTHING if row.rate_percent is None else f"{row.rate_percent:.1f}%",
        epc=NOTHING if row.usd_per_click is None else money(row.usd_per_click),
        payout=usd(row.payout_micros),
        reversed=row.reversed,
        reversed_payout=usd(row.reversed_micros),
        net_payout=usd(row.net_micros),
        refused=row.refused,
        promoted=row.promoted,
        spend="" if row.spend_micros is None else usd(row.spend_micros),
        **given,
        **local,
    )


class ReportState(AuthState):
    dimension: str = "day"
    # The groupings the account may choose (a publisher's are the reporting API's).
    groupings: list[reports.Choice] = []
    start: str = ""
    end: str = ""
    game: str = ""
    offer: str = ""
    games: list[reports.Choice] = []
    offers: list[reports.Choice] = []
    rows: list[ReportLine] = []
    totals: ReportLine | None = None
    chart: list[dict[str, float | str]] = []
    currency_note: str = ""
    # Staff's and designers' reports show the games' spend; a publisher's never does.
    spends: bool = False
    errors: dict[str, str] = {}
    # The page of rows shown (`figures.PAGE_ROWS` a page), and how many rows in all.
    page: int = 1
    pages: int = 1
    total: int = 0

    @rx.event
    @refusals(into="errors")
    async def load(self):
        guard = await self._guard(*EVERYONE)
        if guard is not None:
            return guard
        self.groupings = [
            reports.Choice(d, reports.DIMENSION_LABELS[d])
            for d in reports.dimensions_for(self.user_role)
        ]
        preset = self.router.url.query_parameters.get("preset", "")
        if preset in ranges.PRESETS:
            self._set_range(*ranges.preset_range(preset))
        self.page = 1
        await self._choices()
        return await self._build()

    def _set_range(self, first: date, last: date) -> None:
        self.start, self.end = first.isoformat(), last.isoformat()

    async def _choices(self) -> None:
        game = self.game

        def work(session: Session, account: Account) -> reports.FilterChoices:
            return reports.filter_choices(session=session, account=account, game_id=game)

        found = await self._run(work, *EVERYONE)
        self.games, self.offers = found.games, found.offers

    async def _build(self) -> None:
        """The page `self.page` of the report: its rows cut in SQL, the totals of all."""
        # Whatever is refused below, no figures of an earlier choice stay on screen.
        self.errors, self.rows, self.totals, self.chart = {}, [], None, []
        first, last = ranges.parse_range(self.start, self.end)
        self._set_range(first, last)
        dimension, game, offer, page = self.dimension, self.game, self.offer, self.page

        def work(session: Session, account: Account) -> reports.ReportPage:
            return reports.paged_report(
                session=session,
                account=account,
                dimension=dimension,
                first=first,
                last=last,
                game_id=game,
                offer_id=offer,
                page=page,
            )

        found = await self._run(work, *EVERYONE)
        report = found.report
        self.page, self.pages, self.total = found.page, found.pages, report.count
        self.rows = [report_line(r, report.currency, report.amounts_in) for r in report.rows]
        self.totals = report_line(report.totals, report.currency, report.amounts_in)
        self.spends = report.totals.spend_micros is not None
        self.currency_note = report.currency.note() if report.currency else ""
        # The page's days; for the other groupings the page's 60 largest (all of them).
        shown = report.rows if dimension == "day" else report.rows[:60]
        self.chart = [
            {"label": r.label, "clicks": r.clicks, "conversions": r.conversions} for r in shown
        ]

    @rx.event
    @refusals(into="errors")
    async def apply(self, form: dict[str, str]):
        """The form: the range, the grouping and (staff, designers) the game and offer."""
        self.dimension = form.get("dimension", "day") or "day"
        self.start, self.end = form.get("start", ""), form.get("end", "")
        game, offer = form.get("game", ""), form.get("offer", "")
        if game != self.game:  # another game's offers to choose from
            self.game, self.offer = game, ""
            await self._choices()
        else:
            self.offer = offer
        self.page = 1
        return await self._build()

    @rx.event
    @refusals(into="errors")
    async def preset(self, name: str):
        self._set_range(*ranges.preset_range(name))
        self.page = 1
        return await self._build()

    @rx.event
    @refusals(into="errors")
    async def go(self, page: int):
        """Another page of the same report (the pager's); what is not a page number is
        the first."""
        self.page = page if isinstance(page, int) else 1
        return await self._build()

    @rx.event
    @refusals(into="errors")
    async def export(self):
        """The CSV of every row of the report on screen (not only its page)."""
        first, last = ranges.parse_range(self.start, self.end)
        dimension, game, offer = self.dimension, self.game, self.offer

        def work(session: Session, account: Account) -> reports.Report:
            return reports.build_report(
                session=session,
                account=account,
                dimension=dimension,
                first=first,
                last=last,
                game_id=game,
                offer_id=offer,
            )

        report = await self._run(work, *EVERYONE)
        return rx.download(
            data=to_csv(report, dimension),
            filename=f"questwall-{dimension}-{first.isoformat()}-{last.isoformat()}.csv",
        )
