"""What live operations ask of a click (docs/missions.md#live-operations): a pooled
mission only among the player's picks of the period, a mission at its cap of the period
(or its cap at this offerwall) refused until the period turns, and the period a new
progress row belongs to.

Read only for the missions that use them: a click on any other mission runs no statement
here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from api.core.periods import Period, period_picks
from api.core.refusals import N_
from api.missions import open_offers
from api.tracking.refusal import TrackingRefusal
from models import RefusalReason as Reason
from models.tables import mission_pool as _pool
from models.tables import progress as _progress


@dataclass(frozen=True)
class _Pool:
    name: str
    size: int
    period: Period
    members: tuple[tuple[str, datetime | None], ...]


@dataclass
class ClickLive:
    """The live operations of a click's missions, read once per click."""

    offerwall_id: str
    now: datetime
    recurring: dict[str, Period] = field(default_factory=dict)
    pools: dict[str, _Pool] = field(default_factory=dict)  # by mission id
    # Missions full now: when they open again (None: not before their cap changes).
    closed: dict[str, datetime | None] = field(default_factory=dict)

    def check_mission(self, mission_id: str, who: str) -> None:
        """Refuse a click on a mission that is full for now, or not among the picks of its
        pool for the player `who` (their uid: a pooled mission's link needs one, since a
        clickid is the browser's to choose)."""
        if mission_id in self.closed:
            raise self.capped_refusal()
        pool = self.pools.get(mission_id)
        if pool is None:
            return
        if not who:
            raise TrackingRefusal(
                Reason.INVALID_LINK,
                400,
                N_("Missing player"),
                N_("This mission is picked for each player: the link needs the player's uid."),
            )
        chosen = period_picks(
            pool.members,
            pool.size,
            pool.period,
            pool=pool.name,
            offerwall_id=self.offerwall_id,
            uid=who,
            now=self.now,
        )
        if mission_id not in chosen:
            raise TrackingRefusal(
                Reason.NOT_PICKED,
                403,
                N_("Not one of your missions now"),
                N_(
                    "This mission is not among your missions for this period. Your missions "
                    "change on {turns}; open the offerwall again to see yours."
                ),
                turns=pool.period.ends(self.now),
            )

    def any_open(self, missions: list[Any]) -> bool:
        return any(m.id not in self.closed for m in missions)

    def capped_refusal(self) -> TrackingRefusal:
        reopen = [moment for moment in self.closed.values() if moment is not None]
        if reopen and len(reopen) == len(self.closed):
            return TrackingRefusal(
                Reason.CAPPED,
                410,
                N_("Offer full for now"),
                N_("This offer has reached its limit for now; it opens again on {when}."),
                when=min(reopen),
            )
        return TrackingRefusal(
            Reason.CAPPED, 410, N_("Offer ended"), N_("This offer has reached its limit.")
        )

    def period_of(
        self, db: Connection, mission_id: str, player: str, now: datetime
    ) -> tuple[str, datetime, datetime | None, bool]:
        """(period, started at, resets at, first time) of the progress a click starts: a
        recurring mission's player who took part before counts from the period's start."""
        pool = self.pools.get(mission_id)
        if pool is not None:
            start, end = pool.period.bounds(now)
            return pool.period.key(now), now, end, True
        period = self.recurring.get(mission_id)
        if period is None:
            return "", now, None, True
        start, end = period.bounds(now)
        before = db.execute(
            sa.select(_progress.c.id)
            .where(_progress.c.mission_id == mission_id, _progress.c.platform_user_id == player)
            .limit(1)
        ).first()
        if before is None:
            return period.key(now), now, end, True
        return period.key(now), start, end, False


def for_click(db: Connection, missions: list[Any], offerwall_id: str, now: datetime) -> ClickLive:
    """The live operations of these missions (a mission's click has one, a quest's its
    missions), as of `now`."""
    live = ClickLive(offerwall_id, now)
    for m in missions:
        if m.recurrence:
            live.recurring[m.id] = Period.of(m.recurrence) or Period("day")
    pooled = [m for m in missions if m.pool]
    for m in pooled:
        row = db.execute(
            sa.select(_pool).where(_pool.c.game_id == m.game_id, _pool.c.name == m.pool)
        ).first()
        if row is None:
            continue  # a pool removed since: the mission is offered as any other
        members = open_offers.pool_members(db, now, game_id=m.game_id, pool=m.pool)
        live.pools[m.id] = _Pool(
            row.name,
            row.size,
            Period(row.every, row.time_zone, row.week_starts_on),
            tuple(members.get((m.game_id, m.pool), ())),
        )
    capped = [m for m in missions if open_offers.limited(m)]
    if capped:
        live.closed = open_offers.closed_missions(db, capped, offerwall_id, now)
    return live
