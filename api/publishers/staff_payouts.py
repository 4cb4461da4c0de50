"""An offerwall's payout rules as staff manage them on its page in the portal
(docs/economics.md#payout-precedence): its revenue share for every mission, its rules for
one mission (a fixed payout or a share of that mission's revenue), the missions staff pick
them for, and a preview of what the offerwall gets for one mission (`terms.resolve`, for
an unknown country) beside the mission's payout, revenue and the margin.

Every use case here is staff's: it checks the account itself (`access.require`), so a
designer or a publisher sending the portal's events by hand is refused. The rules
themselves, and their refusals, are api/economics/payout_rules.py's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import Account, offerwall_for, require
from api.core.paging import searched
from api.economics import EconomicsError, Terms, payout_rules, resolve
from api.economics.terms import OFFERWALL, SHARE
from models import Game, Mission, Offerwall, Role

# How many missions the picker lists for one search.
CHOICES_MAX = 50


@dataclass(frozen=True)
class MissionChoice:
    """A mission as the picker lists it: its game, title and money (USD micros)."""

    id: str
    title: str
    game: str
    payout_micros: int
    revenue_micros: int | None
    active: bool


@dataclass(frozen=True)
class MissionRule:
    """The offerwall's rule for one mission: a fixed payout or a share (one is None), with
    what the mission pays by default and earns, for saying what the rule does."""

    mission: MissionChoice
    payout_micros: int | None
    share_percent: float | None
    created_by: str
    created_at: datetime


@dataclass(frozen=True)
class WallPayouts:
    """An offerwall (its company, status and owid) and its payout rules: its share of
    revenue for every mission (None: none), who set it and when, and its rules per
    mission, by game and title."""

    company: str
    status: str
    owid: str
    share_percent: float | None
    share_by: str
    share_at: datetime | None
    missions: list[MissionRule]


@dataclass(frozen=True)
class Preview:
    """What the offerwall gets for one conversion of a mission from a player whose country
    has no payout of its own, and the rule that chose it (`terms` DEFAULT, OFFERWALL,
    SHARE), beside the mission's payout and revenue; `own_rule` when it is the
    offerwall's rule for this mission (else its share for every mission, or the default).
    The margin is revenue less that payout (None without revenue). `countries` are the
    mission's payouts per country, which win over every rule of the offerwall."""

    mission: MissionChoice
    payout_micros: int
    rule: str
    own_rule: bool
    margin_micros: int | None
    countries: dict[str, int]


def _offerwall(session: Session, account: Account | None, offerwall_id: str) -> Offerwall:
    """The offerwall staff act on; anyone else is refused."""
    account = require(account, Role.STAFF)
    return offerwall_for(session=session, account=account, requested=offerwall_id)


def _choices(session: Session, where: Any = None, search: str = "") -> list[MissionChoice]:
    query = sa.select(Mission, col(Game.name)).join(Game, col(Game.id) == col(Mission.game_id))
    if where is not None:
        query = query.where(where)
    query = searched(query, search, col(Mission.title), col(Game.name))
    query = query.order_by(sa.func.lower(col(Game.name)), sa.func.lower(col(Mission.title)))
    return [
        MissionChoice(
            m.id, m.title, game, int(m.payout_micros), m.revenue_micros, bool(m.is_active)
        )
        for m, game in session.execute(query.limit(CHOICES_MAX + 1)).all()
    ]


def find_missions(
    session: Session, account: Account | None, offerwall_id: str, search: str = ""
) -> tuple[list[MissionChoice], bool]:
    """The missions of every game whose title or game holds `search`, by game and title:
    at most CHOICES_MAX, and whether there were more."""
    _offerwall(session, account, offerwall_id)
    found = _choices(session, search=search)
    return found[:CHOICES_MAX], len(found) > CHOICES_MAX


def payouts_of(session: Session, account: Account | None, offerwall_id: str) -> WallPayouts:
    wall = _offerwall(session, account, offerwall_id)
    rows = {r.mission_id: r for r, _title in payout_rules.of_offerwall(session, wall.id)}
    every = rows.pop(payout_rules.EVERY_MISSION, None)
    missions = {m.id: m for m in _choices(session, col(Mission.id).in_(list(rows)))} if rows else {}
    rules = []
    for mission_id, rule in rows.items():
        # A rule whose mission is gone is still listed, so that staff can remove it.
        mission = missions.get(mission_id) or MissionChoice(mission_id, "", "", 0, None, False)
        rules.append(
            MissionRule(
                mission, rule.payout_micros, rule.share_percent, rule.created_by, rule.created_at
            )
        )
    rules.sort(key=lambda r: (r.mission.game.lower(), r.mission.title.lower(), r.mission.id))
    return WallPayouts(
        wall.name,
        wall.status,
        wall.owid or "",
        every.share_percent if every else None,
        every.created_by if every else "",
        every.created_at if every else None,
        rules,
    )


def set_share(session: Session, account: Account | None, offerwall_id: str, share: Any) -> float:
    """The offerwall gets `share` percent of every mission's revenue; the percentage kept."""
    wall = _offerwall(session, account, offerwall_id)
    if str(share).strip() == "":
        raise EconomicsError("Enter a percentage from 0 to 100.", field="share")
    assert account is not None
    row = payout_rules.set_share(session, wall.id, share, by=account.email)
    return float(row.share_percent or 0)


def clear_share(session: Session, account: Account | None, offerwall_id: str) -> bool:
    """No share for every mission any more: each pays its own payout (or its rule)."""
    wall = _offerwall(session, account, offerwall_id)
    return payout_rules.remove(session, wall.id)


def set_for_mission(
    session: Session,
    account: Account | None,
    offerwall_id: str,
    mission_id: str,
    *,
    payout: Any = None,
    share: Any = None,
) -> MissionRule:
    """One mission at this offerwall pays a fixed `payout` (USD) or `share` percent of its
    revenue; a second rule for the same mission replaces the first."""
    wall = _offerwall(session, account, offerwall_id)
    if not mission_id:
        raise EconomicsError("Pick a mission.", field="mission")
    for name, value in (("payout", payout), ("share", share)):
        if value is not None and str(value).strip() == "":
            what = "an amount in USD" if name == "payout" else "a percentage from 0 to 100"
            raise EconomicsError(f"Enter {what}.", field=name)
    assert account is not None
    row = payout_rules.set_for_mission(
        session, wall.id, mission_id, payout=payout, share=share, by=account.email
    )
    [mission] = _choices(session, col(Mission.id) == mission_id)
    return MissionRule(
        mission, row.payout_micros, row.share_percent, row.created_by, row.created_at
    )


def remove_for_mission(
    session: Session, account: Account | None, offerwall_id: str, mission_id: str
) -> bool:
    """The mission pays at this offerwall as its other rules say; False when it had no rule."""
    wall = _offerwall(session, account, offerwall_id)
    if not mission_id:  # the offerwall's share for every mission is `clear_share`'s
        return False
    return payout_rules.remove(session, wall.id, mission_id)


def preview(
    session: Session, account: Account | None, offerwall_id: str, mission_id: str
) -> Preview:
    """What the offerwall gets for the mission now (`resolve`, unknown country)."""
    wall = _offerwall(session, account, offerwall_id)
    mission = session.get(Mission, mission_id) if mission_id else None
    if mission is None:
        raise EconomicsError("No such mission.", field="mission")
    [choice] = _choices(session, col(Mission.id) == mission.id)
    terms = Terms.of(mission)
    rules = payout_rules.for_mission(session, wall.id, mission.id)
    resolved = resolve(terms, rules, None)
    own = rules.missions.get(mission.id)
    own_rule = resolved.rule == OFFERWALL or (
        resolved.rule == SHARE and own is not None and own[1] is not None
    )
    margin = None
    if mission.revenue_micros is not None:
        margin = mission.revenue_micros - resolved.payout_micros
    return Preview(
        choice, resolved.payout_micros, resolved.rule, own_rule, margin, dict(terms.by_country)
    )
