"""A player's "Missing reward?" report on the hosted wall
(docs/publisher-integration.md#missing-rewards-support-tickets).

The hosted wall opens a ticket for a player (`open_ticket`) and lists theirs with the
answers (`player_tickets`). Opening one stores a snapshot of what Questwall knew of the
player and the offer at that moment in the ticket's `context` (`api.tickets.snapshot`),
so whoever answers sees why the reward did or did not come without digging; they answer
in the portal (`api.tickets.desk`).

Limits per player: one ticket not closed per offer, five not closed in all. The player's
row is locked while they are checked, so two reports sent together cannot both pass.
The refusals the player reads are marked `N_` for the wall's catalogs (`make messages`
extracts them from this module)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api.core.refusals import N_, DomainError
from api.tickets import snapshot
from api.tickets.snapshot import Offer
from models import (
    Mission,
    Offerwall,
    OfferwallStatus,
    PlatformUser,
    Quest,
    SupportTicket,
    TicketStatus,
)
from models.schemas import NUL
from models.tables import support_ticket as _ticket
from models.types import utcnow

MESSAGE_MAX = 2000
ANSWER_MAX = 4000
# Tickets a player may have that are not closed, in all.
OPEN_PER_PLAYER = 5
# References: 8 characters without the easily confused ones (0/O, 1/I/L, U), as XXXX-XXXX.
REFERENCE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
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
    text = checked_text(message, limit=MESSAGE_MAX, what="your message", field="message")
    wall = _find_offerwall(session, offerwall_id)
    if wall is None or wall.status != OfferwallStatus.APPROVED:
        raise TicketError(N_("This offer list is not available."))
    offer = _offer(session, offer_id)
    player = _player(session, wall.id, uid, lock=True)
    if player is None:
        raise TicketError(NO_RECORD)
    clicks = snapshot.clicks(session, player.id, offer)
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
        context=snapshot.gather(session, wall, player.id, offer, clicks, now),
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


def checked_text(value: str, *, limit: int, what: str, field: str) -> str:
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


def _offer(session: Session, offer_id: str) -> Offer:
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
        return Offer("mission", mission.id, mission.title, mission.game_id, [mission])
    quest = session.get(Quest, offer_id) if usable else None
    if quest is None:
        raise TicketError(N_("This offer does not exist."))
    missions = session.exec(
        select(Mission)
        .where(col(Mission.quest_id) == quest.id)
        .order_by(col(Mission.quest_position), col(Mission.id))
    ).all()
    return Offer("quest", quest.id, quest.name, quest.game_id, list(missions))


def _check_limits(session: Session, player_id: str, offer: Offer) -> None:
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
