"""A report's date range: inclusive UTC days, typed (`parse_range`: the last 30 days when
empty, at most `MAX_DAYS`) or chosen from the presets beside the inputs (`preset_range`),
and the instants they span (`day_bounds`). The portal's reports page and the reporting API
(`reporting_api.py`, docs/contract.md#reporting-api) read ranges the same way; a refused
one is a `ReportError`, as is any report that cannot be made.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from api.core.refusals import DomainError

MAX_DAYS = 366
# The dates a range may name: far from the ends of the calendar, so the range's arithmetic
# (its next day, the 30 days before its end) never leaves it; nothing is older than 2000.
EARLIEST = date(2000, 1, 1)
LATEST = date(9998, 12, 31)
# The date presets beside the range's inputs, in the order they are shown.
PRESETS = {"today": "Today", "7d": "Last 7 days", "30d": "Last 30 days", "month": "This month"}


class ReportError(DomainError, ValueError):
    """A report that cannot be made: a date or range refused, an unknown grouping, an
    offer the account may not report on; `field` names the input."""


def parse_range(start: str, end: str, *, today: date | None = None) -> tuple[date, date]:
    """An inclusive date range; empty means the last 30 days."""
    today = today or datetime.now(UTC).date()
    last = _date(end, "end") if end else today
    first = _date(start, "start") if start else last - timedelta(days=29)
    if first > last:
        raise ReportError("The range starts after it ends.", "start")
    if (last - first).days >= MAX_DAYS:
        raise ReportError(f"A report covers at most {MAX_DAYS} days.", "start")
    return first, last


def _date(text: str, field: str) -> date:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ReportError("Enter a date (YYYY-MM-DD).", field) from None
    if not EARLIEST <= day <= LATEST:
        raise ReportError(f"Enter a date from {EARLIEST} to {LATEST}.", field)
    return day


def preset_range(preset: str, *, today: date | None = None) -> tuple[date, date]:
    """The range of a preset, in UTC days: today, the last 7 or 30 days, this month."""
    today = today or datetime.now(UTC).date()
    if preset == "today":
        return today, today
    if preset == "7d":
        return today - timedelta(days=6), today
    if preset == "30d":
        return today - timedelta(days=29), today
    if preset == "month":
        return today.replace(day=1), today
    raise ReportError("Choose one of the preset ranges.")


def day_bounds(first: date, last: date) -> tuple[datetime, datetime]:
    """The range's UTC days as instants: its first midnight, and the midnight after it."""
    return (
        datetime.combine(first, time.min, tzinfo=UTC),
        datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC),
    )
