"""Which payout applies: one function (`resolve`) for the listing, the conversion, the
postback and the reports (docs/economics.md#payout-precedence).

The most specific rule wins:
1. the mission's payout for the player's country (`payouts` in its definition);
2. the offerwall's rule for this mission: a fixed payout, or a share of its revenue;
3. the offerwall's share of revenue for every mission;
4. the mission's payout.
A share needs the mission's revenue; without it the rule does not apply. A ladder's
stages are paid in proportion to their default payouts, so the stages of a resolved
payout add up to it exactly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

# Which rule chose a payout, as a conversion stores it.
DEFAULT, COUNTRY, OFFERWALL, SHARE = "default", "country", "offerwall", "share"


@dataclass(frozen=True)
class Terms:
    """What a mission says of money: its payout and revenue (USD micros), its payout per
    country, and a ladder's stage payouts (their sum is `payout_micros`)."""

    mission_id: str
    payout_micros: int
    revenue_micros: int | None = None
    by_country: Mapping[str, int] = field(default_factory=dict)
    stages: tuple[int, ...] = ()

    @classmethod
    def of(cls, mission: Any) -> Terms:
        """From a mission row (or anything with its columns)."""
        return cls(
            mission.id,
            int(mission.payout_micros),
            mission.revenue_micros,
            country_payouts(mission.payouts),
            tuple(micros(s["payout"]) for s in mission.stages or ()),
        )


def micros(amount: Any) -> int:
    """A USD amount (decimal text or number) in millionths."""
    return int(Decimal(str(amount)) * 1_000_000)


def country_payouts(rows: Sequence[Mapping[str, Any]] | None) -> dict[str, int]:
    """A mission's stored `payouts` as {country: payout micros}."""
    return {c: micros(row["payout"]) for row in rows or () for c in row["countries"]}


@dataclass(frozen=True)
class WallRules:
    """An offerwall's payout rules: per mission (fixed micros, share percent), and its
    share of revenue for every mission."""

    missions: Mapping[str, tuple[int | None, float | None]] = field(default_factory=dict)
    share_percent: float | None = None


NO_RULES = WallRules()


@dataclass(frozen=True)
class Resolved:
    payout_micros: int
    rule: str


def share(revenue_micros: int, percent: float) -> int:
    """`percent` of a revenue, half-up to a micro."""
    exact = Decimal(revenue_micros) * Decimal(str(percent)) / 100
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def resolve(terms: Terms, rules: WallRules, country: str | None) -> Resolved:
    """The payout (USD micros) of one conversion of the mission at this offerwall for a
    player in `country` (None: unknown), and the rule that chose it."""
    if country and country in terms.by_country:
        return Resolved(terms.by_country[country], COUNTRY)
    own = rules.missions.get(terms.mission_id)
    if own is not None:
        fixed, percent = own
        if fixed is not None:
            return Resolved(fixed, OFFERWALL)
        if percent is not None and terms.revenue_micros:
            return Resolved(share(terms.revenue_micros, percent), SHARE)
    if rules.share_percent is not None and terms.revenue_micros:
        return Resolved(share(terms.revenue_micros, rules.share_percent), SHARE)
    return Resolved(terms.payout_micros, DEFAULT)


def portion(total: int, weights: Sequence[int], index: int) -> int:
    """Stage `index`'s part of `total`, in proportion to `weights` (equal parts when they
    are all 0); the parts add up to `total` exactly (the last takes what rounding left)."""
    count = len(weights)
    whole = sum(weights)
    if whole <= 0:
        weights, whole = [1] * count, count
    parts = [total * w // whole for w in weights]
    parts[-1] = total - sum(parts[:-1])
    return parts[index]


def revenue_parts(revenue_micros: int | None, stages: Sequence[int]) -> tuple[int, ...]:
    """What each conversion of a mission brings: its revenue, or a ladder's (`stages`:
    its stage payouts) each stage's part of it, as its conversions carry them; () for a
    mission without revenue."""
    if not revenue_micros:
        return ()
    if not stages:
        return (revenue_micros,)
    return tuple(portion(revenue_micros, stages, i) for i in range(len(stages)))


def stage_payouts(total: int, terms: Terms) -> list[int]:
    """A ladder's stage payouts for a resolved total."""
    if total == terms.payout_micros:
        return list(terms.stages)
    return [portion(total, terms.stages, i) for i in range(len(terms.stages))]
