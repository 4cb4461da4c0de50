"""Is this offer open now: the one predicate, in its SQL form and its Python form side by side.

An offer is **running** when it is active, has started (`start_date` unset or not later
than now) and has not expired (`expiration_date` unset or later than now). A mission is **under its cap** while `cap` is unset or `conversions < cap`; a quest
is **under its start cap** while `start_cap` is unset or `starts < start_cap`. An offer is
**open** when it is running and under its cap. The listing shows open offers, a tracking
link refuses the others (410), and a conversion or a quest's new player is counted only
under the cap, in the same conditional `UPDATE`.

Each SQL function takes a Core table (or alias) with the offer's columns; each Python
function takes anything with the same attributes (an ORM row or a Core row). A domain test
checks both forms agree on a table of cases, on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.sql.elements import ColumnElement

from api.core.periods import Period
from api.economics import budgets
from models.tables import cap_count as _cap_count
from models.tables import mission as _mission


def running_sql(table: Any, now: datetime) -> ColumnElement[bool]:
    return sa.and_(
        table.c.is_active,
        sa.or_(table.c.start_date.is_(None), table.c.start_date <= now),
        sa.or_(table.c.expiration_date.is_(None), table.c.expiration_date > now),
    )


def running(offer: Any, now: datetime) -> bool:
    return (
        bool(offer.is_active)
        and (offer.start_date is None or offer.start_date <= now)
        and (offer.expiration_date is None or offer.expiration_date > now)
    )


def under_cap_sql(mission: Any) -> ColumnElement[bool]:
    return sa.or_(mission.c.cap.is_(None), mission.c.conversions < mission.c.cap)


def under_cap(mission: Any) -> bool:
    return mission.cap is None or mission.conversions < mission.cap


def under_start_cap_sql(quest: Any) -> ColumnElement[bool]:
    return sa.or_(quest.c.start_cap.is_(None), quest.c.starts < quest.c.start_cap)


def under_start_cap(quest: Any) -> bool:
    return quest.start_cap is None or quest.starts < quest.start_cap


def mission_open_sql(mission: Any, now: datetime) -> ColumnElement[bool]:
    return sa.and_(running_sql(mission, now), under_cap_sql(mission))


def mission_open(mission: Any, now: datetime) -> bool:
    return running(mission, now) and under_cap(mission)


def quest_open_sql(quest: Any, now: datetime) -> ColumnElement[bool]:
    """The quest's own part; the listing also wants one open mission inside it."""
    return sa.and_(running_sql(quest, now), under_start_cap_sql(quest))


def quest_open(quest: Any, now: datetime) -> bool:
    return running(quest, now) and under_start_cap(quest)


def pool_members(
    conn: Connection, now: datetime, *, game_id: str | None = None, pool: str | None = None
) -> dict[tuple[str, str], list[tuple[str, datetime | None]]]:
    """The missions of each rotating pool a player's picks are drawn from, by (game, pool):
    its running standalone missions, capped ones included (so that a cap reached does not
    reshuffle everyone's picks), in id order, each with when it joined the pool's draw (the
    later of its `pool_since` and its `start_date`; None: before any period), which
    `periods.in_draw` reads."""
    query = sa.select(
        _mission.c.game_id,
        _mission.c.pool,
        _mission.c.id,
        _mission.c.pool_since,
        _mission.c.start_date,
    ).where(_mission.c.pool.is_not(None), _mission.c.quest_id.is_(None), running_sql(_mission, now))
    if game_id is not None:
        query = query.where(_mission.c.game_id == game_id, _mission.c.pool == pool)
    members: dict[tuple[str, str], list[tuple[str, datetime | None]]] = {}
    for game, name, mission_id, pool_since, start_date in conn.execute(
        query.order_by(_mission.c.id)
    ):
        since = max((m for m in (pool_since, start_date) if m is not None), default=None)
        members.setdefault((game, name), []).append((mission_id, since))
    return members


def limited(mission: Any) -> bool:
    """Whether a mission can be closed for a while: by a period cap, its cap at an
    offerwall, or a budget (its own or its game's: any mission with revenue)."""
    return bool(mission.period_caps or mission.cap_per_offerwall or mission.revenue_micros)


def closed_missions(
    db: Connection, missions: list[Any], offerwall_id: str | None, now: datetime
) -> dict[str, datetime | None]:
    """Of missions with period caps, a cap per offerwall or a budget, those full at `now`
    (for `offerwall_id`; None: for every offerwall), with when they open again (None: only
    a change of their cap or budget opens them)."""
    closed = _full(db, missions, offerwall_id, now)
    for mission_id, reopen in budgets.closed(db, missions, now).items():
        if mission_id in closed:
            earlier = closed[mission_id]
            reopen = None if earlier is None or reopen is None else max(earlier, reopen)
        closed[mission_id] = reopen
    return closed


def _full(
    db: Connection, missions: list[Any], offerwall_id: str | None, now: datetime
) -> dict[str, datetime | None]:
    wanted: dict[tuple[str, str, str], tuple[int, datetime | None]] = {}
    for m in missions:
        caps = m.period_caps or {}
        zone = str(caps.get("timeZone") or "UTC")
        for every in ("day", "week", "month"):
            if caps.get(every):
                period = Period(every, zone)
                wanted[(m.id, "", f"{every}:{period.key(now)}")] = (
                    int(caps[every]),
                    period.ends(now),
                )
        if m.cap_per_offerwall and offerwall_id is not None:
            wanted[(m.id, offerwall_id, "total")] = (int(m.cap_per_offerwall), None)
    if not wanted:
        return {}
    rows = db.execute(
        sa.select(_cap_count).where(
            _cap_count.c.mission_id.in_(sorted({k[0] for k in wanted})),
            _cap_count.c.period.in_(sorted({k[2] for k in wanted})),
            _cap_count.c.scope.in_(sorted({k[1] for k in wanted})),
        )
    )
    closed: dict[str, datetime | None] = {}
    for row in rows:
        found = wanted.get((row.mission_id, row.scope, row.period))
        if found is None or row._mapping["count"] < found[0]:
            continue
        reopen = found[1]
        if row.mission_id in closed:
            earlier = closed[row.mission_id]
            reopen = None if earlier is None or reopen is None else max(earlier, reopen)
        closed[row.mission_id] = reopen
    return closed
