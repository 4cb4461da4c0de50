"""What a game's Webhooks page shows and does with one endpoint
(docs/game-integration.md#webhooks): its delivery log filtered by type and status and
paged (`delivery_log`), a message opened with its attempts (`opened`), a message sent
again (`send_again`) or every message of a time range (`replay_range`), and the signing
secret rotated only after the account entered its password again
(`rotate_after_password`).

Every function takes the game the caller was allowed to act on (api/accounts/access.py
`game_for`) and checks that the endpoint is that game's: another game's endpoint, or a
message of another endpoint, is refused like one that does not exist. The rows carry
moments; the portal writes them for people (portal/webhooks/state.py).

A message queued again keeps its `message_id` (a receiver that deduped it dedupes it again,
by `webhook-id`) and its attempts; it goes out again in the order of the outbox, after the
earlier pending messages of its player (api/webhooks/messages.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api.accounts import Account, game_after_password
from api.core.crypto import SecretBox
from api.core.paging import Window, paged
from api.webhooks.endpoints import (
    OVERLAP,
    TYPES,
    WebhookError,
    endpoint_of_game,
    rotate_secret,
)
from models import MessageStatus, WebhookAttempt, WebhookEndpoint, WebhookMessage

REPLAY_SPAN = timedelta(days=7)  # the longest time range replayed at once
REPLAY_MAX = 10_000  # the most messages replayed at once
STATUSES = tuple(MessageStatus)


@dataclass(frozen=True)
class MessageRow:
    """One message as the log lists it."""

    id: int
    message_id: str  # the `webhook-id` header
    type: str
    status: str  # pending, delivered or failed
    attempts: int
    created_at: datetime
    delivered_at: datetime | None
    next_attempt_at: datetime | None  # a pending message's next attempt; None otherwise
    last_status: str  # the last attempt's HTTP status ("" without one)


@dataclass(frozen=True)
class AttemptRow:
    started_at: datetime
    status_code: str  # "" when no answer came
    duration_ms: int
    body_excerpt: str
    error: str


@dataclass(frozen=True)
class OpenedMessage:
    row: MessageRow
    body: str  # the JSON body as sent, indented for reading
    attempts: list[AttemptRow]  # first to last


def _checked(choice: str, choices: tuple[str, ...], what: str) -> str:
    if choice and choice not in choices:
        raise WebhookError(f"Unknown {what} {choice}; it is one of {', '.join(choices)}.")
    return choice


_LAST_CODE = (
    sa.select(col(WebhookAttempt.status_code))
    .where(col(WebhookAttempt.message_id) == col(WebhookMessage.id))
    .order_by(col(WebhookAttempt.id).desc())
    .limit(1)
    .scalar_subquery()
)


def _row(message: WebhookMessage, code: int | None) -> MessageRow:
    pending = message.status == MessageStatus.PENDING
    return MessageRow(
        id=message.id or 0,
        message_id=message.message_id,
        type=message.type,
        status=message.status,
        attempts=message.attempts,
        created_at=message.created_at,
        delivered_at=message.delivered_at,
        next_attempt_at=message.next_attempt_at if pending else None,
        last_status="" if code is None else str(code),
    )


def delivery_log(
    *,
    session: Session,
    game_id: str,
    endpoint_id: str,
    message_type: str = "",
    status: str = "",
    page: int = 1,
) -> Window[MessageRow]:
    """The endpoint's messages newest first, of one type and one status when given, one
    page of them (each with its last answer, in the same statement)."""
    endpoint = endpoint_of_game(session=session, endpoint_id=endpoint_id, game_id=game_id)
    query = sa.select(WebhookMessage, _LAST_CODE).where(
        col(WebhookMessage.endpoint_id) == endpoint.id
    )
    if _checked(message_type, TYPES, "event type"):
        query = query.where(col(WebhookMessage.type) == message_type)
    if _checked(status, STATUSES, "status"):
        query = query.where(col(WebhookMessage.status) == status)
    rows, total, page, pages = paged(session, query.order_by(col(WebhookMessage.id).desc()), page)
    return Window([_row(message, code) for message, code in rows], total, page, pages)


def _message(session: Session, endpoint: WebhookEndpoint, message_id: int) -> WebhookMessage:
    message = session.get(WebhookMessage, message_id)
    if message is None or message.endpoint_id != endpoint.id:
        raise WebhookError("No such webhook message.")
    return message


def opened(*, session: Session, game_id: str, endpoint_id: str, message_id: int) -> OpenedMessage:
    """One message of the endpoint: its row, its body indented, and each attempt."""
    endpoint = endpoint_of_game(session=session, endpoint_id=endpoint_id, game_id=game_id)
    message = _message(session, endpoint, message_id)
    found = session.exec(
        select(WebhookAttempt)
        .where(col(WebhookAttempt.message_id) == message.id)
        .order_by(col(WebhookAttempt.id))
    ).all()
    attempts = [
        AttemptRow(
            started_at=a.started_at,
            status_code="" if a.status_code is None else str(a.status_code),
            duration_ms=a.duration_ms,
            body_excerpt=a.body_excerpt or "",
            error=a.error or "",
        )
        for a in found
    ]
    last = found[-1].status_code if found else None
    return OpenedMessage(_row(message, last), _pretty(message.body), attempts)


def _pretty(body: str) -> str:
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:
        return body


def _queue_again(now: datetime) -> sa.Update:
    """Pending again from now, attempts kept; never one being sent right now (leased)."""
    return (
        sa.update(WebhookMessage)
        .where(
            sa.or_(col(WebhookMessage.lease_until).is_(None), col(WebhookMessage.lease_until) < now)
        )
        .values(
            status=MessageStatus.PENDING,
            next_attempt_at=now,
            lease_until=None,
            delivered_at=None,
            retry_from=now,  # a new day of retries, from the first wait
        )
        .execution_options(synchronize_session=False)
    )


def send_again(
    *, session: Session, game_id: str, endpoint_id: str, message_id: int, now: datetime
) -> WebhookEndpoint:
    """Queue one message of the endpoint again, now: a delivered or failed one becomes
    pending with its attempts and `message_id` kept; a pending one is tried now rather
    than after its wait. Refused while it is being sent. The endpoint, for what to say
    (a disabled one's messages wait for it)."""
    endpoint = endpoint_of_game(session=session, endpoint_id=endpoint_id, game_id=game_id)
    message = _message(session, endpoint, message_id)
    done = session.execute(_queue_again(now).where(col(WebhookMessage.id) == message.id))
    if done.rowcount != 1:  # type: ignore[attr-defined]
        raise WebhookError("This message is being sent right now; look again in a moment.")
    return endpoint


def replay_range(
    *,
    session: Session,
    game_id: str,
    endpoint_id: str,
    start: datetime,
    end: datetime,
    now: datetime,
    message_type: str = "",
) -> int:
    """Queue again every message of the endpoint made from `start` up to `end` (of one
    type when given), to go out in the order they were made; how many. A range longer
    than 7 days, or of more than 10,000 messages, is refused: replay it in parts."""
    endpoint = endpoint_of_game(session=session, endpoint_id=endpoint_id, game_id=game_id)
    if end <= start:
        raise WebhookError("The range ends before it starts: the end must come after the start.")
    if end - start > REPLAY_SPAN:
        raise WebhookError(
            f"A replay covers at most {REPLAY_SPAN.days} days: replay a longer time in parts."
        )
    chosen = [
        col(WebhookMessage.endpoint_id) == endpoint.id,
        col(WebhookMessage.created_at) >= start,
        col(WebhookMessage.created_at) < end,
    ]
    if _checked(message_type, TYPES, "event type"):
        chosen.append(col(WebhookMessage.type) == message_type)
    count = session.execute(sa.select(sa.func.count()).where(*chosen)).scalar_one()
    if count > REPLAY_MAX:
        raise WebhookError(
            f"That range holds {count:,} messages; a replay takes at most {REPLAY_MAX:,}: "
            "choose a shorter range or one type."
        )
    if count == 0:
        return 0
    return session.execute(_queue_again(now).where(*chosen)).rowcount  # type: ignore[attr-defined]


def rotate_after_password(
    *,
    session: Session,
    box: SecretBox,
    account: Account,
    game_id: str,
    endpoint_id: str,
    password: str,
    overlap: str,
    now: datetime,
) -> tuple[str, WebhookEndpoint]:
    """A new signing secret for the endpoint (shown once) and the endpoint, for an account
    that manages the game and entered its password again (`game_after_password`); the old
    secret signs beside it for the overlap (none, 1h, 24h, 7d). Raises WebhookError,
    Forbidden, LoginThrottled or AccountError (field "password")."""
    endpoint = endpoint_of_game(session=session, endpoint_id=endpoint_id, game_id=game_id)
    if overlap not in OVERLAP:
        raise WebhookError("Choose how long the current secret also signs.")
    game_after_password(
        session=session, box=box, account=account, password=password, game_id=game_id
    )
    secret = rotate_secret(session=session, box=box, endpoint=endpoint, overlap=overlap, now=now)
    return secret, endpoint
