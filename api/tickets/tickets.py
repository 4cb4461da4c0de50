"""Support tickets: a player's "Missing reward?" report, and its answer
(docs/publisher-integration.md#missing-rewards-support-tickets).

The hosted wall opens a ticket for a player (`open_ticket`) and lists theirs with the
answers (`player_tickets`). Opening one snapshots what Questwall knew of the player and
the offer at that moment into the ticket's `context` (clicks, progress per mission,
events the game sent, conversions), so whoever answers sees why the reward did or did
not come without digging. The publisher answers and closes their offerwall's tickets in
the portal, staff any ticket; designers have no tickets (a player belongs to the
publisher). Every portal action checks the account here, on the server.

Limits per player: one ticket not closed per offer, five not closed in all. The player's
row is locked while they are checked, so two reports sent together cannot both pass."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api.accounts.access import Account, offerwall_for, require
from api.core.money import format_money, in_currency, usd
from api.core.paging import Window, paged
from api.core.refusals import N_, DomainError
from api.core.wording import counted
from api.missions.rules import plain_number, summary
from models import (
    Mission,
    Offerwall,
    OfferwallStatus,
    PlatformUser,
    Quest,
    Role,
    SupportTicket,
    TicketStatus,
)
from models.offer_schemas import rule_in
from models.schemas import NUL
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import event as _event
from models.tables import game_user as _game_user
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
from models.tables import progress as _progress
from models.tables import support_ticket as _ticket
from models.tracking import status_at
from models.types import utcnow

MESSAGE_MAX = 2000
ANSWER_MAX = 4000
# Tickets a player may have that are not closed, in all.
OPEN_PER_PLAYER = 5
# Conversions of the offer kept in a ticket's context (a repeatable mission may have many).
MAX_CONVERSIONS = 50
# References: 8 characters without the easily confused ones (0/O, 1/I/L, U), as XXXX-XXXX.
REFERENCE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
REFERENCE_SHAPE = re.compile(r"[A-Z0-9]{4}-?[A-Z0-9]{4}")
# The staff and the publishers answer tickets; the list's status filter's choices.
MANAGERS = (Role.STAFF, Role.PUBLISHER)
STATUSES = [s.value for s in TicketStatus]
NOT_CLOSED = (TicketStatus.OPEN, TicketStatus.ANSWERED)

NO_RECORD = N_(
    "We have no record of you opening this offer from this offer list. Start it from "
    "here first; if the reward does not arrive after you complete it, report it then."
)


class TicketError(DomainError, ValueError):
    """A ticket the rules refuse (to open, answer, close or reopen), or one the account
    may not see; the message is written for the person who tried.

    The message is `template` filled with `values`: the hosted wall shows a player's
    refusals in the player's language by translating the template (marked `N_` for the
    wall's catalogs) before filling it."""

    def __init__(self, template: str, field: str | None = None, **values: object):
        super().__init__(template.format(**values) if values else template, field)
        self.template, self.values = template, values

    def translated(self, gettext: Callable[[str], str]) -> str:
        """The refusal in the language `gettext` translates to."""
        template = gettext(self.template)
        return template.format(**self.values) if self.values else template


# --- the player's side (the hosted wall) ------------------------------------------------


@dataclass(frozen=True)
class _Offer:
    kind: str  # "mission" or "quest"
    id: str
    title: str
    game_id: str
    missions: list[Mission]


def open_ticket(
    session: Session,
    *,
    offerwall_id: str,
    uid: str,
    offer_id: str,
    message: str,
    now: datetime | None = None,
) -> SupportTicket:
    """Open a "Missing reward?" ticket for the player `uid` of the offerwall (its id, or
    its owid) about an offer they opened: a standalone mission's id or a quest's id.
    Call it in a write session; the ticket is flushed (its id and reference are set).

    Refused with a `TicketError`: a message empty once stripped, over 2,000 characters or
    holding NUL; an offerwall that is not approved; an unknown offer, or a mission inside
    a quest (the quest is the offer); a player who never opened this offer through this
    offerwall; a second ticket on the same offer while the first is not closed (the
    message names the first); a sixth ticket not closed."""
    now = now or utcnow()
    text = _text(message, limit=MESSAGE_MAX, what="your message", field="message")
    wall = _find_offerwall(session, offerwall_id)
    if wall is None or wall.status != OfferwallStatus.APPROVED:
        raise TicketError(N_("This offer list is not available."))
    offer = _offer(session, offer_id)
    player = _player(session, wall.id, uid, lock=True)
    if player is None:
        raise TicketError(NO_RECORD)
    clicks = _clicks(session, player.id, offer)
    if not clicks["count"]:
        raise TicketError(NO_RECORD)
    _check_limits(session, player.id, offer)
    ticket = SupportTicket(
        reference=_new_reference(session),
        offerwall_id=wall.id,
        platform_user_id=player.id,
        uid=uid,
        mission_id=offer.id if offer.kind == "mission" else None,
        quest_id=offer.id if offer.kind == "quest" else None,
        offer_title=offer.title[:200],
        message=text,
        context=_context(session, wall, player.id, offer, clicks, now),
        status=TicketStatus.OPEN,
        created_at=now,
        updated_at=now,
    )
    session.add(ticket)
    session.flush()
    return ticket


def player_tickets(session: Session, *, offerwall_id: str, uid: str) -> list[SupportTicket]:
    """The player's tickets (the offerwall by its id or owid), newest first, with their
    status and answer; none for a player Questwall does not know."""
    wall = _find_offerwall(session, offerwall_id)
    player = _player(session, wall.id, uid) if wall is not None else None
    if player is None:
        return []
    return list(
        session.exec(
            select(SupportTicket)
            .where(col(SupportTicket.platform_user_id) == player.id)
            .order_by(col(SupportTicket.created_at).desc(), col(SupportTicket.id).desc())
        ).all()
    )


def _text(value: str, *, limit: int, what: str, field: str) -> str:
    """A player's message or an answer, stripped: 1 to `limit` characters, no NUL."""
    text = value.strip()
    if NUL in text:
        raise TicketError(f"Remove the NUL character from {what}.", field=field)
    if not text:
        raise TicketError(f"Write {what} first.", field=field)
    if len(text) > limit:
        raise TicketError(
            f"Shorten {what} to {limit:,} characters (it has {len(text):,}).", field=field
        )
    return text


def _usable(key: str) -> bool:
    """An id or uid from a link that can be looked up (PostgreSQL refuses a NUL in one)."""
    return bool(key) and NUL not in key


def _find_offerwall(session: Session, ref: str) -> Offerwall | None:
    if not _usable(ref):
        return None
    return (
        session.get(Offerwall, ref)
        or session.exec(select(Offerwall).where(col(Offerwall.owid) == ref)).first()
    )


def _player(
    session: Session, offerwall_id: str, uid: str, *, lock: bool = False
) -> PlatformUser | None:
    if not _usable(uid):
        return None
    query = select(PlatformUser).where(
        col(PlatformUser.offerwall_id) == offerwall_id, col(PlatformUser.uid) == uid
    )
    if lock:  # the limits below are checked and the ticket added under this lock
        query = query.with_for_update()
    return session.exec(query).first()


def _offer(session: Session, offer_id: str) -> _Offer:
    usable = _usable(offer_id)
    mission = session.get(Mission, offer_id) if usable else None
    if mission is not None:
        if mission.quest_id is not None:
            quest = session.get(Quest, mission.quest_id)
            if quest is None:
                raise TicketError(N_("This mission is part of a quest: report the quest instead."))
            raise TicketError(
                N_("This mission is part of the quest “{quest}”: report the quest instead."),
                quest=quest.name,
            )
        return _Offer("mission", mission.id, mission.title, mission.game_id, [mission])
    quest = session.get(Quest, offer_id) if usable else None
    if quest is None:
        raise TicketError(N_("This offer does not exist."))
    missions = session.exec(
        select(Mission)
        .where(col(Mission.quest_id) == quest.id)
        .order_by(col(Mission.quest_position), col(Mission.id))
    ).all()
    return _Offer("quest", quest.id, quest.name, quest.game_id, list(missions))


def _on_offer(offer: _Offer) -> sa.ColumnElement[bool]:
    """A click on the offer's own link (a quest's clicks carry the quest's id)."""
    column = _click.c.mission_id if offer.kind == "mission" else _click.c.quest_id
    return column == offer.id


def _check_limits(session: Session, player_id: str, offer: _Offer) -> None:
    mine = session.execute(
        sa.select(_ticket.c.reference, _ticket.c.mission_id, _ticket.c.quest_id)
        .where(_ticket.c.platform_user_id == player_id, _ticket.c.status.in_(NOT_CLOSED))
        .order_by(_ticket.c.created_at)
    ).all()
    for reference, mission_id, quest_id in mine:
        if offer.id in (mission_id, quest_id):
            raise TicketError(
                N_(
                    "You already reported this offer (ticket {reference}): its answer will "
                    "appear there."
                ),
                reference=reference,
            )
    if len(mine) >= OPEN_PER_PLAYER:
        raise TicketError(
            N_(
                "You have {count} reports waiting: wait for their answers before you report "
                "another offer."
            ),
            count=OPEN_PER_PLAYER,
        )


def _new_reference(session: Session) -> str:
    for _ in range(10):
        raw = "".join(secrets.choice(REFERENCE_ALPHABET) for _ in range(8))
        reference = f"{raw[:4]}-{raw[4:]}"
        taken = session.execute(
            sa.select(_ticket.c.id).where(_ticket.c.reference == reference)
        ).first()
        if taken is None:
            return reference
    raise RuntimeError("no free ticket reference after 10 draws")  # 30^8 of them


# --- the context: what Questwall knew when the ticket was opened -----------------------


def iso(moment: datetime | None) -> str | None:
    """A moment as the context stores it: ISO 8601 in UTC, to the millisecond, with Z."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _clicks(session: Session, player_id: str, offer: _Offer) -> dict[str, Any]:
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


def _context(
    session: Session,
    wall: Offerwall,
    player_id: str,
    offer: _Offer,
    clicks: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    mission_ids = [m.id for m in offer.missions]
    progress = {
        row.mission_id: dict(row._mapping)
        for row in session.execute(
            sa.select(_progress).where(
                _progress.c.platform_user_id == player_id,
                _progress.c.mission_id.in_(mission_ids),
            )
        )
    }
    seen = _events_seen(session, player_id, mission_ids)
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
    session: Session, player_id: str, mission_ids: list[str]
) -> dict[str, dict[str, Any]]:
    """For each mission the player started: the events of its rule's name that the game
    users linked to the player sent since the start, counted, with the last one's time.
    One grouped statement over the events' (game, user, time) index."""
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
                    _event.c.name == _mission.c.rule_event,
                    _event.c.time >= _progress.c.started_at,
                ),
            )
        )
        .where(_progress.c.platform_user_id == player_id, _progress.c.mission_id.in_(mission_ids))
        .group_by(_progress.c.mission_id)
    )
    return {
        row.mission_id: {"count": int(row.seen), "last_at": iso(row.last_at)}
        for row in session.execute(query)
    }


def _mission_facts(
    mission: Mission, progress: dict[str, Any] | None, seen: dict[str, Any] | None, now: datetime
) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "id": mission.id,
        "title": mission.title,
        "rule": summary(rule_in(mission)),
        "event": mission.rule_event,
        "completion": mission.rule_completion,
        "threshold": plain_number(float(mission.rule_threshold)),
        "repeatable": mission.allow_multiple_conversions,
        "progress": None,
        "events": None,
    }
    if progress is not None:
        facts["progress"] = {
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
    session: Session, wall: Offerwall, player_id: str, offer: _Offer
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


# --- the portal's side: the list, a ticket, answering ------------------------------------


@dataclass(frozen=True)
class TicketRow:
    id: int
    reference: str
    created_at: str  # UTC, to the minute
    status: str
    offer_title: str
    uid: str
    publisher: str
    preview: str  # the message's start
    answered_by: str


def _visible(session: Session, account: Account) -> sa.ColumnElement[bool]:
    """Every ticket for staff; a publisher's approved offerwall's for a publisher (others
    are refused by `offerwall_for`: a designer, a publisher not approved)."""
    require(account, *MANAGERS)
    if account.role == Role.STAFF:
        return sa.true()
    return _ticket.c.offerwall_id == offerwall_for(session=session, account=account).id


def _when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else ""


def normal_reference(text: str) -> str | None:
    """A reference as typed ("k7mp2qxd", "K7MP-2QXD ") in its stored form, else None."""
    compact = text.strip().upper()
    if not REFERENCE_SHAPE.fullmatch(compact):
        return None
    compact = compact.replace("-", "")
    return f"{compact[:4]}-{compact[4:]}"


def search_tickets(
    session: Session, *, account: Account, status: str = "", text: str = "", page: int = 1
) -> Window[TicketRow]:
    """The tickets the account may see, newest first; `status` one of `STATUSES` (or all),
    `text` a reference, a player's uid, or part of the offer's title."""
    query = (
        sa.select(
            _ticket.c.id,
            _ticket.c.reference,
            _ticket.c.created_at,
            _ticket.c.status,
            _ticket.c.offer_title,
            _ticket.c.uid,
            _offerwall.c.name.label("publisher"),
            _ticket.c.message,
            _ticket.c.answered_by,
        )
        .select_from(_ticket.join(_offerwall, _offerwall.c.id == _ticket.c.offerwall_id))
        .where(_visible(session, account))
        .order_by(_ticket.c.created_at.desc(), _ticket.c.id.desc())
    )
    if status:
        query = query.where(_ticket.c.status == status)
    text = text.strip()
    if text:
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(
            sa.or_(
                _ticket.c.reference == (normal_reference(text) or text),
                _ticket.c.uid == text,
                _ticket.c.offer_title.ilike(f"%{escaped}%", escape="\\"),
            )
        )
    rows, total, page, pages = paged(session, query, page)
    return Window([_row(r) for r in rows], total, page, pages)


def _row(r: sa.Row) -> TicketRow:
    preview = " ".join(r.message.split())
    return TicketRow(
        id=r.id,
        reference=r.reference,
        created_at=_when(r.created_at),
        status=r.status,
        offer_title=r.offer_title,
        uid=r.uid,
        publisher=r.publisher,
        preview=preview if len(preview) <= 140 else preview[:139] + "…",
        answered_by=r.answered_by or "",
    )


def status_counts(session: Session, *, account: Account) -> dict[str, int]:
    """How many tickets the account may see are in each status (every status present)."""
    counted = dict(
        session.execute(
            sa.select(_ticket.c.status, sa.func.count())
            .where(_visible(session, account))
            .group_by(_ticket.c.status)
        ).all()
    )
    return {status: int(counted.get(status, 0)) for status in STATUSES}


def open_count(session: Session, *, account: Account) -> int:
    """Tickets the account may see that wait for an answer (the dashboard's figure)."""
    return session.execute(
        sa.select(sa.func.count()).where(
            _visible(session, account), _ticket.c.status == TicketStatus.OPEN
        )
    ).scalar_one()


def ticket_for(
    session: Session, *, account: Account, ticket_id: int | str, lock: bool = False
) -> SupportTicket:
    """A ticket the account may act on: staff any, a publisher their offerwall's. The same
    answer for one that does not exist and one of another publisher. `lock`: for a change
    (FOR UPDATE on PostgreSQL; SQLite's write session already holds the write lock)."""
    account = require(account, *MANAGERS)
    try:
        key = int(ticket_id)
    except (TypeError, ValueError):
        raise TicketError("No such ticket.") from None
    ticket = session.get(SupportTicket, key, with_for_update=lock or None)
    if (
        ticket is not None
        and account.role == Role.PUBLISHER
        and ticket.offerwall_id != offerwall_for(session=session, account=account).id
    ):
        ticket = None
    if ticket is None:
        raise TicketError("No such ticket.")
    return ticket


def answer(
    session: Session,
    *,
    account: Account,
    ticket_id: int | str,
    text: str,
    close: bool,
    now: datetime | None = None,
) -> SupportTicket:
    """Answer a ticket the account may act on (the player reads it on the wall): it becomes
    answered, or closed when `close`. Answering again replaces the answer. Refused: a
    closed ticket (reopen it first), an answer empty once stripped or over 4,000
    characters."""
    now = now or utcnow()
    ticket = ticket_for(session, account=account, ticket_id=ticket_id, lock=True)
    written = _text(text, limit=ANSWER_MAX, what="the answer", field="answer")
    if ticket.status == TicketStatus.CLOSED:
        raise TicketError(f"Ticket {ticket.reference} is closed: reopen it to answer again.")
    ticket.answer, ticket.answered_by, ticket.answered_at = written, account.email[:320], now
    ticket.status = TicketStatus.CLOSED if close else TicketStatus.ANSWERED
    ticket.closed_at = now if close else None
    ticket.updated_at = now
    session.add(ticket)
    session.flush()
    return ticket


def close(
    session: Session, *, account: Account, ticket_id: int | str, now: datetime | None = None
) -> SupportTicket:
    """Close a ticket that is open or answered (with its answer, if any, kept)."""
    now = now or utcnow()
    ticket = ticket_for(session, account=account, ticket_id=ticket_id, lock=True)
    if ticket.status == TicketStatus.CLOSED:
        raise TicketError(f"Ticket {ticket.reference} is already closed.")
    ticket.status, ticket.closed_at, ticket.updated_at = TicketStatus.CLOSED, now, now
    session.add(ticket)
    session.flush()
    return ticket


def reopen(
    session: Session, *, account: Account, ticket_id: int | str, now: datetime | None = None
) -> SupportTicket:
    """Reopen a closed ticket: it waits for an answer again (a given answer stays visible
    to the player). Refused while the player has another ticket on the same offer that
    is not closed: that one is where the conversation goes on."""
    now = now or utcnow()
    ticket = ticket_for(session, account=account, ticket_id=ticket_id, lock=True)
    if ticket.status != TicketStatus.CLOSED:
        raise TicketError(f"Ticket {ticket.reference} is not closed.")
    offer = ticket.mission_id or ticket.quest_id
    other = (
        session.execute(
            sa.select(_ticket.c.reference).where(
                _ticket.c.platform_user_id == ticket.platform_user_id,
                _ticket.c.status.in_(NOT_CLOSED),
                _ticket.c.id != ticket.id,
                sa.or_(_ticket.c.mission_id == offer, _ticket.c.quest_id == offer),
            )
        ).scalar()
        if offer
        else None
    )
    if other is not None:
        raise TicketError(
            f"The player has another ticket on this offer, {other}: answer that one instead."
        )
    ticket.status, ticket.closed_at, ticket.updated_at = TicketStatus.OPEN, None, now
    session.add(ticket)
    session.flush()
    return ticket


# --- a ticket as the portal shows it: the context in words -------------------------------


@dataclass(frozen=True)
class MissionFacts:
    """One mission of the ticket's offer as it stood when the ticket was opened."""

    title: str
    rule: str  # "GAME_END where kills ≥ 10, once"
    status: str  # the progress's status, or "not started"
    tally: str  # "2 of 3 passing events", "2 of 3 in a row", "total 350 of 1000"
    completions: str
    started: str
    expires: str
    events: str  # what the game sent of the rule's event since the start


@dataclass(frozen=True)
class ConversionFacts:
    transaction_id: str
    mission: str
    status: str
    created_at: str
    payout: str  # in the offerwall's currency, and USD


@dataclass(frozen=True)
class TicketDetail:
    id: int
    reference: str
    status: str
    created_at: str
    updated_at: str
    publisher: str
    uid: str
    platform_user_id: str
    offer_kind: str
    offer_id: str  # "" once the offer is deleted
    offer_title: str
    message: str
    answer: str
    answered_by: str
    answered_at: str
    closed_at: str
    clicks: str  # how often and when the player opened the offer
    last_click: str  # where from, the last time
    game_users: str  # whether the game linked an account of its own to the player
    missions: list[MissionFacts]
    conversions: list[ConversionFacts]


def ticket_detail(session: Session, *, account: Account, ticket_id: int | str) -> TicketDetail:
    """A ticket the account may see, with its context in words."""
    ticket = ticket_for(session, account=account, ticket_id=ticket_id)
    publisher = session.get(Offerwall, ticket.offerwall_id)
    context = ticket.context or {}
    missions = context.get("missions") or []
    titles = {m.get("id"): m.get("title", "") for m in missions}
    currency = context.get("currency") or ""
    return TicketDetail(
        id=ticket.id or 0,
        reference=ticket.reference,
        status=ticket.status,
        created_at=_when(ticket.created_at),
        updated_at=_when(ticket.updated_at),
        publisher=publisher.name if publisher is not None else "",
        uid=ticket.uid,
        platform_user_id=ticket.platform_user_id,
        offer_kind=(context.get("offer") or {}).get("kind")
        or ("quest" if ticket.quest_id else "mission"),
        offer_id=ticket.mission_id or ticket.quest_id or "",
        offer_title=ticket.offer_title,
        message=ticket.message,
        answer=ticket.answer or "",
        answered_by=ticket.answered_by or "",
        answered_at=_when(ticket.answered_at),
        closed_at=_when(ticket.closed_at),
        clicks=_clicks_words(context.get("clicks") or {}),
        last_click=_last_click_words(context.get("clicks") or {}),
        game_users=_game_users_words(context.get("linked_game_users")),
        missions=[_mission_words(m) for m in missions],
        conversions=[
            ConversionFacts(
                transaction_id=c.get("transaction_id", ""),
                mission=titles.get(c.get("mission_id"), ""),
                status=c.get("status", ""),
                created_at=_iso_words(c.get("created_at")),
                payout=_payout_words(c, currency),
            )
            for c in context.get("conversions") or []
        ],
    )


def _iso_words(value: str | None) -> str:
    """A context's ISO moment as the portal writes moments ("" for none)."""
    if not value:
        return ""
    try:
        return _when(datetime.fromisoformat(value))
    except ValueError:
        return value


def _number(value: Any) -> str:
    number = plain_number(float(value)) if isinstance(value, int | float) else value
    return f"{number:g}" if isinstance(number, float) else str(number)


def _payout_words(conversion: dict[str, Any], currency: str) -> str:
    """ "150 GEM ($1.50)", or "1.50 USD" when the offerwall pays in USD."""
    paid = f"{conversion.get('payout', '')} {currency}".strip()
    if currency == "USD" or not conversion.get("payout_usd"):
        return paid
    return f"{paid} ({format_money(Decimal(conversion['payout_usd']))})"


def _clicks_words(clicks: dict[str, Any]) -> str:
    count = int(clicks.get("count") or 0)
    if not count:
        return "Never opened through this offerwall."
    first, last = _iso_words(clicks.get("first_at")), _iso_words(clicks.get("last_at"))
    if count == 1:
        return f"Opened once, {first}."
    return f"Opened {count} times, first {first}, last {last}."


def _last_click_words(clicks: dict[str, Any]) -> str:
    parts = [
        f"country {clicks.get('country') or 'unknown'}",
        f"device {clicks.get('os') or 'unknown'}",
    ]
    parts += [f"{name} {clicks[name]}" for name in ("sub1", "sub2", "sub3") if clicks.get(name)]
    return ", ".join(parts)


def _game_users_words(linked: Any) -> str:
    if not linked:
        return (
            "No game account is linked to the player: the game has not (yet) sent an event "
            "naming their platform id, so no event of theirs can count."
        )
    return f"{counted(int(linked), 'game account', 'game accounts')} linked to the player."


def _mission_words(mission: dict[str, Any]) -> MissionFacts:
    progress, events = mission.get("progress"), mission.get("events")
    event = mission.get("event", "")
    if progress is None:
        return MissionFacts(
            title=mission.get("title", ""),
            rule=mission.get("rule", ""),
            status="not started",
            tally="",
            completions="",
            started="",
            expires="",
            events="",
        )
    threshold = _number(mission.get("threshold", 1))
    kind = mission.get("completion", "count")
    if kind == "sum":
        tally = f"total {_number(progress.get('total', 0))} of {threshold}"
    elif kind == "consecutive":
        tally = f"{_number(progress.get('run', 0))} of {threshold} in a row"
    else:
        tally = f"{_number(progress.get('count', 0))} of {threshold} passing events"
    seen = int((events or {}).get("count") or 0)
    if seen:
        said = (
            f"{counted(seen, event + ' event', event + ' events')} since the start, the last "
            f"{_iso_words((events or {}).get('last_at'))}."
        )
    else:
        said = f"No {event} event from the player's game accounts since the start."
    return MissionFacts(
        title=mission.get("title", ""),
        rule=mission.get("rule", ""),
        status=str(progress.get("status", "")),
        tally=tally,
        completions=counted(int(progress.get("completions") or 0), "completion", "completions"),
        started=_iso_words(progress.get("started_at")),
        expires=_iso_words(progress.get("expires_at")) or "no time limit",
        events=said,
    )
