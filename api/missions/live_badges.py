"""What a mission does in live operations, in words the missions list shows at a glance:
recurring, pooled, staged, full for its period, its budget spent, not started yet."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from models import Mission


@dataclass(frozen=True)
class LiveBadge:
    """One fact of a mission's live operations, as the list shows it at a glance."""

    kind: str  # "recurring" | "pool" | "stages" | "full" | "budget" | "scheduled"
    text: str  # "Daily · America/New_York", "Pool daily-pvp", "3 stages", …


EVERY_BADGE = {"day": "Daily", "week": "Weekly", "month": "Monthly"}


def live_badges(
    m: Mission,
    pools: dict[str, Any],
    closed: dict[str, datetime | None],
    now: datetime,
    spent: dict[str, datetime | None] | None = None,
) -> list[LiveBadge]:
    """What a mission does in live operations, in words: recurring, pooled, staged, full
    for its period now (and until when), its budget spent (and until when), not started
    yet."""
    badges = []
    if m.recurrence:
        every = str(m.recurrence.get("every", "day"))
        week = str(m.recurrence.get("weekStartsOn") or "monday")
        starts = f" from {week.capitalize()}" if every == "week" and week != "monday" else ""
        zone = m.recurrence.get("timeZone") or "UTC"
        badges.append(LiveBadge("recurring", f"{EVERY_BADGE.get(every, every)}{starts} · {zone}"))
    if m.pool:
        pool = pools.get(m.pool)
        every = f" · {EVERY_BADGE.get(pool.every, pool.every).lower()}" if pool else ""
        badges.append(LiveBadge("pool", f"Pool {m.pool}{every}"))
    if m.stages:
        badges.append(LiveBadge("stages", f"{len(m.stages)} stages"))
    if m.id in closed:
        reopens = closed[m.id]
        if reopens is None:
            badges.append(LiveBadge("full", "Full at its cap"))
        else:
            zone = str((m.period_caps or {}).get("timeZone") or "UTC")
            badges.append(LiveBadge("full", f"Full · reopens {moment(reopens, zone, now)}"))
    if spent is not None and m.id in spent:
        reopens = spent[m.id]
        if reopens is None:
            badges.append(LiveBadge("budget", "Budget spent · raise it to reopen"))
        else:
            badges.append(
                LiveBadge("budget", f"Budget spent · reopens {moment(reopens, 'UTC', now)}")
            )
    if m.start_date is not None and m.start_date > now:
        badges.append(LiveBadge("scheduled", f"Starts {moment(m.start_date, 'UTC', now)}"))
    return badges


def moment(when: datetime, zone: str, now: datetime) -> str:
    """A moment as the list says it: "24 Dec", "24 Dec 15:00" (in `zone`, named unless it
    is UTC at midnight), with the year when it is not this one."""
    local = when.astimezone(ZoneInfo(zone))
    text = f"{local.day} {local:%b}"
    if local.year != now.astimezone(ZoneInfo(zone)).year:
        text += f" {local.year}"
    if (local.hour, local.minute) != (0, 0):
        text += f" {local:%H:%M}"
    if zone != "UTC":
        text += f" ({zone})"
    return text
