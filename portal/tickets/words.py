"""A support ticket as the tickets page writes it: the list's rows, and a ticket with what
Questwall knew when the player reported it (`api.tickets.snapshot`) in sentences."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from api.core.wording import counted
from api.missions import plain_number
from api.tickets import ClickFacts, ConversionFacts, MissionFacts, desk
from portal.components.formatting import money, when


@dataclass(frozen=True)
class TicketLine:
    """A row of the list."""

    id: int
    reference: str
    created_at: str  # UTC, to the minute
    status: str
    offer_title: str
    uid: str
    publisher: str
    preview: str  # the message's start
    answered_by: str


@dataclass(frozen=True)
class MissionWords:
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
class ConversionWords:
    transaction_id: str
    mission: str
    status: str
    created_at: str
    payout: str  # in the offerwall's currency, and USD


@dataclass(frozen=True)
class TicketWords:
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
    missions: list[MissionWords]
    conversions: list[ConversionWords]


def line(row: desk.TicketRow) -> TicketLine:
    return TicketLine(
        id=row.id,
        reference=row.reference,
        created_at=when(row.created_at),
        status=row.status,
        offer_title=row.offer_title,
        uid=row.uid,
        publisher=row.publisher,
        preview=row.preview,
        answered_by=row.answered_by,
    )


def in_words(ticket: desk.TicketDetail) -> TicketWords:
    """A ticket with its context in words."""
    context = ticket.context
    return TicketWords(
        id=ticket.id,
        reference=ticket.reference,
        status=ticket.status,
        created_at=when(ticket.created_at),
        updated_at=when(ticket.updated_at),
        publisher=ticket.publisher,
        uid=ticket.uid,
        platform_user_id=ticket.platform_user_id,
        offer_kind=ticket.offer_kind,
        offer_id=ticket.offer_id,
        offer_title=ticket.offer_title,
        message=ticket.message,
        answer=ticket.answer,
        answered_by=ticket.answered_by,
        answered_at=when(ticket.answered_at),
        closed_at=when(ticket.closed_at),
        clicks=clicks_words(context.clicks),
        last_click=last_click_words(context.clicks),
        game_users=game_users_words(context.linked_game_users),
        missions=[mission_words(m) for m in context.missions],
        conversions=[conversion_words(c, context.currency) for c in context.conversions],
    )


def number(value: object) -> str:
    """A count or a threshold as people write it: 10, not 10.0."""
    shown = plain_number(float(value)) if isinstance(value, int | float) else value
    return f"{shown:g}" if isinstance(shown, float) else str(shown)


def payout_words(payout: str, payout_usd: Decimal | None, currency: str) -> str:
    """ "150 GEM ($1.50)", or "1.50 USD" when the offerwall pays in USD."""
    paid = f"{payout} {currency}".strip()
    if currency == "USD" or payout_usd is None:
        return paid
    return f"{paid} ({money(payout_usd)})"


def conversion_words(conversion: ConversionFacts, currency: str) -> ConversionWords:
    return ConversionWords(
        transaction_id=conversion.transaction_id,
        mission=conversion.mission,
        status=conversion.status,
        created_at=when(conversion.created_at),
        payout=payout_words(conversion.payout, conversion.payout_usd, currency),
    )


def clicks_words(clicks: ClickFacts) -> str:
    if not clicks.count:
        return "Never opened through this offerwall."
    first, last = when(clicks.first_at), when(clicks.last_at)
    if clicks.count == 1:
        return f"Opened once, {first}."
    return f"Opened {clicks.count} times, first {first}, last {last}."


def last_click_words(clicks: ClickFacts) -> str:
    parts = [f"country {clicks.country or 'unknown'}", f"device {clicks.os or 'unknown'}"]
    subs = (("sub1", clicks.sub1), ("sub2", clicks.sub2), ("sub3", clicks.sub3))
    parts += [f"{name} {value}" for name, value in subs if value]
    return ", ".join(parts)


def game_users_words(linked: int) -> str:
    if not linked:
        return (
            "No game account is linked to the player: the game has not (yet) sent an event "
            "naming their platform id, so no event of theirs can count."
        )
    return f"{counted(linked, 'game account', 'game accounts')} linked to the player."


# A mission's progress in words, by its completion kind (docs/missions.md#the-rule).
_KIND_TALLIES = {
    "max": "best {current}, needs {target}",
    "min": "best {current}, needs {target} or less",
    "distinct": "{current} of {target} different values",
    "days": "{current} of {target} days",
    "streak": "{current} of {target} days in a row",
    "steps": "{current} of {target} steps done",
}


def mission_words(mission: MissionFacts) -> MissionWords:
    progress, event = mission.progress, mission.event
    if progress is None:
        return MissionWords(
            title=mission.title,
            rule=mission.rule,
            status="not started",
            tally="",
            completions="",
            started="",
            expires="",
            events="",
        )
    threshold = number(mission.threshold)
    current = number(progress.current) if progress.current is not None else None
    if mission.completion == "sum":
        tally = f"total {number(progress.total)} of {threshold}"
    elif mission.completion == "consecutive":
        tally = f"{number(progress.run)} of {threshold} in a row"
    elif mission.completion in _KIND_TALLIES and current is not None:
        tally = _KIND_TALLIES[mission.completion].format(current=current, target=threshold)
    else:
        tally = f"{number(progress.count)} of {threshold} passing events"
    if mission.events_seen:
        said = (
            f"{counted(mission.events_seen, event + ' event', event + ' events')} since the "
            f"start, the last {when(mission.events_last_at)}."
        )
    else:
        said = f"No {event} event from the player's game accounts since the start."
    return MissionWords(
        title=mission.title,
        rule=mission.rule,
        status=progress.status,
        tally=tally,
        completions=counted(progress.completions, "completion", "completions"),
        started=when(progress.started_at),
        expires=when(progress.expires_at) or "no time limit",
        events=said,
    )
