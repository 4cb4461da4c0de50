"""GET /offerwall/reports (docs/contract.md#reporting-api): a publisher's reports, by API key.

The figures are `reports.build_report`'s for the offerwall's publisher, the function the
portal's reports page calls, so the API and the portal cannot show different numbers.
This module finds the offerwall of the key (as the offers listing does, the previous key
in its grace period included), reads the query, and cuts and writes the JSON page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from sqlmodel import Session

from api.accounts import Account, Forbidden
from api.core.crypto import SecretBox
from api.core.errors import ApiError
from api.listing import (
    MAX_OFFSET,
    approved_offerwall,
    invalid_parameter,
    whole_number,
)
from api.reports import figures as reports
from api.reports import ranges
from models import OfferwallStatus, Role

GROUP_BY = reports.PUBLISHER_DIMENSIONS
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
# ASCII digits only: `date.fromisoformat` also takes "20260105" and week dates.
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True)
class ReportQuery:
    first: date
    last: date
    group_by: str
    limit: int
    offset: int


def day_parameter(name: str, raw: str | None) -> str:
    """A date parameter, checked (400 `invalid_parameter`): "" when not given."""
    if raw is None or raw == "":
        return ""
    rule = f"a date (YYYY-MM-DD) from {ranges.EARLIEST} to {ranges.LATEST}"
    if not _DAY.fullmatch(raw):
        raise invalid_parameter(name, raw, rule)
    try:
        day = date.fromisoformat(raw)
    except ValueError:  # 2026-02-30
        raise invalid_parameter(name, raw, rule) from None
    if not ranges.EARLIEST <= day <= ranges.LATEST:
        raise invalid_parameter(name, raw, rule)
    return raw


def parse_query(
    *,
    start: str | None,
    end: str | None,
    group_by: str | None,
    limit: str | None,
    offset: str | None,
    today: date | None = None,
) -> ReportQuery:
    """The query of `GET /offerwall/reports`, or 400 `invalid_parameter` naming the
    parameter. The range is the portal's (`ranges.parse_range`): inclusive UTC days, the
    last 30 days by default, at most `ranges.MAX_DAYS`. `limit` over the maximum is
    clamped, as the offers listing clamps it."""
    first, last = day_parameter("from", start), day_parameter("to", end)
    try:
        days = ranges.parse_range(first, last, today=today)
    except ranges.ReportError as exc:  # it starts after it ends, or covers too many days
        details = [{"path": "from", "value": (start or "")[:50]}]
        raise ApiError(400, "invalid_parameter", exc.message, details) from None
    grouping = group_by or "day"
    if grouping not in GROUP_BY:
        raise invalid_parameter("groupBy", grouping, f"one of {', '.join(GROUP_BY)}")
    page_size = min(whole_number("limit", limit, DEFAULT_LIMIT), MAX_LIMIT)
    skip = whole_number("offset", offset, 0)
    if skip > MAX_OFFSET:
        raise invalid_parameter("offset", offset or "", f"at most {MAX_OFFSET}")
    return ReportQuery(*days, group_by=grouping, limit=page_size, offset=skip)


def _not_approved(status: str) -> ApiError:
    return ApiError(
        403,
        "offerwall_not_approved",
        f"This offerwall is {status}; only an approved offerwall has reports.",
    )


def approved_offerwall_id(*, session: Session, box: SecretBox, api_key: str | None) -> str:
    """The id of the key's offerwall, found as the offers listing finds it (the previous
    key in its grace period too): 401 missing or unknown key, 403 not approved."""
    found = approved_offerwall(
        conn=session.connection(), box=box, api_key=api_key, use="has reports"
    )
    return found.id


def publisher_of(offerwall_id: str) -> Account:
    """The offerwall's publisher as the portal's reports see them (its role and offerwall
    are what `build_report` reads): the API key stands for them."""
    return Account(
        id="",
        email="",
        name="",
        role=Role.PUBLISHER,
        studio_id=None,
        offerwall_id=offerwall_id,
        offerwall_status=OfferwallStatus.APPROVED,
    )


def report_page(*, session: Session, offerwall_id: str, query: ReportQuery) -> dict[str, Any]:
    """The report of the query for the offerwall's publisher: one page of its rows, in the
    portal's order, cut in SQL, and the totals of every row."""
    try:
        report = reports.build_report(
            session=session,
            account=publisher_of(offerwall_id),
            dimension=query.group_by,
            first=query.first,
            last=query.last,
            limit=query.limit,
            offset=query.offset,
        )
    except Forbidden:  # suspended since its key was looked up
        raise _not_approved("no longer approved") from None
    currency = report.amounts_in
    assert currency is not None  # a publisher's report is in their currency
    return {
        "statusCode": 200,
        "message": "OK",
        "from": query.first.isoformat(),
        "to": query.last.isoformat(),
        "groupBy": query.group_by,
        "currency": {
            "code": currency.code,
            "name": currency.name,
            "exchangeRate": currency.exchange_rate,
            "decimals": currency.decimals,
        },
        "total": report.count,
        "offset": query.offset,
        "limit": query.limit,
        "data": [{"key": r.key, "label": r.label, **figures(r)} for r in report.rows],
        "totals": figures(report.totals),
    }


def figures(row: reports.ReportRow) -> dict[str, Any]:
    """A row's figures as the API gives them: JSON numbers; the conversion rate and EPC
    are null without clicks."""
    return {
        "clicks": row.clicks,
        "conversions": row.conversions,
        "conversionRate": row.rate_percent,
        "epc": _number(row.epc_amount),
        "payout": _number(row.payout_amount),
        "reversed": row.reversed,
        "reversedPayout": _number(row.reversed_amount),
        "netPayout": _number(row.net_amount),
        "epcUsd": row.epc_usd,
        "payoutUsd": row.payout_micros / 1_000_000,
        "reversedPayoutUsd": row.reversed_micros / 1_000_000,
        "netPayoutUsd": row.net_micros / 1_000_000,
        "refusedClicks": row.refused,
        "currencyGiven": _number(row.given_amount),
        "currencyGivenWithoutPromotions": _number(row.payout_amount),
        "promotedConversions": row.promoted,
    }


def _number(amount: Decimal | None) -> float | None:
    # Amounts have the currency's decimals (EPC at least 2): as a float, JSON prints them
    # as they are (up to 15 significant digits).
    return None if amount is None else float(amount)
