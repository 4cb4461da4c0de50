"""GET /staff/reports/margin (docs/economics.md#reports): staff's margin report over HTTP.

Staff are who the portal's session cookie says they are (`accounts.SESSION_COOKIE`, the
cookie the portal's sign-in sets): the endpoint answers a signed-in staff account only,
from the portal's own pages or a script that holds a staff session. The figures are
`margin.build_margin`'s, the function the portal's Margin page calls, so the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine

from api.accounts import Account, account_for
from api.core.errors import ApiError
from api.listing import invalid_parameter
from api.reports import ranges
from api.reports.margin import BY, MarginReport, MarginRow
from api.reports.reporting_api import day_parameter
from models import Role

FORMATS = ("json", "csv")


@dataclass(frozen=True)
class MarginQuery:
    first: date
    last: date
    by: str
    format: str


def staff_account(*, engine: Engine, token: str) -> Account:
    """The signed-in staff account of the session token: 401 `not_signed_in` without an
    open session, 403 `staff_only` for another role."""
    account = account_for(engine=engine, token=token) if token else None
    if account is None:
        raise ApiError(
            401,
            "not_signed_in",
            "Sign in to the portal as staff: this endpoint reads the portal's session cookie.",
        )
    if account.role != Role.STAFF:
        raise ApiError(403, "staff_only", "Only staff may read margin reports.")
    return account


def parse_query(
    *,
    start: str | None,
    end: str | None,
    by: str | None,
    output: str | None,
    today: date | None = None,
) -> MarginQuery:
    """The query, or 400 `invalid_parameter` naming the parameter: the range as the
    reporting API reads it (inclusive UTC days, the last 30 by default, at most
    `ranges.MAX_DAYS`), `by` one of `margin.BY` (default day), `format` json or csv."""
    first, last = day_parameter("from", start), day_parameter("to", end)
    try:
        days = ranges.parse_range(first, last, today=today)
    except ranges.ReportError as exc:
        details = [{"path": "from", "value": (start or "")[:50]}]
        raise ApiError(400, "invalid_parameter", exc.message, details) from None
    grouping = by or "day"
    if grouping not in BY:
        raise invalid_parameter("by", grouping, f"one of {', '.join(BY)}")
    shape = output or "json"
    if shape not in FORMATS:
        raise invalid_parameter("format", shape, f"one of {', '.join(FORMATS)}")
    return MarginQuery(*days, by=grouping, format=shape)


def margin_page(report: MarginReport) -> dict[str, Any]:
    return {
        "statusCode": 200,
        "message": "OK",
        "from": report.first.isoformat(),
        "to": report.last.isoformat(),
        "by": report.by,
        "total": len(report.rows),
        "data": [{"key": r.key, "label": r.label, **figures(r)} for r in report.rows],
        "totals": figures(report.totals),
    }


def figures(row: MarginRow) -> dict[str, Any]:
    """A row's figures: counts, the amounts in USD as JSON numbers (to the micro) and in
    micros (exact integers), the margin's share of revenue (null without revenue)."""
    percent = row.margin_percent
    return {
        "conversions": row.conversions,
        "held": row.held,
        "revenueUsd": _number(row.revenue_usd),
        "payoutUsd": _number(row.payout_usd),
        "marginUsd": _number(row.margin_usd),
        "marginPercent": None if percent is None else float(percent),
        "revenueMicros": row.revenue_micros,
        "payoutMicros": row.payout_micros,
        "marginMicros": row.margin_micros,
    }


def _number(amount: Decimal) -> float:
    return float(amount)
