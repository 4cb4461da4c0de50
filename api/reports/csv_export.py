"""A report as CSV (the reports page's download): its rows and totals, the USD columns and,
for a publisher paid in another currency, the same amounts in theirs; a label a spreadsheet
would run as a formula is written as text.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

from api.core.money import format_money, usd
from api.reports.figures import Currency, Report, ReportRow


def to_csv(report: Report, dimension: str) -> str:
    """The report's rows and totals; the USD columns, then (a publisher paid in another
    currency) the same amounts in theirs."""
    out = io.StringIO()
    writer = csv.writer(out)
    header = [dimension, "clicks", "starts", "conversions", "conversion_rate", "payout_usd"]
    header += ["epc_usd", "reversed", "reversed_payout_usd", "net_payout_usd"]
    code = report.currency.code.lower() if report.currency else ""
    if code:
        header += [f"payout_{code}", f"epc_{code}", f"reversed_payout_{code}"]
        header.append(f"net_payout_{code}")
    header.append("refused_clicks")
    writer.writerow(header)
    for r in [*report.rows, report.totals]:
        line: list[Any] = [_cell(r.label), r.clicks, r.starts, r.conversions, _rate(r)]
        line += [
            format_money(usd(r.payout_micros), plain=True),
            format_money(usd(r.payout_micros) / r.clicks, decimals=4, plain=True)
            if r.clicks
            else "",
            r.reversed,
            format_money(usd(r.reversed_micros), plain=True),
            format_money(usd(r.net_micros), plain=True),
        ]
        if report.currency:
            line += _local_cells(r, report.currency)
        line.append(r.refused)
        writer.writerow(line)
    return out.getvalue()


def _rate(r: ReportRow) -> str:
    """The conversion rate as the reports page writes it: "42.9%", "–" without clicks."""
    return "–" if r.rate_percent is None else f"{r.rate_percent:.1f}%"


def _local_cells(r: ReportRow, currency: Currency) -> list[str]:
    """A row's amounts in the publisher's currency, as plain numbers for a spreadsheet."""

    def cell(amount: Decimal | None, places: int) -> str:
        return "" if amount is None else format_money(amount, decimals=places, plain=True)

    places = currency.decimals
    return [
        cell(r.payout_amount, places),
        cell(r.epc_amount, max(places, 2)),
        cell(r.reversed_amount, places),
        cell(r.net_amount, places),
    ]


def _cell(text: str) -> str:
    """A label as a spreadsheet takes it as text: a sub value comes from whoever opened
    the link, and "=…" (or +, -, @) would be run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
