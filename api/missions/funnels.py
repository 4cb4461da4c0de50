"""Each mission's funnel, for the designer's missions list: tracking-link clicks, players
who started (made any progress on the rule), players still in progress, players who
completed it, and the median time from the click that started a player to their first
completion; for a recurring or pooled mission also per period (`period_funnels`): clicks,
starts and completions of its current period beside the one before.

One statement per list, whatever the number of missions: clicks and progress are grouped
by mission in subqueries, and the median comes from window functions (row_number and count
over each mission's completion times, the middle one or two averaged), which SQLite and
PostgreSQL both run. A mission inside a quest is clicked through the quest's link, so its
clicks are the quest's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from api.core.periods import Period
from models import ProgressStatus
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import mission_pool as _pool
from models.tables import progress as _progress
from models.tables import quest as _quest
from models.tracking import status_at_sql
from models.types import utcnow


@dataclass(frozen=True)
class Funnel:
    clicks: int = 0
    started: int = 0  # players with any progress (a passing event) or a completion
    in_progress: int = 0  # started, not completed, still open (not expired or capped)
    completed: int = 0  # players who completed it at least once
    median_seconds: float | None = None  # click that started the player → first completion


def _seconds(dialect: str, later: Any, earlier: Any) -> Any:
    if dialect == "postgresql":
        return sa.extract("epoch", later - earlier)
    return (sa.func.julianday(later) - sa.func.julianday(earlier)) * 86400.0


def mission_funnels(
    *, session: Session, game_id: str, now: datetime | None = None
) -> dict[str, Funnel]:
    """The funnel of every mission of the game at `now`, by mission id (a mission nobody
    clicked has an empty one): a player whose time limit has passed is no longer in
    progress (`models.tracking.status_at`). One SQL statement."""
    dialect = session.get_bind().dialect.name
    game_missions = sa.select(_mission.c.id).where(_mission.c.game_id == game_id)
    game_quests = sa.select(_quest.c.id).where(_quest.c.game_id == game_id)
    clicked = sa.func.coalesce(_click.c.mission_id, _click.c.quest_id)
    clicks = (
        sa.select(clicked.label("offer_id"), sa.func.count().label("n"))
        .where(
            sa.or_(
                _click.c.mission_id.in_(game_missions.scalar_subquery()),
                _click.c.quest_id.in_(game_quests.scalar_subquery()),
            )
        )
        .group_by(clicked)
        .subquery("clicks")
    )
    p = _progress.c
    done = p.completions > 0
    some = sa.or_(p.count > 0, done)
    status = status_at_sql(p.status, p.expires_at, now or utcnow())
    open_ = sa.and_(status == ProgressStatus.STARTED, sa.not_(done), p.count > 0)
    players = (
        sa.select(
            p.mission_id,
            sa.func.sum(sa.case((some, 1), else_=0)).label("started"),
            sa.func.sum(sa.case((open_, 1), else_=0)).label("in_progress"),
            sa.func.sum(sa.case((done, 1), else_=0)).label("completed"),
        )
        .where(p.mission_id.in_(game_missions.scalar_subquery()))
        .group_by(p.mission_id)
        .subquery("players")
    )
    first = _conversion.c
    durations = (
        sa.select(
            p.mission_id,
            _seconds(dialect, first.created_at, p.started_at).label("seconds"),
        )
        .select_from(
            _progress.join(_conversion, sa.and_(first.progress_id == p.id, first.sequence == 1))
        )
        .where(p.mission_id.in_(game_missions.scalar_subquery()))
        .subquery("durations")
    )
    d = durations.c
    ranked = sa.select(
        d.mission_id,
        d.seconds,
        sa.func.row_number().over(partition_by=d.mission_id, order_by=d.seconds).label("rn"),
        sa.func.count().over(partition_by=d.mission_id).label("n"),
    ).subquery("ranked")
    r = ranked.c
    # The middle row (odd count) or the two middle rows (even): 2·rn is n, n+1 or n+2.
    medians = (
        sa.select(r.mission_id, sa.func.avg(r.seconds).label("median"))
        .where((r.rn * 2).in_([r.n, r.n + 1, r.n + 2]))
        .group_by(r.mission_id)
        .subquery("medians")
    )
    query = (
        sa.select(
            _mission.c.id,
            clicks.c.n,
            players.c.started,
            players.c.in_progress,
            players.c.completed,
            medians.c.median,
        )
        .select_from(
            _mission.outerjoin(
                clicks,
                clicks.c.offer_id == sa.func.coalesce(_mission.c.quest_id, _mission.c.id),
            )
            .outerjoin(players, players.c.mission_id == _mission.c.id)
            .outerjoin(medians, medians.c.mission_id == _mission.c.id)
        )
        .where(_mission.c.game_id == game_id)
    )
    return {
        row.id: Funnel(
            clicks=int(row.n or 0),
            started=int(row.started or 0),
            in_progress=int(row.in_progress or 0),
            completed=int(row.completed or 0),
            median_seconds=None if row.median is None else float(row.median),
        )
        for row in session.execute(query)
    }


def duration_words(seconds: float | None) -> str:
    """A duration as people say it: "45 s", "12 min", "2 h 5 min", "3 d 4 h"; "–" for none."""
    if seconds is None:
        return "–"
    total = max(0, round(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs and minutes < 10 else f"{minutes} min"
    return f"{secs} s"


# --- per period (docs/missions.md#live-operations) ---------------------------------------


@dataclass(frozen=True)
class PeriodCounts:
    clicks: int = 0  # on its tracking link (a quest's, inside one) in the period
    started: int = 0  # players whose progress row of the period has any progress
    completed: int = 0  # players converted in the period (a ladder's: at its last stage)


@dataclass(frozen=True)
class PeriodFunnel:
    """A recurring or pooled mission's funnel in its current period and the one before,
    each named by its first date ("2026-11-28")."""

    every: str  # "day", "week" or "month"
    current: str
    previous: str
    now: PeriodCounts = PeriodCounts()
    before: PeriodCounts = PeriodCounts()


def mission_period(mission: Any, pools: dict[str, Any]) -> Period | None:
    """The period a mission turns over with: its recurrence's, or its pool's; None for a
    mission that does not turn over."""
    if mission.recurrence:
        return Period.of(mission.recurrence)
    pool = pools.get(mission.pool or "")
    if pool is None:
        return None
    return Period(pool.every, pool.time_zone or "UTC", pool.week_starts_on or "monday")


def period_funnels(
    *, session: Session, game_id: str, now: datetime | None = None
) -> dict[str, PeriodFunnel]:
    """Of every recurring or pooled mission of the game, by id: clicks, players started
    and players who completed it in the period holding `now` and in the one before.
    Progress rows and conversions are counted by their `period`, clicks by their time
    within the period's bounds. The periods are read first (each mission's zone and
    length); then one grouped SQL statement counts all of them."""
    now = now or utcnow()
    m = _mission.c
    pools = {
        row.name: row for row in session.execute(sa.select(_pool).where(_pool.c.game_id == game_id))
    }
    missions = session.execute(
        sa.select(m.id, m.quest_id, m.recurrence, m.pool, m.stages).where(
            m.game_id == game_id, sa.or_(m.recurrence.is_not(None), m.pool.is_not(None))
        )
    ).all()
    wanted: list[Any] = []
    funnels: dict[str, PeriodFunnel] = {}
    moment_type = _click.c.created_at.type
    for row in missions:
        period = mission_period(row, pools)
        if period is None:
            continue
        start, end = period.bounds(now)
        previous = period.key(start - timedelta(microseconds=1))
        funnels[row.id] = PeriodFunnel(period.every, period.key(now), previous)
        for which, key, (first, last) in (
            ("now", period.key(now), (start, end)),
            ("before", previous, period.bounds_of(previous)),
        ):
            wanted.append(
                sa.select(
                    sa.literal(row.id).label("mission_id"),
                    sa.literal(row.quest_id or row.id).label("offer_id"),
                    sa.literal(which).label("which"),
                    sa.literal(key).label("period"),
                    sa.literal(first, moment_type).label("starts"),
                    sa.literal(last, moment_type).label("ends"),
                    sa.literal(len(row.stages or [])).label("last_stage"),
                )
            )
    if not wanted:
        return {}
    w = sa.union_all(*wanted).subquery("wanted")
    by = (w.c.mission_id, w.c.which)
    clicked = sa.func.coalesce(_click.c.mission_id, _click.c.quest_id)
    clicks = (
        sa.select(*by, sa.func.count().label("n"))
        .select_from(
            w.join(
                _click,
                sa.and_(
                    clicked == w.c.offer_id,
                    _click.c.created_at >= w.c.starts,
                    _click.c.created_at < w.c.ends,
                ),
            )
        )
        .group_by(*by)
        .subquery("period_clicks")
    )
    p = _progress.c
    started = (
        sa.select(*by, sa.func.count().label("n"))
        .select_from(
            w.join(_progress, sa.and_(p.mission_id == w.c.mission_id, p.period == w.c.period))
        )
        .where(sa.or_(p.count > 0, p.completions > 0))
        .group_by(*by)
        .subquery("period_started")
    )
    c = _conversion.c
    completed = (
        sa.select(*by, sa.func.count(sa.distinct(c.platform_user_id)).label("n"))
        .select_from(
            w.join(_conversion, sa.and_(c.mission_id == w.c.mission_id, c.period == w.c.period))
        )
        .where(sa.or_(c.stage.is_(None), w.c.last_stage == 0, c.stage == w.c.last_stage))
        .group_by(*by)
        .subquery("period_completed")
    )

    def on(sub: Any) -> Any:
        return sa.and_(sub.c.mission_id == w.c.mission_id, sub.c.which == w.c.which)

    query = sa.select(
        *by, clicks.c.n.label("clicks"), started.c.n.label("started"), completed.c.n.label("done")
    ).select_from(
        w.outerjoin(clicks, on(clicks))
        .outerjoin(started, on(started))
        .outerjoin(completed, on(completed))
    )
    counts: dict[tuple[str, str], PeriodCounts] = {
        (row.mission_id, row.which): PeriodCounts(
            int(row.clicks or 0), int(row.started or 0), int(row.done or 0)
        )
        for row in session.execute(query)
    }
    return {
        mission_id: replace(
            funnel,
            now=counts.get((mission_id, "now"), PeriodCounts()),
            before=counts.get((mission_id, "before"), PeriodCounts()),
        )
        for mission_id, funnel in funnels.items()
    }
