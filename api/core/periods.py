"""Periods of live operations (docs/missions.md#live-operations): days, weeks and months
that turn over at midnight in a time zone, and a rotating pool's picks per player and period.

A period is named by the date it starts on in its zone ("2026-11-28"), so names sort in
time order; its bounds are the UTC instants of its first midnight and the next one. A day
across a DST change is 23 or 25 hours long. A midnight that a DST change skips (a few
zones move their clocks at 00:00) starts the day at the first instant after the gap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from models.offer_schemas import WEEKDAYS


@lru_cache(maxsize=512)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


@dataclass(frozen=True)
class Period:
    """How often something turns over: `every` day, week or month in `zone`."""

    every: str  # "day", "week" or "month"
    zone: str = "UTC"
    week_starts_on: str = "monday"

    @classmethod
    def of(cls, definition: dict[str, Any] | None) -> Period | None:
        """From a stored `recurrence` (or a pool's settings); None for none."""
        if not definition:
            return None
        return cls(
            str(definition["every"]),
            str(definition.get("timeZone") or "UTC"),
            str(definition.get("weekStartsOn") or "monday"),
        )

    def first_day(self, moment: datetime) -> date:
        """The local date the period holding `moment` starts on."""
        day = moment.astimezone(_zone(self.zone)).date()
        if self.every == "week":
            back = (day.weekday() - WEEKDAYS.index(self.week_starts_on)) % 7
            return day - timedelta(days=back)
        if self.every == "month":
            return day.replace(day=1)
        return day

    def key(self, moment: datetime) -> str:
        """The period's name: its first date, "2026-11-28"."""
        return self.first_day(moment).isoformat()

    def bounds(self, moment: datetime) -> tuple[datetime, datetime]:
        """The UTC instants the period holding `moment` starts and ends at."""
        first = self.first_day(moment)
        return self._midnight(first), self._midnight(self._next(first))

    def bounds_of(self, key: str) -> tuple[datetime, datetime]:
        """The bounds of the period named `key`."""
        first = date.fromisoformat(key)
        return self._midnight(first), self._midnight(self._next(first))

    def ends(self, moment: datetime) -> datetime:
        """When the period holding `moment` ends (the next one starts)."""
        return self.bounds(moment)[1]

    def _next(self, first: date) -> date:
        if self.every == "week":
            return first + timedelta(days=7)
        if self.every == "month":
            return (first.replace(day=28) + timedelta(days=4)).replace(day=1)
        return first + timedelta(days=1)

    def _midnight(self, day: date) -> datetime:
        zone = _zone(self.zone)
        local = datetime.combine(day, time(0), tzinfo=zone)
        instant = local.astimezone(UTC)
        # A skipped midnight reads as the hour before the change: take the gap's end.
        if instant.astimezone(zone).date() < day:
            instant = datetime.combine(day, time(1), tzinfo=zone).astimezone(UTC)
            while (instant - timedelta(minutes=15)).astimezone(zone).date() == day:
                instant -= timedelta(minutes=15)
        return instant


def in_draw(members: Sequence[tuple[str, datetime | None]], start: datetime) -> list[str]:
    """The members of a pool a period that starts at `start` draws from, of its members
    (mission id, in the pool's draw since; None: since before any period) open now: those
    in the draw since the period's start. One that joined later (added to the pool,
    started, opened again) waits for the next period, so no one's picks change under
    them; one that ended is not among `members`, and the next of each player's order takes
    its place. A pool with none of them since the start (a new pool) draws from those it
    has had since its first one joined."""
    joined = [since for _, since in members]
    cut = start
    if joined and all(since is not None and since > start for since in joined):
        cut = min(since for since in joined if since is not None)
    return [mission for mission, since in members if since is None or since <= cut]


def period_picks(
    members: Sequence[tuple[str, datetime | None]],
    size: int,
    period: Period,
    *,
    pool: str,
    offerwall_id: str,
    uid: str,
    now: datetime,
) -> frozenset[str]:
    """A player's picks of a pool in the period holding `now`, of its members open now
    (`in_draw`): the listing, the wall and a tracking link's click all ask this."""
    start = period.bounds(now)[0]
    return picks(
        in_draw(members, start),
        size,
        pool=pool,
        offerwall_id=offerwall_id,
        uid=uid,
        key=period.key(now),
    )


def picks(
    missions: Sequence[str], size: int, *, pool: str, offerwall_id: str, uid: str, key: str
) -> frozenset[str]:
    """The `size` missions of a pool one player sees in the period named `key`: those with
    the lowest digest of (pool, offerwall, uid, period, mission). The same player gets the
    same picks on every request and device; each mission is picked for about size/len of
    the players, and a player's picks change from period to period. A mission's rank
    depends on it alone, so a mission left out of `missions` gives its place to the next
    one in the player's order and leaves the other picks as they were."""
    if len(missions) <= size:
        return frozenset(missions)
    seed = f"{pool}\x1f{offerwall_id}\x1f{uid}\x1f{key}\x1f".encode()
    ranked = sorted(missions, key=lambda mission: hashlib.sha256(seed + mission.encode()).digest())
    return frozenset(ranked[:size])
