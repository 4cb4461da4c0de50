"""Staff's margin report (docs/economics.md#reports): revenue (what games pay), payout (what
publishers are paid) and margin (revenue − payout, and its share of revenue) per day, game,
mission, offerwall or country, over inclusive UTC days. Staff only: publishers never see
revenue or margin, and designers see their games' revenue (spend) in their reports only.

The conversions that count are the approved ones and the held ones (pending review), as
budgets count them: what the games owe and the publishers are owed unless someone decides
otherwise. Rejected and reversed conversions give their revenue back and are left out;
test conversions are never in reports. A conversion counts on its own UTC day
(`created_at`), with the revenue and payout stored with it (a conversion without revenue
counts as revenue 0). Grouped in SQL, one statement; the totals are the sums of the rows'
integer micros, so they equal the rows' sum exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import Account, require
from api.core.countries import country as country_named
from api.core.money import rounded, usd
from api.reports.ranges import ReportError, day_bounds
from models import Conversion, ConversionStatus, Game, Mission, Offerwall, Role

BY = ("day", "game", "mission", "offerwall", "country")
BY_LABELS = {
    "day": "Per day",
    "game": "Per game",
    "mission": "Per mission",
    "offerwall": "Per offerwall",
    "country": "Per country",
}
# The statuses whose revenue and payout count: approved, and held for review.
COUNTED = (ConversionStatus.APPROVED, ConversionStatus.PENDING)
UNKNOWN_COUNTRY = "??"


@dataclass(frozen=True)
class MarginRow:
    key: str
    label: str
    conversions: int  # approved and held
    held: int  # of them, held for review
    revenue_micros: int
    payout_micros: int

    @property
    def margin_micros(self) -> int:
        return self.revenue_micros - self.payout_micros

    @property
    def margin_percent(self) -> Decimal | None:
        """Margin as a share of revenue, in percent to one decimal; None without revenue."""
        if self.revenue_micros == 0:
            return None
        return rounded(Decimal(self.margin_micros) * 100 / Decimal(self.revenue_micros), 1)

    @property
    def revenue_usd(self) -> Decimal:
        return usd(self.revenue_micros)

    @property
    def payout_usd(self) -> Decimal:
        return usd(self.payout_micros)

    @property
    def margin_usd(self) -> Decimal:
        return usd(self.margin_micros)


@dataclass(frozen=True)
class MarginReport:
    by: str
    first: date
    last: date
    rows: list[MarginRow]
    totals: MarginRow


def build_margin(
    *, session: Session, account: Account | None, by: str, first: date, last: date
) -> MarginReport:
    """The margin report of the range, per `by`; per day a row for every day of the range,
    zeros included. Staff only (`Forbidden` for anyone else)."""
    require(account, Role.STAFF)
    if by not in BY:
        raise ReportError(f"Report by one of: {', '.join(BY)}.", "by")
    since, until = day_bounds(first, last)
    key = _key(by)
    query = (
        sa.select(
            key.label("k"),
            sa.func.count(),
            sa.func.sum(sa.case((col(Conversion.status) == ConversionStatus.PENDING, 1), else_=0)),
            sa.func.sum(sa.func.coalesce(col(Conversion.revenue_micros), 0)),
            sa.func.sum(col(Conversion.payout_micros)),
        )
        .where(
            sa.not_(col(Conversion.test)),
            col(Conversion.status).in_(COUNTED),
            col(Conversion.created_at) >= since,
            col(Conversion.created_at) < until,
        )
        .group_by(key)
    )
    if by == "game":
        query = query.join(Mission, col(Mission.id) == col(Conversion.mission_id))
    found: dict[str, tuple[int, int, int, int]] = {}
    for k, n, held, revenue, payout in session.execute(query).all():
        found[str(k)] = (int(n), int(held or 0), int(revenue or 0), int(payout or 0))
    if by == "day":
        for offset in range((last - first).days + 1):
            found.setdefault((first + timedelta(days=offset)).isoformat(), (0, 0, 0, 0))
    labels = _labels(session, by, list(found))
    rows = [MarginRow(k, labels.get(k, k), *figures) for k, figures in found.items()]
    if by == "day":
        rows.sort(key=lambda r: r.key)
    else:
        rows.sort(key=lambda r: (-r.revenue_micros, -r.margin_micros, r.label, r.key))
    totals = MarginRow(
        "total",
        "Total",
        sum(r.conversions for r in rows),
        sum(r.held for r in rows),
        sum(r.revenue_micros for r in rows),
        sum(r.payout_micros for r in rows),
    )
    return MarginReport(by, first, last, rows, totals)


def _key(by: str) -> Any:
    return {
        "day": sa.func.date(col(Conversion.created_at)),
        "game": col(Mission.game_id),
        "mission": col(Conversion.mission_id),
        "offerwall": col(Conversion.offerwall_id),
        "country": sa.func.coalesce(col(Conversion.country), UNKNOWN_COUNTRY),
    }[by]


def _labels(session: Session, by: str, keys: list[str]) -> dict[str, str]:
    if not keys:
        return {}
    if by == "game":
        return dict(
            session.execute(
                sa.select(col(Game.id), col(Game.name)).where(col(Game.id).in_(keys))
            ).all()
        )
    if by == "mission":
        return dict(
            session.execute(
                sa.select(col(Mission.id), col(Mission.title)).where(col(Mission.id).in_(keys))
            ).all()
        )
    if by == "offerwall":
        return dict(
            session.execute(
                sa.select(col(Offerwall.id), col(Offerwall.name)).where(col(Offerwall.id).in_(keys))
            ).all()
        )
    if by == "country":
        return {k: _country_label(k) for k in keys}
    return {}


def _country_label(code: str) -> str:
    if code == UNKNOWN_COUNTRY:
        return "unknown"
    return country_named(code).label
