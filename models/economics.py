"""The network's economics (docs/economics.md): an offerwall's payout rules, its currency
sales (promotions) and what a budget has spent."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import JSONDoc, UTCDateTime, new_uuid, utcnow


class PayoutRule(SQLModel, table=True):
    """What staff agreed with an offerwall: for one mission (`mission_id`) a fixed payout
    or a share of its revenue; for every mission (`mission_id` "") a share of revenue.
    One of `payout_micros` and `share_percent` is set."""

    __tablename__ = "payout_rule"

    offerwall_id: str = Field(
        foreign_key="offerwall.id", primary_key=True, max_length=36, ondelete="CASCADE"
    )
    mission_id: str = Field(primary_key=True, max_length=36)
    payout_micros: int | None = Field(default=None, sa_type=sa.BigInteger)
    share_percent: float | None = Field(default=None)
    created_by: str = Field(max_length=320)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class Promotion(SQLModel, table=True):
    """A currency sale of one offerwall: while it applies, players get `multiplier`
    hundredths of the usual currency (250: 2.5×), paid from the publisher's margin.
    A weekly one applies each week between the local times of `starts_at` and `ends_at` in
    `time_zone`, from `starts_at` on; `ended_at` stops it early."""

    __tablename__ = "promotion"
    __table_args__ = (sa.Index("ix_promotion_offerwall", "offerwall_id", "ends_at"),)

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    offerwall_id: str = Field(foreign_key="offerwall.id", max_length=36, ondelete="CASCADE")
    name: str = Field(max_length=80)
    multiplier: int = Field()
    starts_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    ends_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    weekly: bool = Field(default=False)
    time_zone: str = Field(default="UTC", max_length=64)
    countries: list[str] = Field(default_factory=list, sa_type=JSONDoc)
    exclude_countries: bool = Field(default=False)
    first_conversion_only: bool = Field(default=False)
    created_by: str = Field(max_length=320)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    ended_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class BudgetSpend(SQLModel, table=True):
    """Revenue a budget has spent in one period, raised with a conditional upsert so a
    budget holds under any concurrency. `scope` is "game:<id>" or "mission:<id>"; `period`
    "day:2026-11-28", "week:2026-11-23", "month:2026-11-01" or "total". `warned` is the
    highest alert mailed for it (0, 80 or 100 percent)."""

    __tablename__ = "budget_spend"

    scope: str = Field(primary_key=True, max_length=44)
    period: str = Field(primary_key=True, max_length=16)
    spent_micros: int = Field(default=0, sa_type=sa.BigInteger)
    warned: int = Field(default=0)
