"""Currency sales: an offerwall's players get more of its currency for a while
(docs/publisher-integration.md#promotions).

A promotion has a multiplier from 1.01 to 10, a window (a start and an end, or the same
local times every week in a time zone), optionally countries it is limited to (or
excluded from) and "first conversion of a player only". When two apply at once they never
stack: the larger multiplier wins, and on a tie the one that started first. A conversion
keeps the promotion of the moment Questwall records it. The network's payout (`{payout_usd}`)
never changes: the publisher pays the extra currency from its margin."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from sqlmodel import Session, col, select

from api import audit
from api.core.catalog import bump
from api.economics.errors import EconomicsError
from models import Promotion, tables
from models.offer_schemas import COUNTRY, zone_name
from models.types import utcnow

MULTIPLIER_LOW, MULTIPLIER_HIGH = Decimal("1.01"), Decimal("10")
WEEK = timedelta(days=7)
_promotion = tables.promotion


class PromotionIn(BaseModel):
    """A promotion as the CLI, the portal and the staff set it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    multiplier: Decimal = Field(ge=MULTIPLIER_LOW, le=MULTIPLIER_HIGH, decimal_places=2)
    start: datetime
    end: datetime
    weekly: bool = False
    timeZone: str = "UTC"
    countries: list[str] = Field(default_factory=list, max_length=250)
    excludeCountries: bool = False
    firstConversionOnly: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("Give the promotion a name.")
        return value

    @field_validator("timeZone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return zone_name(value)

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("Give the time with its zone, e.g. 2026-12-24T18:00:00Z.")
        return value

    @field_validator("countries")
    @classmethod
    def _countries(cls, value: list[str]) -> list[str]:
        codes = [c.strip().upper() for c in value if c.strip()]
        bad = [c for c in codes if not COUNTRY.fullmatch(c)]
        if bad:
            raise ValueError(
                "Countries are two-letter ISO 3166-1 codes such as US or DE; not a country: "
                + ", ".join(bad)
            )
        return sorted(set(codes))

    @model_validator(mode="after")
    def _in_order(self) -> PromotionIn:
        if self.end <= self.start:
            raise ValueError("The end must be after the start.")
        if self.weekly and self.end - self.start >= WEEK:
            raise ValueError("A weekly promotion lasts less than a week each time.")
        if self.excludeCountries and not self.countries:
            raise ValueError("Name the countries to exclude.")
        return self


@dataclass(frozen=True)
class Sale:
    """A promotion as the listing and the engine read it."""

    id: str
    name: str
    multiplier: int  # hundredths: 250 is 2.5×
    starts_at: datetime
    ends_at: datetime
    weekly: bool = False
    zone: str = "UTC"
    countries: frozenset[str] = frozenset()
    exclude: bool = False
    first_only: bool = False
    ended_at: datetime | None = None  # stopped early

    @classmethod
    def of(cls, row: Any) -> Sale:
        return cls(
            row.id,
            row.name,
            int(row.multiplier),
            row.starts_at,
            row.ends_at,
            bool(row.weekly),
            row.time_zone,
            frozenset(row.countries or ()),
            bool(row.exclude_countries),
            bool(row.first_conversion_only),
            row.ended_at,
        )

    def window(self, now: datetime) -> tuple[datetime, datetime] | None:
        """The window holding `now` (a weekly one's this week's), or None."""
        if self.ended_at is not None and now >= self.ended_at:
            return None
        found = self._window(now)
        if found is None or self.ended_at is None:
            return found
        return found[0], min(found[1], self.ended_at)

    def _window(self, now: datetime) -> tuple[datetime, datetime] | None:
        if now < self.starts_at:
            return None
        if not self.weekly:
            return (self.starts_at, self.ends_at) if now < self.ends_at else None
        zone = ZoneInfo(self.zone)
        first_start = self.starts_at.astimezone(zone).replace(tzinfo=None)
        first_end = self.ends_at.astimezone(zone).replace(tzinfo=None)
        weeks = (now - self.starts_at) // WEEK
        # This week's window and its neighbours (a window may run across a week's turn, and
        # a DST change moves local times by an hour against whole weeks), each
        # at the same local wall times, so a window keeps its hours across the change.
        for back in (weeks + 1, weeks, weeks - 1):
            if back < 0:
                continue
            start = (first_start + back * WEEK).replace(tzinfo=zone).astimezone(UTC)
            end = (first_end + back * WEEK).replace(tzinfo=zone).astimezone(UTC)
            if start <= now < end:
                return start, end
        return None

    def reaches(self, country: str | None, first: bool | None) -> bool:
        """Whether it applies to a player in `country` (None: unknown) whose conversion is
        (`first`) or is not their first at the offerwall (None: unknown, as in a listing
        without a player, where a first-conversion sale is shown)."""
        if self.first_only and first is False:
            return False
        if not self.countries:
            return True
        inside = country is not None and country in self.countries
        return not inside if self.exclude else inside


@dataclass(frozen=True)
class Applied:
    """The promotion that applies, and when its current window ends."""

    sale: Sale
    ends_at: datetime

    @property
    def multiplier(self) -> int:
        return self.sale.multiplier

    @property
    def name(self) -> str:
        return self.sale.name

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.sale.name,
            "multiplier": float(Decimal(self.sale.multiplier) / 100),
            "endsAt": self.ends_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "firstConversionOnly": self.sale.first_only,
        }


def best(
    sales: Iterable[Sale], now: datetime, *, country: str | None, first: bool | None
) -> Applied | None:
    """The promotion that applies at `now` (the rule above), or None."""
    found: list[tuple[int, datetime, str, Sale, datetime]] = []
    for sale in sales:
        window = sale.window(now)
        if window is not None and sale.reaches(country, first):
            found.append((-sale.multiplier, window[0], sale.id, sale, window[1]))
    if not found:
        return None
    found.sort(key=lambda item: item[:3])
    return Applied(found[0][3], found[0][4])


# --- storage ---------------------------------------------------------------------------


def live_sales(
    db: Any, offerwall_ids: Sequence[str] | None, now: datetime
) -> dict[str, list[Sale]]:
    """The promotions not over at `now`, per offerwall (of `offerwall_ids`; None: all)."""
    query = sa.select(_promotion).where(
        sa.or_(_promotion.c.weekly, _promotion.c.ends_at > now),
        sa.or_(_promotion.c.ended_at.is_(None), _promotion.c.ended_at > now),
    )
    if offerwall_ids is not None:
        query = query.where(_promotion.c.offerwall_id.in_(list(offerwall_ids)))
    found: dict[str, list[Sale]] = {}
    for row in db.execute(query):
        found.setdefault(row.offerwall_id, []).append(Sale.of(row))
    return found


def add(session: Session, offerwall_id: str, data: PromotionIn, *, by: str) -> Promotion:
    row = Promotion(
        offerwall_id=offerwall_id,
        name=data.name,
        multiplier=int(data.multiplier * 100),
        starts_at=data.start,
        ends_at=data.end,
        weekly=data.weekly,
        time_zone=data.timeZone,
        countries=data.countries,
        exclude_countries=data.excludeCountries,
        first_conversion_only=data.firstConversionOnly,
        created_by=by,
    )
    session.add(row)
    bump(session)  # the listing's pages show it
    session.flush()
    audit.note_changed(session, "promotion.created", _target(row), {}, data.model_dump(mode="json"))
    return row


def _target(row: Promotion) -> audit.Target:
    return audit.Target("promotion", row.id, row.name, ("offerwall", row.offerwall_id))


def of_offerwall(session: Session, offerwall_id: str) -> list[Promotion]:
    """Every promotion of the offerwall, the latest first."""
    return list(
        session.exec(
            select(Promotion)
            .where(col(Promotion.offerwall_id) == offerwall_id)
            .order_by(col(Promotion.starts_at).desc(), col(Promotion.id))
        )
    )


def end(session: Session, promotion_id: str, *, offerwall_id: str | None = None) -> Promotion:
    """Stop a promotion now (one of `offerwall_id`'s, when given: a publisher's own)."""
    row = session.get(Promotion, promotion_id)
    if row is None or (offerwall_id is not None and row.offerwall_id != offerwall_id):
        raise EconomicsError("No such promotion.")
    now = utcnow()
    if row.ended_at is None or row.ended_at > now:
        ended = ({"ended_at": row.ended_at}, {"ended_at": now})
        audit.note_changed(session, "promotion.ended", _target(row), *ended)
        row.ended_at = now
        session.add(row)
        bump(session)
    return row


def state(row: Promotion, now: datetime) -> str:
    """ "running", "scheduled" or "ended", as people read a promotion's list."""
    sale = Sale.of(row)
    if sale.window(now) is not None:
        return "running"
    if row.ended_at is not None and row.ended_at <= now:
        return "ended"
    if row.weekly or now < row.starts_at:
        return "scheduled"
    return "ended"
