"""An offerwall's payout rules, set by staff (docs/economics.md#payout-precedence): a share
of revenue for every mission, and for one mission a fixed payout or a share of its own."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api import audit
from api.core.catalog import bump
from api.economics.errors import EconomicsError
from api.economics.terms import WallRules
from models import Mission, PayoutRule, tables

_rule = tables.payout_rule
EVERY_MISSION = ""  # the mission_id of an offerwall's rule for all its missions


def load(db: Any, offerwall_ids: Sequence[str] | None = None) -> dict[str, WallRules]:
    """The rules of each offerwall (of `offerwall_ids`; None: of all) that has any."""
    query = sa.select(_rule)
    if offerwall_ids is not None:
        query = query.where(_rule.c.offerwall_id.in_(list(offerwall_ids)))
    missions: dict[str, dict[str, tuple[int | None, float | None]]] = {}
    shares: dict[str, float] = {}
    for row in db.execute(query):
        if row.mission_id == EVERY_MISSION:
            if row.share_percent is not None:
                shares[row.offerwall_id] = float(row.share_percent)
            continue
        missions.setdefault(row.offerwall_id, {})[row.mission_id] = (
            row.payout_micros,
            row.share_percent,
        )
    return {
        wall: WallRules(missions.get(wall, {}), shares.get(wall))
        for wall in set(missions) | set(shares)
    }


def for_mission(db: Any, offerwall_id: str, mission_id: str) -> WallRules:
    """The rules of one offerwall that can apply to one mission (for a conversion)."""
    rows = db.execute(
        sa.select(_rule).where(
            _rule.c.offerwall_id == offerwall_id,
            _rule.c.mission_id.in_([mission_id, EVERY_MISSION]),
        )
    )
    own: dict[str, tuple[int | None, float | None]] = {}
    share = None
    for row in rows:
        if row.mission_id == EVERY_MISSION:
            share = row.share_percent
        else:
            own[mission_id] = (row.payout_micros, row.share_percent)
    return WallRules(own, share)


def _percent(value: Decimal | float | str) -> float:
    try:
        percent = Decimal(str(value).strip().rstrip("%"))
    except ArithmeticError:
        percent = Decimal(-1)
    if not percent.is_finite() or not 0 <= percent <= 100 or percent.as_tuple().exponent < -2:  # type: ignore[operator]
        raise EconomicsError(
            "A revenue share is a percentage from 0 to 100, with at most two decimals.",
            field="share",
        )
    return float(percent)


def _payout(value: Decimal | float | str) -> int:
    try:
        amount = Decimal(str(value).strip().lstrip("$"))
    except ArithmeticError:
        amount = Decimal(-1)
    if not amount.is_finite() or amount < 0 or amount > 100_000 or amount.as_tuple().exponent < -6:  # type: ignore[operator]
        raise EconomicsError(
            "A payout is an amount in USD from 0 to 100,000, with at most six decimals.",
            field="payout",
        )
    return int(amount * 1_000_000)


def set_share(session: Session, offerwall_id: str, share: Any, *, by: str) -> PayoutRule:
    """The offerwall gets `share` percent of every mission's revenue (where a mission has
    revenue and no more specific rule)."""
    return _put(session, offerwall_id, EVERY_MISSION, None, _percent(share), by)


def set_for_mission(
    session: Session,
    offerwall_id: str,
    mission_id: str,
    *,
    payout: Any = None,
    share: Any = None,
    by: str,
) -> PayoutRule:
    """One mission at this offerwall pays a fixed `payout` (USD) or `share` percent of its
    revenue."""
    if (payout is None) == (share is None):
        raise EconomicsError("Give either a fixed payout or a revenue share.", field="payout")
    mission = session.get(Mission, mission_id)
    if mission is None:
        raise EconomicsError("No such mission.", field="mission")
    if share is not None and not mission.revenue_micros:
        raise EconomicsError(
            f"“{mission.title}” has no revenue to share: set its revenue first, or a fixed payout.",
            field="share",
        )
    fixed = None if payout is None else _payout(payout)
    percent = None if share is None else _percent(share)
    return _put(session, offerwall_id, mission_id, fixed, percent, by)


def _put(
    session: Session,
    offerwall_id: str,
    mission_id: str,
    fixed: int | None,
    percent: float | None,
    by: str,
) -> PayoutRule:
    row = session.get(PayoutRule, (offerwall_id, mission_id))
    before = (
        {}
        if row is None
        else {"payout_micros": row.payout_micros, "share_percent": row.share_percent}
    )
    if row is None:
        row = PayoutRule(offerwall_id=offerwall_id, mission_id=mission_id, created_by=by)
    row.payout_micros, row.share_percent, row.created_by = fixed, percent, by
    session.add(row)
    bump(session)  # listings show the new payout
    session.flush()
    _audit(
        session,
        "payout_rule.changed",
        offerwall_id,
        mission_id,
        audit.changed(before, {"payout_micros": fixed, "share_percent": percent}),
    )
    return row


def remove(session: Session, offerwall_id: str, mission_id: str = EVERY_MISSION) -> bool:
    row = session.get(PayoutRule, (offerwall_id, mission_id))
    if row is None:
        return False
    before = {"payout_micros": row.payout_micros, "share_percent": row.share_percent}
    session.delete(row)
    bump(session)
    _audit(session, "payout_rule.removed", offerwall_id, mission_id, audit.changed(before, {}))
    return True


def _audit(
    session: Session, action: str, offerwall_id: str, mission_id: str, changes: dict[str, Any]
) -> None:
    """A payout rule's event: the offerwall's, naming the mission it is for (or every one)."""
    audit.record(
        session,
        action,
        target_type="payout_rule",
        target_id=mission_id,  # of the offerwall in `scope`
        target_name="every mission" if mission_id == EVERY_MISSION else mission_id,
        scope=("offerwall", offerwall_id),
        changes=changes,
    )


def of_offerwall(session: Session, offerwall_id: str) -> list[tuple[PayoutRule, str]]:
    """The offerwall's rules with the title of each one's mission ("" for every mission),
    the offerwall-wide share first."""
    rows = list(
        session.exec(select(PayoutRule).where(col(PayoutRule.offerwall_id) == offerwall_id))
    )
    titles = dict(
        session.execute(
            sa.select(col(Mission.id), col(Mission.title)).where(
                col(Mission.id).in_([r.mission_id for r in rows if r.mission_id])
            )
        ).all()
    )
    found = [(r, titles.get(r.mission_id, "") if r.mission_id else "") for r in rows]
    return sorted(found, key=lambda item: (item[0].mission_id != EVERY_MISSION, item[1]))
