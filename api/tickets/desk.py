"""The support desk: the tickets players opened on the hosted wall, as the portal lists,
shows, answers, closes and reopens them
(docs/publisher-integration.md#missing-rewards-support-tickets).

The publisher answers and closes their offerwall's tickets, staff any ticket; designers
have no tickets (a player belongs to the publisher). Every action checks the account
here, on the server. A ticket comes with what Questwall knew when the player reported it
(`api.tickets.snapshot`), as facts the portal words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from api.accounts import Account, offerwall_for, require
from api.core.paging import Window, paged
from api.tickets import snapshot
from api.tickets.report import ANSWER_MAX, NOT_CLOSED, TicketError, checked_text
from models import Offerwall, Role, SupportTicket, TicketStatus
from models.tables import offerwall as _offerwall
from models.tables import support_ticket as _ticket
from models.types import utcnow

# The staff and the publishers answer tickets; the list's status filter's choices.
MANAGERS = (Role.STAFF, Role.PUBLISHER)
STATUSES = [s.value for s in TicketStatus]
# A reference as typed: XXXX-XXXX, the dash optional.
REFERENCE_SHAPE = re.compile(r"[A-Z0-9]{4}-?[A-Z0-9]{4}")


@dataclass(frozen=True)
class TicketRow:
    id: int
    reference: str
    created_at: datetime
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
        created_at=r.created_at,
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
    written = checked_text(text, limit=ANSWER_MAX, what="the answer", field="answer")
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


@dataclass(frozen=True)
class TicketDetail:
    id: int
    reference: str
    status: str
    created_at: datetime
    updated_at: datetime
    publisher: str
    uid: str
    platform_user_id: str
    offer_kind: str
    offer_id: str  # "" once the offer is deleted
    offer_title: str
    message: str
    answer: str
    answered_by: str
    answered_at: datetime | None
    closed_at: datetime | None
    context: snapshot.Snapshot  # what Questwall knew when the player reported it


def ticket_detail(session: Session, *, account: Account, ticket_id: int | str) -> TicketDetail:
    """A ticket the account may see, with its context read back as facts."""
    ticket = ticket_for(session, account=account, ticket_id=ticket_id)
    publisher = session.get(Offerwall, ticket.offerwall_id)
    context = snapshot.read(ticket.context)
    return TicketDetail(
        id=ticket.id or 0,
        reference=ticket.reference,
        status=ticket.status,
        created_at=ticket.created_at,
        updated_at=ticket.updated_at,
        publisher=publisher.name if publisher is not None else "",
        uid=ticket.uid,
        platform_user_id=ticket.platform_user_id,
        offer_kind=context.offer_kind or ("quest" if ticket.quest_id else "mission"),
        offer_id=ticket.mission_id or ticket.quest_id or "",
        offer_title=ticket.offer_title,
        message=ticket.message,
        answer=ticket.answer or "",
        answered_by=ticket.answered_by or "",
        answered_at=ticket.answered_at,
        closed_at=ticket.closed_at,
        context=context,
    )
