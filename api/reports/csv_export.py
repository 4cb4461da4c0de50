"""A report as CSV (the reports page's download): its rows and totals, the USD columns and,
for a publisher paid in another currency, the same amounts in theirs; for every publisher
the currency given with and without promotions; a label a spreadsheet would run as a
formula is written as text. Staff's margin report as CSV too (`margin_csv`).
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

from api.core.money import format_money, usd
from api.reports.figures import Currency, Report, ReportRow
from api.reports.margin import MarginReport


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
    # Every publisher (their report is in their currency): the currency given to players
    # with and without promotions, and the conversions a promotion multiplied.
    given = report.amounts_in
    if given is not None:
        header += ["currency_given", "currency_given_without_promotions", "promoted_conversions"]
    # Staff and designers: what the games spent (revenue); never in a publisher's report.
    spends = report.totals.spend_micros is not None
    if spends:
        header.append("spend_usd")
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
        if given is not None:
            line += [
                format_money(r.given_amount or Decimal(0), decimals=given.decimals, plain=True),
                format_money(r.payout_amount or Decimal(0), decimals=given.decimals, plain=True),
                r.promoted,
            ]
        if spends:
            line.append(format_money(usd(r.spend_micros or 0), plain=True))
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


MARGIN_HEADER = (
    "conversions",
    "held",
    "revenue_usd",
    "payout_usd",
    "margin_usd",
    "margin_percent",
)


def margin_csv(report: MarginReport) -> str:
    """Staff's margin report: its rows, then the totals; amounts in USD to the micro (the
    totals are the rows' sums exactly), the margin's share of revenue blank without
    revenue."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([report.by, *MARGIN_HEADER])
    for r in [*report.rows, report.totals]:
        percent = r.margin_percent
        writer.writerow(
            [
                _cell(r.label),
                r.conversions,
                r.held,
                format_money(r.revenue_usd, decimals=6, plain=True),
                format_money(r.payout_usd, decimals=6, plain=True),
                format_money(r.margin_usd, decimals=6, plain=True),
                "" if percent is None else f"{percent:f}",
            ]
        )
    return out.getvalue()
