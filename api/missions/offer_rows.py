"""The missions list: the game's quests and missions as rows, each mission with its rule
in words, its funnel, its live badges (`live_badges.py`) and, when it turns over, its
funnel this period and the one before."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from api.economics import budgets
from api.missions import offers
from api.missions.funnels import (
    Funnel,
    PeriodFunnel,
    duration_words,
    mission_funnels,
    period_funnels,
)
from api.missions.live_badges import LiveBadge, live_badges, moment
from api.missions.open_offers import closed_missions
from api.missions.rule_words import summary
from models import Mission, Quest
from models.offer_schemas import rule_in
from models.types import utcnow


@dataclass(frozen=True)
class PeriodLine:
    """A recurring or pooled mission's funnel in one period, in words."""

    label: str  # "Today", "Last week", "Nov 2026"
    first_day: str  # the period's first date, "2026-11-28"
    clicks: str
    started: str
    completed: str


@dataclass(frozen=True)
class OfferRow:
    id: str
    kind: str  # "mission" | "quest"
    title: str
    payout_micros: int | None  # USD millionths; None for a quest
    active: bool
    cap: str  # "3 / 100 conversions", "2 / ∞ players" (a quest's start cap)
    rule: str  # the rule in words
    quest: str  # for a mission inside a quest: the quest's name
    quest_id: str
    # The funnel (api/missions/funnels.py); a quest's missions carry their own.
    clicks: str = ""
    started: str = ""
    in_progress: str = ""
    completed: str = ""
    median_time: str = ""
    live: list[LiveBadge] = field(default_factory=list)
    # A recurring or pooled mission's funnel this period and the one before.
    periods: list[PeriodLine] = field(default_factory=list)
    # What the game pays per conversion (USD millionths; None: no revenue set, or a quest).
    revenue_micros: int | None = None


def period_lines(funnel: PeriodFunnel) -> list[PeriodLine]:
    """This period's funnel and the one before's, each named as people say it."""
    return [
        PeriodLine(
            _period_label(funnel.every, key, this),
            key,
            str(c.clicks),
            str(c.started),
            str(c.completed),
        )
        for key, c, this in (
            (funnel.current, funnel.now, True),
            (funnel.previous, funnel.before, False),
        )
    ]


def _period_label(every: str, key: str, current: bool) -> str:
    """ "Today", "Last week", "Nov 2026": short enough for one line of the list."""
    if every == "week":
        return "This week" if current else "Last week"
    if every == "month":
        return f"{date.fromisoformat(key):%b %Y}"
    return "Today" if current else "Yesterday"


def _mission_row(
    m: Mission,
    quest: Quest | None,
    funnel: Funnel,
    live: list[LiveBadge],
    periods: PeriodFunnel | None,
) -> OfferRow:
    return OfferRow(
        m.id,
        "mission",
        m.title,
        m.payout_micros,
        m.is_active,
        f"{m.conversions} / {m.cap or '∞'} conversions",
        summary(rule_in(m)),
        quest.name if quest else "",
        m.quest_id or "",
        clicks=str(funnel.clicks),
        started=str(funnel.started),
        in_progress=str(funnel.in_progress),
        completed=str(funnel.completed),
        median_time=duration_words(funnel.median_seconds),
        live=live,
        periods=period_lines(periods) if periods else [],
        revenue_micros=m.revenue_micros,
    )


def game_offers(*, session: Session, game_id: str, now: datetime | None = None) -> list[OfferRow]:
    """The game's quests, then its missions (standalone first, then by quest, in order),
    each mission with its rule in words, its funnel, what it does in live operations and,
    when it turns over, its funnel this period and the one before."""
    now = now or utcnow()
    quests = {
        q.id: q
        for q in session.execute(sa.select(Quest).where(col(Quest.game_id) == game_id)).scalars()
    }
    missions = list(
        session.execute(
            sa.select(Mission)
            .where(col(Mission.game_id) == game_id)
            .order_by(
                col(Mission.quest_id).is_(None).desc(),
                col(Mission.quest_position),
                col(Mission.created_at),
            )
        ).scalars()
    )
    funnels = mission_funnels(session=session, game_id=game_id, now=now)
    per_period = period_funnels(session=session, game_id=game_id, now=now)
    pools = {p.name: p for p in offers.game_pools(session=session, game_id=game_id)}
    capped = [m for m in missions if m.period_caps]
    closed = closed_missions(session.connection(), capped, None, now) if capped else {}
    spent = budgets.closed(session.connection(), missions, now)
    mission_rows = [
        _mission_row(
            m,
            quests.get(m.quest_id or ""),
            funnels.get(m.id, Funnel()),
            live_badges(m, pools, closed, now, spent),
            per_period.get(m.id),
        )
        for m in missions
    ]
    # A quest's clicks are those of its link, which each of its missions shows too.
    quest_clicks = {r.quest_id: r.clicks for r in mission_rows if r.quest_id}
    quest_rows = [
        OfferRow(
            q.id,
            "quest",
            q.name,
            None,
            q.is_active,
            f"{q.starts} / {q.start_cap or '∞'} players",
            "",
            "",
            "",
            clicks=quest_clicks.get(q.id, "0"),
            live=(
                [LiveBadge("scheduled", f"Starts {moment(q.start_date, 'UTC', now)}")]
                if q.start_date is not None and q.start_date > now
                else []
            ),
        )
        for q in sorted(quests.values(), key=lambda q: q.created_at)
    ]
    return quest_rows + mission_rows
