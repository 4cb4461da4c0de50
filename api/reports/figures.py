"""Reports: clicks, starts, conversions, conversion rate, payout and payout per click (EPC),
reversed conversions and payout, and net payout, per day, per offer, per offerwall, per
country, per operating system or per sub value of the tracking link (`platform_sub1` to
`platform_sub3`), over a date range, optionally narrowed to one game or one offer. Aggregated in SQL
(GROUP BY); Python only joins the grouped rows (one per day, offer, … ), fills the days
without activity and names them.

A conversion counts once it was approved (docs/publisher-integration.md#statuses-and-reversals):
conversions, payout, conversion rate and EPC count the approved ones and those reversed
since; pending and rejected ones count nowhere. A reversed one also counts as reversed, and
net payout is payout minus reversed payout. Everything counts on the conversion's own day
(its `created_at`), the reversal's included: reversing last month's conversion changes last
month's net payout, and a day's figures are final only when nothing of it is reversed later.

Scoped on the server: staff see everything, designers their studio's offers, publishers
their offerwall (approved only, `access.offerwall_for`), in their offerwall's currency too,
with the currency given with and without promotions and how many conversions a promotion
multiplied. Staff and designers also see the games' spend: the revenue of the approved and
held conversions, as budgets count it (docs/economics.md#budgets); publishers never see
revenue (`spend_micros` is None for them, and it is never computed).
The portal's reports page (`paged_report`, a page of `PAGE_ROWS`) and the publishers'
reporting API (`GET /offerwall/reports`, `reporting_api.py`) both call `build_report` and
cut their pages in SQL, so their figures cannot differ. The date
range is read by `ranges.py`, and a report written as CSV by `csv_export.py`.

Why one module of this size: one report is one grouped statement built from its parts
(scope, filters, the grouping's label, the tallies); the date ranges and the CSV live beside
it (`ranges.py`, `csv_export.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import Account, Forbidden, game_for, offerwall_for
from api.core.money import in_currency, rounded, usd
from api.reports.ranges import ReportError, day_bounds
from api.studios import studios
from models import Click, Conversion, ConversionStatus, Game, Mission, Offerwall, Quest, Role
from models.tables import refused_click as _refused_click

DIMENSIONS = ("day", "offer", "offerwall", "country", "os", "sub1", "sub2", "sub3")
# The groupings the portal offers, named as its select shows them.
DIMENSION_LABELS = {
    "day": "Per day",
    "offer": "Per offer",
    "offerwall": "Per offerwall",
    "country": "Per country",
    "os": "Per operating system",
    "sub1": "Per sub1",
    "sub2": "Per sub2",
    "sub3": "Per sub3",
}
# A publisher's groupings, in the portal and in the reporting API alike: per offerwall
# would be one row, their own.
PUBLISHER_DIMENSIONS = ("day", "offer", "country", "os", "sub1", "sub2", "sub3")
# The key of the clicks without a country, an operating system or a sub value.
UNKNOWN_COUNTRY = "??"
NONE = ""
# The conversions a report counts: approved ones, and those reversed after approval.
COUNTED = (ConversionStatus.APPROVED, ConversionStatus.REVERSED)
# The conversions whose revenue a game spends: approved, and held for review (as budgets
# count them); a rejected or reversed one gives its revenue back.
SPENT = (ConversionStatus.APPROVED, ConversionStatus.PENDING)
# The rows of a page of the portal's reports page (`paged_report`): a sub value with
# 100,000 values opens as its first 50.
PAGE_ROWS = 50


@dataclass(frozen=True)
class ReportRow:
    """One row's figures as numbers: the reporting API writes them, and the portal's
    reports page, the staff dashboard and the CSV write their texts from them."""

    key: str
    label: str
    clicks: int
    starts: int
    conversions: int  # approved, those reversed since included
    rate_percent: float | None  # conversions per click, a percentage to one decimal
    usd_per_click: Decimal | None  # EPC in USD, unrounded; None without clicks
    epc_usd: float | None  # the same, to 4 decimals (the CSV's); None without clicks
    payout_usd: float  # of every conversion counted (reversed ones included)
    payout_micros: int
    reversed: int  # conversions reversed, on the conversion's day
    reversed_micros: int
    net_micros: int  # payout minus reversed payout
    # The amounts in the publisher's currency, for every publisher (USD at rate 1
    # included), each payout rounded as postbacks round it; None for staff and designers.
    payout_amount: Decimal | None = None
    epc_amount: Decimal | None = None  # to the currency's decimals, at least 2
    reversed_amount: Decimal | None = None
    net_amount: Decimal | None = None
    # Clicks the tracking links refused (targeting, caps, fraud screening), not in
    # `clicks` (docs/fraud.md#refused-clicks).
    refused: int = 0
    # The publisher's currency given to players for the counted conversions, with each
    # conversion's promotion multiplier (each rounded as `in_currency` rounds it); without
    # promotions it is `payout_amount`. None for staff and designers.
    given_amount: Decimal | None = None
    # Counted conversions a promotion multiplied (multiplier other than 100).
    promoted: int = 0
    # What the games spent: the revenue of the approved and held conversions (`SPENT`),
    # 0 for those without revenue. Staff and designers only: None for publishers.
    spend_micros: int | None = None


@dataclass(frozen=True)
class Currency:
    """An offerwall's currency as its postbacks use it: USD × rate, rounded per payout."""

    code: str
    name: str
    exchange_rate: float
    decimals: int

    @classmethod
    def of(cls, offerwall: Offerwall) -> Currency:
        return cls(
            offerwall.currency_code,
            offerwall.currency_name,
            offerwall.exchange_rate,
            offerwall.currency_decimals,
        )

    def amount(self, payout_micros: int, multiplier: int = 100) -> Decimal:
        """A payout in the currency; with a promotion's `multiplier` (hundredths), the
        currency given to the player."""
        return in_currency(
            payout_micros,
            exchange_rate=self.exchange_rate,
            decimals=self.decimals,
            multiplier=multiplier,
        )

    @property
    def is_usd(self) -> bool:
        """US dollars at rate 1: the report's USD figures are already in it."""
        return self.code == "USD" and self.exchange_rate == 1

    def per_click(self, amount: Decimal, clicks: int) -> Decimal:
        """An amount per click (EPC) with at least cents: 0 decimals would round most
        EPCs to nothing."""
        return rounded(amount / clicks, max(self.decimals, 2))

    def note(self) -> str:
        places = "decimal" if self.decimals == 1 else "decimals"
        return (
            f"Payouts in {self.name} ({self.code}): {self.exchange_rate:g} per USD, each "
            f"payout rounded to {self.decimals} {places}, as in your postbacks."
        )


@dataclass(frozen=True)
class Report:
    rows: list[ReportRow]
    totals: ReportRow
    # The publisher's currency when the portal shows it beside USD (not USD at rate 1).
    currency: Currency | None = None
    # The currency of the rows' amounts (`payout_amount`, …): every publisher's.
    amounts_in: Currency | None = None
    # How many rows the whole report has (`rows` may be one page of them).
    count: int = 0


@dataclass(frozen=True)
class Choice:
    value: str
    label: str


@dataclass(frozen=True)
class FilterChoices:
    """What the game and offer filters offer the account (nothing for publishers)."""

    games: list[Choice] = field(default_factory=list)
    offers: list[Choice] = field(default_factory=list)


def dimensions_for(role: str) -> tuple[str, ...]:
    """The groupings the portal offers the role."""
    return PUBLISHER_DIMENSIONS if role == Role.PUBLISHER else DIMENSIONS


def _scope(account: Account, offerwall_id: str | None) -> tuple[Any, Any]:
    """WHERE clauses for clicks and conversions the account may see."""
    click_where: sa.ColumnElement[bool] = sa.true()
    conv_where: sa.ColumnElement[bool] = sa.true()
    if account.role == Role.PUBLISHER or offerwall_id:
        wall = account.offerwall_id if account.role == Role.PUBLISHER else offerwall_id
        click_where = col(Click.offerwall_id) == wall
        conv_where = col(Conversion.offerwall_id) == wall
    if account.role == Role.DESIGNER:
        # A designer without a studio sees no game (not the games without a studio).
        own = col(Game.studio_id) == account.studio_id if account.studio_id else sa.false()
        games = sa.select(col(Game.id)).where(own)
        missions = sa.select(col(Mission.id)).where(col(Mission.game_id).in_(games))
        quests = sa.select(col(Quest.id)).where(col(Quest.game_id).in_(games))
        own_clicks = sa.or_(col(Click.mission_id).in_(missions), col(Click.quest_id).in_(quests))
        # Narrows the offerwall filter above rather than replacing it.
        click_where = sa.and_(click_where, own_clicks)
        conv_where = sa.and_(conv_where, col(Conversion.mission_id).in_(missions))
    return click_where, conv_where


def _narrowed(session: Session, account: Account, game_id: str, offer_id: str) -> tuple[Any, Any]:
    """WHERE clauses for one game or one offer, after checking the account may report on
    it: staff any, a designer their studio's (`access.game_for`), a publisher none."""
    if not game_id and not offer_id:
        return sa.true(), sa.true()
    if account.role not in (Role.STAFF, Role.DESIGNER):
        raise Forbidden("Your account may not do this.")
    if offer_id:
        offer: Mission | Quest | None = session.get(Quest, offer_id) or session.get(
            Mission, offer_id
        )
        # A mission inside a quest is reported under its quest.
        if offer is None or (isinstance(offer, Mission) and offer.quest_id is not None):
            raise ReportError("No such offer.", "offer")
        if game_id and offer.game_id != game_id:
            raise ReportError("No such offer.", "offer")
        try:
            game_for(session=session, account=account, game_id=offer.game_id)
        except Forbidden:
            raise ReportError("No such offer.", "offer") from None
        if isinstance(offer, Quest):
            return col(Click.quest_id) == offer.id, col(Conversion.quest_id) == offer.id
        return (
            sa.and_(col(Click.mission_id) == offer.id, col(Click.quest_id).is_(None)),
            sa.and_(col(Conversion.mission_id) == offer.id, col(Conversion.quest_id).is_(None)),
        )
    game = game_for(session=session, account=account, game_id=game_id)
    missions = sa.select(col(Mission.id)).where(col(Mission.game_id) == game.id)
    quests = sa.select(col(Quest.id)).where(col(Quest.game_id) == game.id)
    return (
        sa.or_(col(Click.mission_id).in_(missions), col(Click.quest_id).in_(quests)),
        col(Conversion.mission_id).in_(missions),
    )


def build_report(
    *,
    session: Session,
    account: Account,
    dimension: str,
    first: date,
    last: date,
    offerwall_id: str | None = None,
    game_id: str = "",
    offer_id: str = "",
    limit: int | None = None,
    offset: int = 0,
) -> Report:
    """The report of the range; per day it has a row for every day, zeros included. A
    conversion and its reversal count on the conversion's day (`created_at`), whenever it
    was reversed. With `limit`, only the rows from `offset` on, cut in SQL (per day, from
    the range's days: at most `ranges.MAX_DAYS`); the totals and `count` still cover every row."""
    if dimension not in DIMENSIONS:
        raise ReportError(f"Report by one of: {', '.join(DIMENSIONS)}.")
    currency = None
    if account.role == Role.PUBLISHER:  # their own offerwall, approved (or NotApproved)
        currency = Currency.of(offerwall_for(session=session, account=account))
    q = _query(
        session, account, dimension, day_bounds(first, last), offerwall_id, game_id, offer_id
    )
    # A publisher paid in USD at rate 1 has the USD columns only: they say it all.
    shown = currency if currency is not None and not currency.is_usd else None

    # Revenue is computed for staff and designers only: a publisher's report never holds it.
    spends = account.role != Role.PUBLISHER

    def row(key: str, label: str, tally: _Tally) -> ReportRow:
        return _row(key, label, tally, currency, spends)

    if limit is not None and dimension != "day":
        keys, count = _page_keys(session, q, limit, offset)
        merged = _tallies(session, q, currency, keys, spends=spends) if keys else {}
        total = _total(session, q, currency, spends=spends)
    else:
        merged = {}
        if dimension == "day":
            for day in range((last - first).days + 1):
                merged[(first + timedelta(days=day)).isoformat()] = _Tally()
        merged |= _tallies(session, q, currency, spends=spends)
        total = _Tally()
        for tally in merged.values():
            total.add(tally)
        count = len(merged)
    labels = _labels(session, dimension, list(merged))
    rows = [row(key, labels.get(key, key), tally) for key, tally in merged.items()]
    # The key last: rows of one label (a sub value named like a label) keep one order.
    rows.sort(
        key=lambda r: r.key if dimension == "day" else (-r.payout_micros, -r.clicks, r.label, r.key)
    )
    if limit is not None and dimension == "day":
        rows = rows[offset : offset + limit]
    return Report(rows, row("total", "Total", total), shown, currency, count)


@dataclass(frozen=True)
class ReportPage:
    """One page of a report as the portal's reports page shows it: `report.rows` are the
    page's, `report.totals` and `report.count` the whole report's."""

    report: Report
    page: int  # from 1, within `pages`
    pages: int


def paged_report(
    *,
    session: Session,
    account: Account,
    dimension: str,
    first: date,
    last: date,
    game_id: str = "",
    offer_id: str = "",
    page: int = 1,
) -> ReportPage:
    """Page `page` of the report, `PAGE_ROWS` rows cut in SQL as the reporting API cuts
    its pages (`build_report` with a limit), every grouping alike; a page past the last is
    the last."""

    def build(at: int) -> Report:
        return build_report(
            session=session,
            account=account,
            dimension=dimension,
            first=first,
            last=last,
            game_id=game_id,
            offer_id=offer_id,
            limit=PAGE_ROWS,
            offset=(at - 1) * PAGE_ROWS,
        )

    page = max(1, page)
    report = build(page)
    pages = max(1, -(-report.count // PAGE_ROWS))
    if page > pages:  # fewer rows than when the page was offered
        page = pages
        report = build(page)
    return ReportPage(report, page, pages)


@dataclass(frozen=True)
class _Query:
    """What one report counts: per source (clicks, conversions, refused clicks), the
    account's scope and the range as WHERE clauses, and the grouping's key."""

    dimension: str
    click_key: Any
    click_where: list[Any]
    conv_key: Any
    conv_where: list[Any]
    join_click: bool  # the conversions' key is their click's
    # The conversions counted or spent (`COUNTED` and `SPENT`): what staff's and
    # designers' conversions statement reads, telling them apart by status.
    wide_where: list[Any]
    refused_key: Any
    refused_where: list[Any]


def _query(
    session: Session,
    account: Account,
    dimension: str,
    bounds: tuple[datetime, datetime],
    offerwall_id: str | None,
    game_id: str,
    offer_id: str,
) -> _Query:
    since, until = bounds
    click_where, conv_where = _scope(account, offerwall_id)
    click_only, conv_only = _narrowed(session, account, game_id, offer_id)
    click_key, conv_key, join_click = {
        "day": (
            sa.func.date(col(Click.created_at)),
            sa.func.date(col(Conversion.created_at)),
            False,
        ),
        "offer": (
            sa.func.coalesce(col(Click.quest_id), col(Click.mission_id)),
            sa.func.coalesce(col(Conversion.quest_id), col(Conversion.mission_id)),
            False,
        ),
        "offerwall": (col(Click.offerwall_id), col(Conversion.offerwall_id), False),
        "country": (
            sa.func.coalesce(col(Click.country), UNKNOWN_COUNTRY),
            sa.func.coalesce(col(Click.country), UNKNOWN_COUNTRY),
            True,
        ),
        # A missing value and an empty one (`platform_sub1=`) are one group.
        **{
            name: (sa.func.coalesce(column, NONE), sa.func.coalesce(column, NONE), True)
            for name, column in (
                ("os", col(Click.os)),
                ("sub1", col(Click.sub1)),
                ("sub2", col(Click.sub2)),
                ("sub3", col(Click.sub3)),
            )
        },
    }[dimension]
    refused_key, refused_where = _refused(
        account, dimension, bounds, offerwall_id, game_id, offer_id
    )
    conv_base = [
        conv_where,
        conv_only,
        sa.not_(col(Conversion.test)),
        col(Conversion.created_at) >= since,
        col(Conversion.created_at) < until,
    ]
    return _Query(
        dimension,
        click_key,
        [
            click_where,
            click_only,
            sa.not_(col(Click.test)),
            col(Click.created_at) >= since,
            col(Click.created_at) < until,
        ],
        conv_key,
        [*conv_base, col(Conversion.status).in_(COUNTED)],
        join_click,
        [*conv_base, col(Conversion.status).in_({*COUNTED, *SPENT})],
        refused_key,
        refused_where,
    )


_REVERSED = sa.case((col(Conversion.status) == ConversionStatus.REVERSED, 1), else_=0)
_STARTED = sa.case((col(Click.started), 1), else_=0)


def _conversions_select(q: _Query, *columns: Any, wide: bool = False) -> Any:
    """Conversions counted (with `wide`, also those whose revenue counts as spent)."""
    query = sa.select(*columns).where(*(q.wide_where if wide else q.conv_where))
    if q.join_click:
        query = query.join(Click, col(Click.id) == col(Conversion.click_id))
    return query


_STATUS = col(Conversion.status)
# Counted conversions, and the revenue spent, of a statement that reads both (`wide`).
_COUNTED_N = sa.func.sum(sa.case((_STATUS.in_(COUNTED), 1), else_=0))
_SPENT_REVENUE = sa.func.sum(
    sa.case((_STATUS.in_(SPENT), sa.func.coalesce(col(Conversion.revenue_micros), 0)), else_=0)
)


def _conversion_figures(q: _Query, key: Any, spends: bool) -> Any:
    """Conversions per distinct payout and promotion multiplier, so each payout converts
    to the offerwall's currency with the postbacks' rounding (a handful of groups: one
    payout per mission, mostly): the key, payout, counted, reversed, multiplier and the
    revenue spent (0 unless `spends`: a publisher's statement never reads revenue)."""
    payout, multiplier = col(Conversion.payout_micros), col(Conversion.multiplier)
    return _conversions_select(
        q,
        key,
        payout,
        _COUNTED_N if spends else sa.func.count(),
        sa.func.sum(_REVERSED),
        multiplier,
        _SPENT_REVENUE if spends else sa.literal(0),
        wide=spends,
    )


def _tallies(
    session: Session,
    q: _Query,
    currency: Currency | None,
    keys: list[str] | None = None,
    *,
    spends: bool = False,
) -> dict[str, _Tally]:
    """The figures per group, one grouped statement each for clicks, conversions and
    refused clicks, and with `spends` the revenue spent (only the groups of `keys` when
    given)."""
    click_where, conv_where, refused_where = list(q.click_where), [], list(q.refused_where)
    if keys is not None:
        click_where.append(q.click_key.in_(keys))
        conv_where.append(q.conv_key.in_(keys))
        refused_where.append(q.refused_key.in_(keys))
    clicks = session.execute(
        sa.select(q.click_key.label("k"), sa.func.count(), sa.func.sum(_STARTED))
        .where(*click_where)
        .group_by(q.click_key)
    ).all()
    payout, multiplier = col(Conversion.payout_micros), col(Conversion.multiplier)
    conversions = session.execute(
        _conversion_figures(q, q.conv_key.label("k"), spends)
        .where(*conv_where)
        .group_by(q.conv_key, payout, multiplier)
    ).all()
    refused = session.execute(
        sa.select(q.refused_key.label("k"), sa.func.count())
        .where(*refused_where)
        .group_by(q.refused_key)
    ).all()
    merged: dict[str, _Tally] = {}
    for key, n, started in clicks:
        tally = merged.setdefault(str(key), _Tally())
        tally.clicks, tally.starts = int(n), int(started or 0)
    for key, n in refused:
        merged.setdefault(str(key), _Tally()).refused = int(n)
    for key, micros, n, n_reversed, times, revenue in conversions:
        tally = merged.setdefault(str(key), _Tally())
        tally.convert(micros, n, n_reversed, currency, times)
        tally.spend += int(revenue or 0)
    return merged


def _total(session: Session, q: _Query, currency: Currency | None, *, spends: bool) -> _Tally:
    """Every group's figures together, in one aggregate statement (conversions per
    distinct payout and multiplier, for the postbacks' rounding)."""
    none, hundred = sa.literal(0), sa.literal(100)
    clicks = sa.select(sa.literal("c"), none, sa.func.count(), sa.func.sum(_STARTED), hundred, none)
    payout, multiplier = col(Conversion.payout_micros), col(Conversion.multiplier)
    conversions = _conversion_figures(q, sa.literal("v"), spends).group_by(payout, multiplier)
    refused = sa.select(sa.literal("r"), none, sa.func.count(), none, hundred, none)
    statement = sa.union_all(
        clicks.where(*q.click_where),
        conversions,
        refused.where(*q.refused_where),
    )
    total = _Tally()
    for source, micros, n, m, times, revenue in session.execute(statement).all():
        if source == "c":
            total.clicks, total.starts = int(n), int(m or 0)
        elif source == "r":
            total.refused = int(n)
        else:
            total.convert(micros, n, m, currency, times)
            total.spend += int(revenue or 0)
    return total


def _page_keys(session: Session, q: _Query, limit: int, offset: int) -> tuple[list[str], int]:
    """The keys of one page of groups in the rows' order (payout, clicks, label, key) and
    how many groups there are: grouped, ordered and cut in SQL. The rows of the three
    sources are grouped once, together (grouped each first, then again, the groups of a
    sub value with 100,000 values were made twice)."""
    zero, one = sa.literal(0), sa.literal(1)
    parts = sa.union_all(
        sa.select(q.click_key.label("k"), one.label("clicks"), zero.label("micros")).where(
            *q.click_where
        ),
        _conversions_select(q, q.conv_key.label("k"), zero, col(Conversion.payout_micros)),
        sa.select(q.refused_key.label("k"), zero, zero).where(*q.refused_where),
    ).subquery()
    groups = (
        sa.select(
            parts.c.k,
            sa.func.sum(parts.c.clicks).label("clicks"),
            sa.func.sum(parts.c.micros).label("micros"),
        )
        .group_by(parts.c.k)
        .cte("groups")
    )
    binary = "C" if session.get_bind().dialect.name == "postgresql" else "BINARY"
    label = _label_sql(q.dimension, groups.c.k)
    # The groups are made once (a query names them twice: both databases keep them) and
    # counted in the same statement as the page is cut.
    counted = sa.select(sa.func.count()).select_from(groups).scalar_subquery()
    page = (
        sa.select(groups.c.k, counted.label("n"))
        .order_by(
            groups.c.micros.desc(),
            groups.c.clicks.desc(),
            sa.collate(label, binary),
            sa.collate(groups.c.k, binary),
        )
        .limit(limit)
        .offset(offset)
    )
    rows = session.execute(page).all()
    if rows:
        return [str(row.k) for row in rows], int(rows[0].n)
    # A page past the last row: the count alone.
    return [], int(session.execute(sa.select(counted)).scalar_one())


def _label_sql(dimension: str, key: Any) -> Any:
    """The label `_labels` gives a key, in SQL, for ordering a page as the rows are."""
    if dimension == "offer":
        title = sa.select(col(Mission.title)).where(col(Mission.id) == key).scalar_subquery()
        quest = (
            sa.select(col(Quest.name) + " (quest)").where(col(Quest.id) == key).scalar_subquery()
        )
        return sa.func.coalesce(title, quest, key)
    if dimension == "offerwall":
        name = sa.select(col(Offerwall.name)).where(col(Offerwall.id) == key).scalar_subquery()
        return sa.func.coalesce(name, key)
    fixed = _FIXED_LABELS.get(dimension)
    if not fixed:
        return key
    return sa.case(*((key == k, label) for k, label in fixed.items()), else_=key)


def _refused(
    account: Account,
    dimension: str,
    bounds: tuple[datetime, datetime],
    offerwall_id: str | None,
    game_id: str,
    offer_id: str,
) -> tuple[Any, list[Any]]:
    """The key and WHERE clauses of refused clicks, scoped as the report's clicks are
    (`_narrowed` has checked the game or offer). Only refused clicks naming a real offer
    count: a link with a made-up offer id is noise, not a click on anything this report
    covers."""
    r = _refused_click
    games = sa.select(col(Game.id))
    if account.role == Role.DESIGNER:
        own = col(Game.studio_id) == account.studio_id if account.studio_id else sa.false()
        games = games.where(own)
    if game_id:
        games = games.where(col(Game.id) == game_id)
    missions = sa.select(col(Mission.id)).where(
        col(Mission.game_id).in_(games), col(Mission.quest_id).is_(None)
    )
    quests = sa.select(col(Quest.id)).where(col(Quest.game_id).in_(games))
    where = [
        r.c.created_at >= bounds[0],
        r.c.created_at < bounds[1],
        sa.or_(
            sa.and_(r.c.kind == "mission", r.c.offer_id.in_(missions)),
            sa.and_(r.c.kind == "quest", r.c.offer_id.in_(quests)),
        ),
    ]
    if offer_id:
        where.append(r.c.offer_id == offer_id)
    if account.role == Role.PUBLISHER or offerwall_id:
        where.append(
            r.c.offerwall_id
            == (account.offerwall_id if account.role == Role.PUBLISHER else offerwall_id)
        )
    key = {
        "day": sa.func.date(r.c.created_at),
        "offer": r.c.offer_id,
        "offerwall": sa.func.coalesce(r.c.offerwall_id, NONE),
        "country": sa.func.coalesce(r.c.country, UNKNOWN_COUNTRY),
        "os": sa.func.coalesce(r.c.os, NONE),
        "sub1": sa.func.coalesce(r.c.sub1, NONE),
        "sub2": sa.func.coalesce(r.c.sub2, NONE),
        "sub3": sa.func.coalesce(r.c.sub3, NONE),
    }[dimension]
    return key, where


@dataclass
class _Tally:
    clicks: int = 0
    starts: int = 0
    conversions: int = 0
    micros: int = 0
    local: Decimal = Decimal(0)
    reversed: int = 0
    reversed_micros: int = 0
    reversed_local: Decimal = Decimal(0)
    refused: int = 0
    given: Decimal = Decimal(0)
    promoted: int = 0
    spend: int = 0

    def convert(
        self,
        micros: Any,
        n: Any,
        n_reversed: Any,
        currency: Currency | None,
        multiplier: Any = 100,
    ) -> None:
        """`n` conversions of one payout and promotion multiplier, `n_reversed` of them
        reversed since."""
        micros, n, n_reversed = int(micros), int(n), int(n_reversed or 0)
        multiplier = 100 if multiplier is None else int(multiplier)
        self.conversions += n
        self.micros += micros * n
        self.reversed += n_reversed
        self.reversed_micros += micros * n_reversed
        if multiplier != 100:
            self.promoted += n
        if currency is not None:
            amount = currency.amount(micros)
            self.local += amount * n
            self.reversed_local += amount * n_reversed
            self.given += (currency.amount(micros, multiplier) if multiplier != 100 else amount) * n

    def add(self, other: _Tally) -> None:
        self.refused += other.refused
        self.clicks += other.clicks
        self.starts += other.starts
        self.conversions += other.conversions
        self.micros += other.micros
        self.local += other.local
        self.reversed += other.reversed
        self.reversed_micros += other.reversed_micros
        self.reversed_local += other.reversed_local
        self.given += other.given
        self.promoted += other.promoted
        self.spend += other.spend


def _row(
    key: str, label: str, t: _Tally, currency: Currency | None, spends: bool = False
) -> ReportRow:
    rate = round(100 * t.conversions / t.clicks, 1) if t.clicks else None
    per_click = usd(t.micros) / t.clicks if t.clicks else None
    amounts: dict[str, Any] = {}
    if currency is not None:
        amounts = {
            "payout_amount": t.local,
            "epc_amount": currency.per_click(t.local, t.clicks) if t.clicks else None,
            "reversed_amount": t.reversed_local,
            "net_amount": t.local - t.reversed_local,
            "given_amount": t.given,
        }
    return ReportRow(
        key=key,
        label=label,
        clicks=t.clicks,
        starts=t.starts,
        conversions=t.conversions,
        rate_percent=rate,
        usd_per_click=per_click,
        epc_usd=float(rounded(per_click, 4)) if per_click is not None else None,
        payout_usd=t.micros / 1_000_000,
        payout_micros=t.micros,
        reversed=t.reversed,
        reversed_micros=t.reversed_micros,
        net_micros=t.micros - t.reversed_micros,
        refused=t.refused,
        promoted=t.promoted,
        spend_micros=t.spend if spends else None,
        **amounts,
    )


def _labels(session: Session, dimension: str, keys: list[str]) -> dict[str, str]:
    if dimension == "offer" and keys:
        missions = session.execute(
            sa.select(col(Mission.id), col(Mission.title)).where(col(Mission.id).in_(keys))
        )
        quests = session.execute(
            sa.select(col(Quest.id), col(Quest.name)).where(col(Quest.id).in_(keys))
        )
        return {**dict(missions.all()), **{k: f"{n} (quest)" for k, n in quests.all()}}
    if dimension == "offerwall" and keys:
        walls = session.execute(
            sa.select(col(Offerwall.id), col(Offerwall.name)).where(col(Offerwall.id).in_(keys))
        )
        return dict(walls.all())
    return dict(_FIXED_LABELS.get(dimension, {}))


# The labels of the keys that stand for "none" (the rest are labelled by their key).
_FIXED_LABELS = {
    "country": {UNKNOWN_COUNTRY: "unknown"},
    "os": {NONE: "unknown"},
    **{sub: {NONE: "(none)"} for sub in ("sub1", "sub2", "sub3")},
}


def day_totals(*, session: Session, account: Account, day: date) -> ReportRow:
    """One UTC day's totals, the same figures the report of that day shows."""
    return build_report(
        session=session, account=account, dimension="day", first=day, last=day
    ).totals


def filter_choices(*, session: Session, account: Account, game_id: str = "") -> FilterChoices:
    """The games the account may report on and, once a game is chosen, its offers (its
    standalone missions and its quests, as the per-offer report names them)."""
    if account.role not in (Role.STAFF, Role.DESIGNER):
        return FilterChoices()
    games = [Choice(g.id, g.name) for g in studios.games_for(session=session, account=account)]
    if not game_id:
        return FilterChoices(games)
    game = game_for(session=session, account=account, game_id=game_id)
    missions = session.execute(
        sa.select(col(Mission.id), col(Mission.title))
        .where(col(Mission.game_id) == game.id, col(Mission.quest_id).is_(None))
        .order_by(col(Mission.title))
    ).all()
    quests = session.execute(
        sa.select(col(Quest.id), col(Quest.name))
        .where(col(Quest.game_id) == game.id)
        .order_by(col(Quest.name))
    ).all()
    offers = [Choice(i, t) for i, t in missions] + [Choice(i, f"{n} (quest)") for i, n in quests]
    return FilterChoices(games, offers)
