"""What Questwall knew of a player and an offer when the player reported it
(docs/publisher-integration.md#missing-rewards-support-tickets).

Opening a ticket stores a snapshot in its `context` (`gather`): how often and when the
player opened the offer and from where the last time, the game accounts linked to them,
each mission's rule and progress with the events of its rule's name the game sent since
the start, and the offer's conversions. `read` hands a stored context back as facts
(numbers, moments, amounts); the portal words them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from api.core.money import format_money, in_currency, usd
from api.missions import mission_rule, plain_number, standing, summary
from models import Mission, Offerwall
from models.offer_schemas import rule_in
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import event as _event
from models.tables import game_user as _game_user
from models.tables import mission as _mission
from models.tables import progress as _progress
from models.tracking import status_at

# Conversions of the offer kept in a ticket's context (a repeatable mission may have many).
MAX_CONVERSIONS = 50


@dataclass(frozen=True)
class Offer:
    """The offer a ticket is about: a standalone mission, or a quest with its missions."""

    kind: str  # "mission" or "quest"
    id: str
    title: str
    game_id: str
    missions: list[Mission]


# --- storing it: what Questwall knew when the ticket was opened -------------------------


def iso(moment: datetime | None) -> str | None:
    """A moment as the context stores it: ISO 8601 in UTC, to the millisecond, with Z."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _on_offer(offer: Offer) -> sa.ColumnElement[bool]:
    """A click on the offer's own link (a quest's clicks carry the quest's id)."""
    column = _click.c.mission_id if offer.kind == "mission" else _click.c.quest_id
    return column == offer.id


def clicks(session: Session, player_id: str, offer: Offer) -> dict[str, Any]:
    """How often and when the player opened the offer, and where from the last time."""
    mine = sa.and_(_click.c.platform_user_id == player_id, _on_offer(offer))
    count, first, last_at = session.execute(
        sa.select(
            sa.func.count(), sa.func.min(_click.c.created_at), sa.func.max(_click.c.created_at)
        ).where(mine)
    ).one()
    last = session.execute(
        sa.select(_click.c.country, _click.c.os, _click.c.sub1, _click.c.sub2, _click.c.sub3)
        .where(mine)
        .order_by(_click.c.created_at.desc(), _click.c.id.desc())
        .limit(1)
    ).first()
    facts: dict[str, Any] = {"count": int(count), "first_at": iso(first), "last_at": iso(last_at)}
    for name in ("country", "os", "sub1", "sub2", "sub3"):
        facts[name] = getattr(last, name) if last is not None else None
    return facts


def gather(
    session: Session,
    wall: Offerwall,
    player_id: str,
    offer: Offer,
    clicks: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """The ticket's context: the player's `clicks` on the offer (from `clicks`), and what
    else Questwall knew of them and the offer at `now`."""
    mission_ids = [m.id for m in offer.missions]
    # A recurring mission has a row per period: the latest one is what the player is on.
    progress = {
        row.mission_id: dict(row._mapping)
        for row in session.execute(
            sa.select(_progress)
            .where(
                _progress.c.platform_user_id == player_id,
                _progress.c.mission_id.in_(mission_ids),
            )
            .order_by(_progress.c.started_at, _progress.c.id)
        )
    }
    seen = _events_seen(session, [row["id"] for row in progress.values()], offer.missions)
    linked = session.execute(
        sa.select(sa.func.count()).where(
            _game_user.c.platform_user_id == player_id, _game_user.c.game_id == offer.game_id
        )
    ).scalar_one()
    return {
        "gathered_at": iso(now),
        "offer": {"kind": offer.kind, "id": offer.id, "title": offer.title},
        "currency": wall.currency_code,
        "clicks": clicks,
        "linked_game_users": int(linked),
        "missions": [
            _mission_facts(m, progress.get(m.id), seen.get(m.id), now) for m in offer.missions
        ],
        "conversions": _conversions(session, wall, player_id, offer),
    }


def _events_seen(
    session: Session, progress_ids: list[int], missions: list[Mission]
) -> dict[str, dict[str, Any]]:
    """For each mission the player started (each of `progress_ids`, the latest period's
    of a recurring one): the events of the names its rule reads that the game users linked
    to the player sent since the start (in that period), counted, with the last one's
    time. One grouped statement over the events' (game, user, time) index."""
    if not missions or not progress_ids:
        return {}
    names_of = sa.or_(
        *(
            sa.and_(
                _progress.c.mission_id == m.id,
                _event.c.name.in_(sorted({x.event for x in rule_in(m).matchers})),
            )
            for m in missions
        )
    )
    query = (
        sa.select(
            _progress.c.mission_id,
            sa.func.count(_event.c.id).label("seen"),
            sa.func.max(_event.c.time).label("last_at"),
        )
        .select_from(
            _progress.join(_mission, _mission.c.id == _progress.c.mission_id)
            .join(
                _game_user,
                sa.and_(
                    _game_user.c.platform_user_id == _progress.c.platform_user_id,
                    _game_user.c.game_id == _mission.c.game_id,
                ),
            )
            .join(
                _event,
                sa.and_(
                    _event.c.game_id == _mission.c.game_id,
                    _event.c.user_id == _game_user.c.user_id,
                    names_of,
                    _event.c.time >= _progress.c.started_at,
                    sa.or_(_progress.c.resets_at.is_(None), _event.c.time < _progress.c.resets_at),
                ),
            )
        )
        .where(_progress.c.id.in_(progress_ids))
        .group_by(_progress.c.mission_id)
    )
    return {
        row.mission_id: {"count": int(row.seen), "last_at": iso(row.last_at)}
        for row in session.execute(query)
    }


def _mission_facts(
    mission: Mission, progress: dict[str, Any] | None, seen: dict[str, Any] | None, now: datetime
) -> dict[str, Any]:
    rule = mission_rule(mission)
    facts: dict[str, Any] = {
        "id": mission.id,
        "title": mission.title,
        "rule": summary(rule_in(mission)),
        "event": " or ".join(sorted(rule.events)),
        "completion": rule.completion,
        "threshold": plain_number(rule.threshold),
        "repeatable": mission.allow_multiple_conversions,
        "progress": None,
        "events": None,
    }
    if progress is not None:
        current, _ = standing(
            rule, progress["count"], progress["run"], progress["total"], progress["state"], now
        )
        facts["progress"] = {
            "current": plain_number(float(current)),
            "status": status_at(progress["status"], progress["expires_at"], now).value,
            "count": progress["count"],
            "run": progress["run"],
            "total": plain_number(float(progress["total"])),
            "completions": progress["completions"],
            "started_at": iso(progress["started_at"]),
            "expires_at": iso(progress["expires_at"]),
        }
        facts["events"] = seen or {"count": 0, "last_at": None}
    return facts


def _conversions(
    session: Session, wall: Offerwall, player_id: str, offer: Offer
) -> list[dict[str, Any]]:
    rows = session.execute(
        sa.select(
            _conversion.c.transaction_id,
            _conversion.c.mission_id,
            _conversion.c.status,
            _conversion.c.created_at,
            _conversion.c.payout_micros,
        )
        .where(
            _conversion.c.platform_user_id == player_id,
            _conversion.c.mission_id.in_([m.id for m in offer.missions]),
        )
        .order_by(_conversion.c.created_at, _conversion.c.id)
        .limit(MAX_CONVERSIONS)
    ).all()
    return [
        {
            "transaction_id": r.transaction_id,
            "mission_id": r.mission_id,
            "status": r.status,
            "created_at": iso(r.created_at),
            "payout": str(
                in_currency(
                    r.payout_micros,
                    exchange_rate=wall.exchange_rate,
                    decimals=wall.currency_decimals,
                )
            ),
            "payout_usd": format_money(usd(r.payout_micros), plain=True),
        }
        for r in rows
    ]


# --- reading it back ----------------------------------------------------------------------


@dataclass(frozen=True)
class ClickFacts:
    """How often and when the player opened the offer, and where from the last time."""

    count: int
    first_at: datetime | None
    last_at: datetime | None
    country: str | None
    os: str | None
    sub1: str | None
    sub2: str | None
    sub3: str | None


@dataclass(frozen=True)
class ProgressFacts:
    """A mission's progress when the ticket was opened."""

    status: str
    count: float  # passing events
    run: float  # passing events in a row
    total: float  # the rule's field added up
    completions: int
    # Where it stood in the rule's own terms (the best value, days, steps done, …); None
    # in a ticket opened before snapshots kept it.
    current: float | None
    started_at: datetime | None
    expires_at: datetime | None


@dataclass(frozen=True)
class MissionFacts:
    """One mission of the ticket's offer as it stood when the ticket was opened."""

    title: str
    rule: str  # "GAME_END where kills ≥ 10, once"
    event: str  # the rule's event names, "A or B" for several
    completion: str  # "count", "consecutive", "sum", "max", …, "steps" (rules.COMPLETIONS)
    threshold: float
    progress: ProgressFacts | None  # None: not started
    events_seen: int  # events of the rule's name the game sent since the start
    events_last_at: datetime | None


@dataclass(frozen=True)
class ConversionFacts:
    transaction_id: str
    mission: str  # its mission's title
    status: str
    created_at: datetime | None
    payout: str  # in the offerwall's currency, as the postback carried it
    payout_usd: Decimal | None


@dataclass(frozen=True)
class Snapshot:
    currency: str  # the offerwall's currency code
    offer_kind: str  # "" when the context does not say
    clicks: ClickFacts
    linked_game_users: int
    missions: list[MissionFacts]
    conversions: list[ConversionFacts]


def read(context: dict[str, Any] | None) -> Snapshot:
    """A ticket's stored context as facts (an empty one for a ticket without one)."""
    context = context or {}
    missions = context.get("missions") or []
    titles = {m.get("id"): m.get("title", "") for m in missions}
    clicked = context.get("clicks") or {}
    return Snapshot(
        currency=context.get("currency") or "",
        offer_kind=(context.get("offer") or {}).get("kind") or "",
        clicks=ClickFacts(
            count=int(clicked.get("count") or 0),
            first_at=_moment(clicked.get("first_at")),
            last_at=_moment(clicked.get("last_at")),
            country=clicked.get("country"),
            os=clicked.get("os"),
            sub1=clicked.get("sub1"),
            sub2=clicked.get("sub2"),
            sub3=clicked.get("sub3"),
        ),
        linked_game_users=int(context.get("linked_game_users") or 0),
        missions=[_read_mission(m) for m in missions],
        conversions=[
            ConversionFacts(
                transaction_id=c.get("transaction_id", ""),
                mission=titles.get(c.get("mission_id"), ""),
                status=c.get("status", ""),
                created_at=_moment(c.get("created_at")),
                payout=str(c.get("payout", "")),
                payout_usd=_amount(c.get("payout_usd")),
            )
            for c in context.get("conversions") or []
        ],
    )


def _moment(value: str | None) -> datetime | None:
    """A context's ISO moment (None for none, or for one that does not read as a moment)."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _amount(value: str | None) -> Decimal | None:
    if not value:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        return None


def _read_mission(mission: dict[str, Any]) -> MissionFacts:
    progress, events = mission.get("progress"), mission.get("events") or {}
    return MissionFacts(
        title=mission.get("title", ""),
        rule=mission.get("rule", ""),
        event=mission.get("event", ""),
        completion=mission.get("completion", "count"),
        threshold=mission.get("threshold", 1),
        progress=None
        if progress is None
        else ProgressFacts(
            status=str(progress.get("status", "")),
            count=progress.get("count", 0),
            run=progress.get("run", 0),
            total=progress.get("total", 0),
            completions=int(progress.get("completions") or 0),
            current=progress.get("current"),
            started_at=_moment(progress.get("started_at")),
            expires_at=_moment(progress.get("expires_at")),
        ),
        events_seen=int(events.get("count") or 0),
        events_last_at=_moment(events.get("last_at")),
    )
