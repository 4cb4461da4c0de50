"""Moments and amounts as the portal writes them for people: every page's date, time and
money goes through here, so one moment or one payout reads the same on every page.

Amounts are rounded as `api.core.money` rounds them (half-up, as postbacks round), so a
$1.505 payout reads $1.51 here as in a postback. The hosted wall writes its own, in the
player's language (`api.wall.i18n`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from api.core.money import format_money, format_usd


def when(moment: datetime | None) -> str:
    """A moment to the minute, in UTC: "2026-01-05 14:03 UTC" ("" for none)."""
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def exact(moment: datetime | None) -> str:
    """A moment to the second, in UTC, as the postback pages and the staff's publisher
    list write it: "2026-01-05 14:03:09 UTC" ("" for none)."""
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def minute(moment: datetime | None) -> str:
    """A moment to the minute, unlabelled, as the conversion lists write it:
    "2026-01-05 14:03" ("" for none)."""
    return f"{moment:%Y-%m-%d %H:%M}" if moment else ""


def second(moment: datetime) -> str:
    """A moment to the second, unlabelled, as the events set aside are listed:
    "2026-01-05 14:03:09" (UTC)."""
    return f"{moment:%Y-%m-%d %H:%M:%S}"


def instant(moment: datetime) -> str:
    """A moment to the millisecond, as the event debugger lists events:
    "2026-01-05 14:03:09.250" (UTC, unlabelled)."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def day(moment: datetime) -> str:
    """A moment's day: "2026-01-05"."""
    return moment.strftime("%Y-%m-%d")


def age(span: timedelta) -> str:
    """A span of time, to its largest unit or two: "45 s", "12 min", "3 h 5 min",
    "2 days 4 h" (a negative span, a clock ahead of ours, reads "0 s")."""
    seconds = max(0, int(span.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes} min"
    if days < 1:
        rest = minutes % 60
        return f"{hours} h {rest} min" if rest else f"{hours} h"
    rest = hours % 24
    unit = "day" if days == 1 else "days"
    return f"{days} {unit} {rest} h" if rest else f"{days} {unit}"


def ago(moment: datetime | None, now: datetime) -> str:
    """How long before `now` a moment was: "just now", "12 min ago" ("" for none)."""
    if moment is None:
        return ""
    span = now - moment
    return "just now" if span < timedelta(seconds=5) else f"{age(span)} ago"


def money(amount: Decimal, *, decimals: int = 2, code: str = "") -> str:
    """An amount rounded half-up to `decimals`: "$1,234.51" in US dollars (no `code`),
    "1,234.5 GEM" with a currency's code."""
    return format_money(amount, decimals=decimals, code=code)


def usd(payout_micros: int) -> str:
    """A payout in millionths of a USD, in cents: "$1.51"."""
    return format_usd(payout_micros)
