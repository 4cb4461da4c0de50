"""Missions (a rule over a game's events) and quests (groups of missions)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import JSONDoc, UTCDateTime, new_uuid, utcnow


class OfferFields(SQLModel):
    """What missions and quests both are: an offer shown on offerwalls."""

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    game_id: str = Field(foreign_key="game.id", index=True, max_length=36, ondelete="CASCADE")
    description: str | None = Field(default=None, sa_type=sa.Text)
    thumbnail: str = Field(default="", max_length=2048)
    preview_url: str = Field(default="", max_length=2048)
    destination_url: str = Field(max_length=2048)
    expiration_date: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Listed and clickable only from this moment (None: at once); imported and reviewed before.
    start_date: datetime | None = Field(default=None, sa_type=UTCDateTime)
    is_active: bool = Field(default=True)
    operating_systems: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    countries_include: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    countries_exclude: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    tags: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    instructions: str = Field(default="", sa_type=sa.Text)
    requirements: str = Field(default="", sa_type=sa.Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class Quest(OfferFields, table=True):
    __tablename__ = "quest"

    name: str = Field(max_length=200)
    # How many distinct players may start it (None: no limit), and how many did.
    start_cap: int | None = Field(default=None)
    starts: int = Field(default=0)


class Mission(OfferFields, table=True):
    __tablename__ = "mission"

    # Set when the mission is part of a quest: it is then offered only inside it.
    quest_id: str | None = Field(
        default=None, foreign_key="quest.id", index=True, max_length=36, ondelete="CASCADE"
    )
    quest_position: int = Field(default=0)
    title: str = Field(max_length=200)
    # Payout in millionths of a USD (exact on every database).
    payout_micros: int = Field(default=0, sa_type=sa.BigInteger)
    # Economics (docs/economics.md), each None when unused: what the game pays per
    # conversion (USD micros), the payout per country [{countries, payout}] (payouts as
    # decimal text) and a budget of revenue {amount, every, timeZone}.
    revenue_micros: int | None = Field(default=None, sa_type=sa.BigInteger)
    payouts: list[dict[str, Any]] | None = Field(default=None, sa_type=JSONDoc)
    budget: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    # Maximum conversions in total (None: unlimited), and how many there were.
    cap: int | None = Field(default=None)
    conversions: int = Field(default=0)
    allow_multiple_conversions: bool = Field(default=False)
    # The player must complete within this many seconds of starting (None: no limit).
    time_limit_seconds: int | None = Field(default=None)
    # Fraud screening (docs/fraud.md): a completion sooner than this after the click is
    # held for review; events over these maxima, or more matching events a minute than
    # this, do not count toward the mission (None: no such rule).
    min_completion_seconds: int | None = Field(default=None)
    max_event_value: float | None = Field(default=None)
    max_trait_field: str | None = Field(default=None, max_length=64)
    max_trait_value: float | None = Field(default=None)
    max_events_per_minute: int | None = Field(default=None)
    # The mission's own action per risk signal, only those it sets (docs/fraud.md#rules):
    # each makes its offerwall's rule stricter, never looser.
    fraud_actions: dict[str, str] | None = Field(default=None, sa_type=JSONDoc)
    # The rule (api/missions/rules.py): its first event name and that event's conditions
    # (AND), when it completes, and the field the completion reads (sum, max, min,
    # distinct). The rest of a richer rule (anyOf, steps, within, per, window, timeZone)
    # is in `rule_extra`, as the definition names it; None for a plain rule.
    rule_event: str = Field(max_length=64, index=True)
    rule_conditions: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSONDoc)
    rule_completion: str = Field(default="count", max_length=16)
    rule_threshold: float = Field(default=1)
    rule_sum_field: str | None = Field(default=None, max_length=200)
    rule_extra: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    # Live operations (docs/missions.md#live-operations), each None when unused, stored as
    # the definition names them: `recurrence` {every, timeZone, weekStartsOn}; `stages`
    # [{threshold, payout}] (payouts as decimal text); `period_caps` {day, week, month,
    # timeZone}; the pool (of this game, by name) it rotates in.
    recurrence: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    stages: list[dict[str, Any]] | None = Field(default=None, sa_type=JSONDoc)
    period_caps: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    cap_per_offerwall: int | None = Field(default=None)
    pool: str | None = Field(default=None, max_length=64)
    # When it last joined its pool's draw: put in the pool, or opened again while in it
    # (activated, its end moved later). A period draws from the members it had when it
    # started (api/core/periods.py `in_draw`). None: since before any period.
    pool_since: datetime | None = Field(default=None, sa_type=UTCDateTime)


class MissionPool(SQLModel, table=True):
    """A game's rotating pool: each player sees `size` of its missions per period, picked
    from (player, period) (api/core/periods.py `picks`)."""

    __tablename__ = "mission_pool"
    __table_args__ = (sa.UniqueConstraint("game_id", "name", name="uq_mission_pool_game_name"),)

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    game_id: str = Field(foreign_key="game.id", max_length=36, ondelete="CASCADE")
    name: str = Field(max_length=64)
    size: int = Field(default=1)
    every: str = Field(default="day", max_length=8)
    time_zone: str = Field(default="UTC", max_length=64)
    week_starts_on: str = Field(default="monday", max_length=9)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class CapCount(SQLModel, table=True):
    """Conversions of a mission in one period (`period_caps`) or at one offerwall
    (`cap_per_offerwall`), raised with a conditional upsert so a cap holds under any
    concurrency. `scope` is "" for every offerwall or an offerwall's id; `period` is
    "day:2026-11-28", "week:2026-11-23", "month:2026-11-01" or "total"."""

    __tablename__ = "cap_count"

    mission_id: str = Field(
        foreign_key="mission.id", primary_key=True, max_length=36, ondelete="CASCADE"
    )
    scope: str = Field(primary_key=True, max_length=36)
    period: str = Field(primary_key=True, max_length=16)
    count: int = Field(default=0)


class CatalogVersion(SQLModel, table=True):
    """Bumped by every change to missions or quests, so each process's in-memory
    index of active missions knows when to reload."""

    __tablename__ = "catalog_version"

    id: int = Field(default=1, primary_key=True)
    version: int = Field(default=0)
