"""The in-memory index of active missions, per game and event name.

Every change to a mission or quest bumps `catalog_version` in the same transaction
(`bump`). Each ingestion reads that one row and reloads the index when it moved, so a
change made by any process is followed by every process at its next request.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, select

from api import webhooks
from api.core import catalog
from api.core.periods import Period
from api.economics.budgets import Charge, charges
from api.economics.terms import Terms, revenue_parts
from api.fraud import strictest
from api.missions.rules import Rule
from models import Mission, MissionPool, Quest
from models.offer_schemas import EVERY, rule_in
from models.tables import game as _game
from models.tables import webhook_endpoint as _endpoint


@dataclass(frozen=True)
class MissionSpec:
    """What evaluation needs to know of an active mission."""

    id: str
    game_id: str
    quest_id: str | None
    rule: Rule
    cap: int | None
    allow_multiple: bool
    time_limit_seconds: int | None
    expiration_date: datetime | None
    payout_micros: int
    # Fraud screening (docs/fraud.md#anti-cheat-rules): the minimum plausible time, and the
    # limits an event must keep to count.
    min_completion_seconds: int | None = None
    max_event_value: float | None = None
    max_trait_field: str | None = None
    max_trait_value: float | None = None
    max_events_per_minute: int | None = None
    # The actions for the risk signals its completions are judged by, stricter than the
    # offerwall's: its own, or for a quest's mission the strictest of the quest's active
    # missions', as the quest's click is (docs/fraud.md#rules).
    fraud_actions: dict[str, str] | None = field(default=None, hash=False)
    # Live operations (docs/missions.md#live-operations): the period progress turns over
    # with (a recurrence's or its pool's), whether a player takes part in every period
    # after one click (a recurrence) or only in those they click in (a pool); a ladder's
    # stages as (threshold, payout micros); the period caps and their zone; the cap per
    # offerwall.
    period: Period | None = None
    every_period: bool = False
    stages: tuple[tuple[float, int], ...] = ()
    period_caps: tuple[tuple[str, int], ...] = ()
    caps_zone: str = "UTC"
    cap_per_offerwall: int | None = None
    title: str = ""
    # The webhook types the game's endpoints take (docs/game-integration.md#webhooks): none,
    # and a conversion tells the game nothing without reading its endpoints.
    told: frozenset[str] = frozenset()
    # Economics (docs/economics.md): its payout terms (revenue, payouts per country, a
    # ladder's stage payouts) and the budgets a conversion draws on (its own, its game's).
    terms: Terms | None = field(default=None, hash=False)
    charges: tuple[Charge, ...] = field(default=(), hash=False)

    def expired(self, now: datetime) -> bool:
        return self.expiration_date is not None and self.expiration_date <= now

    def cap_scopes(self, offerwall_id: str, now: datetime) -> list[tuple[str, str, int]]:
        """The counters a conversion at `now` for `offerwall_id` raises, beside the
        lifetime cap: (scope, period, limit); those that run out for good come first."""
        scopes = []
        if self.cap_per_offerwall is not None:
            scopes.append((offerwall_id, "total", self.cap_per_offerwall))
        for every, limit in self.period_caps:
            scopes.append(("", f"{every}:{Period(every, self.caps_zone).key(now)}", limit))
        return scopes

    def broken_limit(self, value: float | None, traits: dict | None) -> tuple[str, str] | None:
        """The value or trait limit an event breaks, as (rule, what it says), or None."""
        if self.max_event_value is not None and value is not None and value > self.max_event_value:
            return "max_value", f"value {value:g} is over the maximum {self.max_event_value:g}"
        if self.max_trait_field is not None and self.max_trait_value is not None:
            trait = (traits or {}).get(self.max_trait_field)
            number = isinstance(trait, int | float) and not isinstance(trait, bool)
            if number and float(trait) > self.max_trait_value:  # type: ignore[arg-type]
                return (
                    "max_trait",
                    f"traits.{self.max_trait_field} {trait:g} is over the maximum "
                    f"{self.max_trait_value:g}",
                )
        return None


@dataclass
class MissionIndex:
    version: int
    missions: dict[str, MissionSpec] = field(default_factory=dict)
    by_event: dict[tuple[str, str], list[MissionSpec]] = field(default_factory=dict)
    by_game: dict[str, list[MissionSpec]] = field(default_factory=dict)
    # The webhook types each game's endpoints take (games without endpoints: absent).
    told: dict[str, frozenset[str]] = field(default_factory=dict)

    def tells(self, game_id: str, message_type: str) -> bool:
        return message_type in self.told.get(game_id, frozenset())

    def for_event(self, game_id: str, event: str) -> list[MissionSpec]:
        return self.by_event.get((game_id, event), [])

    def for_game(self, game_id: str) -> list[MissionSpec]:
        return self.by_game.get(game_id, [])


def spec_of(
    mission: Mission,
    pools: dict[tuple[str, str], Period] | None = None,
    game_budget: dict | None = None,
) -> MissionSpec:
    """A mission's spec; `pools`: the period of each (game, pool name) known;
    `game_budget`: its game's budget, if any."""
    rule = Rule.from_input(rule_in(mission))
    period = Period.of(mission.recurrence)
    if mission.pool is not None:
        period = (pools or {}).get((mission.game_id, mission.pool), Period("day"))
    caps = mission.period_caps or {}
    return MissionSpec(
        id=mission.id,
        game_id=mission.game_id,
        quest_id=mission.quest_id,
        rule=rule,
        cap=mission.cap,
        allow_multiple=mission.allow_multiple_conversions,
        time_limit_seconds=mission.time_limit_seconds,
        expiration_date=mission.expiration_date,
        payout_micros=mission.payout_micros,
        min_completion_seconds=mission.min_completion_seconds,
        max_event_value=mission.max_event_value,
        max_trait_field=mission.max_trait_field,
        max_trait_value=mission.max_trait_value,
        max_events_per_minute=mission.max_events_per_minute,
        fraud_actions=mission.fraud_actions or None,
        period=period,
        every_period=mission.recurrence is not None,
        stages=tuple(
            (float(s["threshold"]), int(Decimal(str(s["payout"])) * 1_000_000))
            for s in mission.stages or ()
        ),
        period_caps=tuple((every, int(caps[every])) for every in EVERY if caps.get(every)),
        caps_zone=str(caps.get("timeZone") or "UTC"),
        cap_per_offerwall=mission.cap_per_offerwall,
        title=mission.title,
        terms=Terms.of(mission),
        charges=tuple(charges(mission, game_budget, game_id=mission.game_id))
        if mission.revenue_micros
        else (),
    )


def pool_periods(session: Session) -> dict[tuple[str, str], Period]:
    """The period of every pool, by (game, name)."""
    return {
        (p.game_id, p.name): Period(p.every, p.time_zone, p.week_starts_on)
        for p in session.exec(select(MissionPool)).all()
    }


def load(session: Session, version: int) -> MissionIndex:
    """Build the index from the database: active missions of active quests (or none), a
    quest's missions each with the quest's fraud actions."""
    rows = session.exec(
        select(Mission)
        .outerjoin(Quest, Quest.id == Mission.quest_id)  # type: ignore[arg-type]
        .where(Mission.is_active, sa.or_(Mission.quest_id.is_(None), Quest.is_active))  # type: ignore[union-attr, arg-type]
    ).all()
    pools = pool_periods(session)
    budgets = dict(session.execute(sa.select(_game.c.id, _game.c.budget)).all())
    specs = [spec_of(mission, pools, budgets.get(mission.game_id)) for mission in rows]
    specs = _with_game_revenues(specs)
    per_quest: dict[str, list[dict[str, str] | None]] = {}
    for spec in specs:
        if spec.quest_id is not None:
            per_quest.setdefault(spec.quest_id, []).append(spec.fraud_actions)
    quest_actions = {quest: strictest(actions) or None for quest, actions in per_quest.items()}
    told = webhook_types(session)
    mission_index = MissionIndex(version, told=told)
    for spec in specs:
        if spec.quest_id is not None:
            spec = replace(spec, fraud_actions=quest_actions[spec.quest_id])
        if spec.game_id in told:
            spec = replace(spec, told=told[spec.game_id])
        mission_index.missions[spec.id] = spec
        for name in sorted(spec.rule.events):
            mission_index.by_event.setdefault((spec.game_id, name), []).append(spec)
        mission_index.by_game.setdefault(spec.game_id, []).append(spec)
    return mission_index


def _with_game_revenues(specs: list[MissionSpec]) -> list[MissionSpec]:
    """Each game budget's charge knows the revenues of the game's paying missions, a
    ladder's each stage's part (which say when what is left closes one of them)."""
    paying: dict[str, set[int]] = {}
    for spec in specs:
        if spec.terms is not None and spec.terms.revenue_micros:
            parts = revenue_parts(spec.terms.revenue_micros, spec.terms.stages)
            paying.setdefault(spec.game_id, set()).update(parts)
    found = []
    for spec in specs:
        if spec.charges:
            revenues = tuple(sorted(paying.get(spec.game_id, ())))
            charges = tuple(
                replace(c, revenues=revenues) if c.scope.startswith("game:") else c
                for c in spec.charges
            )
            spec = replace(spec, charges=charges)
        found.append(spec)
    return found


def webhook_types(session: Session) -> dict[str, frozenset[str]]:
    """The webhook types each game's endpoints take, by game (games without: absent)."""
    found: dict[str, set[str]] = {}
    rows = session.execute(sa.select(_endpoint.c.game_id, _endpoint.c.event_types)).all()
    for game_id, event_types in rows:
        found.setdefault(game_id, set()).update(
            t for t in webhooks.TYPES if webhooks.takes(event_types, t)
        )
    return {game: frozenset(types) for game, types in found.items()}


# The catalog version is api/core/catalog.py's: contexts below missions (webhooks) bump it too.
VERSION_SUBQUERY = catalog.VERSION_SUBQUERY
read_version = catalog.read_version
bump = catalog.bump


class IndexCache:
    """One index per database engine, reloaded when the stored version moves."""

    def __init__(self) -> None:
        self._by_engine: weakref.WeakKeyDictionary[Engine, MissionIndex] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def current(self, session: Session) -> MissionIndex:
        engine = session.get_bind().engine  # an Engine's .engine is itself
        version = read_version(session)
        mission_index = self._by_engine.get(engine)
        if mission_index is not None and mission_index.version == version:
            return mission_index
        with self._lock:
            mission_index = load(session, version)
            self._by_engine[engine] = mission_index
            return mission_index


INDEX = IndexCache()
