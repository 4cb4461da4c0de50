"""The webhook outbox (docs/game-integration.md#webhooks): a message is stored in the
transaction that caused it, one row per endpoint of the game that takes its type; the
dispatcher (api/webhooks/dispatcher.py) claims due ones and records each attempt here.

Order: a player's messages to one endpoint go out in the order they were made: a message
is not claimed while an earlier one of the same endpoint and player is pending. Retries:
after a failure the next attempt waits 5 s, 10 s, 20 s, … up to an hour, for a day from
the message's making; then the message has failed. A `410 Gone` disables the endpoint
(its messages wait for it to be enabled again)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlmodel import Session, col

from api import audit
from api.core.db import write_connection
from api.mail import outbox as mail
from api.ops import delivered_on_commit, made_by
from api.postbacks.transport import AttemptResult
from api.webhooks.endpoints import RETRY_FOR, takes
from models import EndpointStatus, Game, MessageStatus, Role, User
from models.tables import game as _game
from models.tables import webhook_attempt as _attempt
from models.tables import webhook_endpoint as _endpoint
from models.tables import webhook_message as _message

PAUSE_AFTER = timedelta(days=1)  # of every attempt failing
KEPT_FOR = timedelta(days=30)  # delivered and failed messages, for the delivery log
FIRST_RETRY = timedelta(seconds=5)
LONGEST_WAIT = timedelta(hours=1)


def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def message_body(message_type: str, data: dict[str, Any], now: datetime) -> bytes:
    return orjson.dumps({"type": message_type, "timestamp": iso(now), "data": data})


def game_endpoints(db: Any, game_id: str) -> list[Any]:
    """The game's endpoints (id, event types), read with a key-share lock on PostgreSQL: an
    endpoint removed meanwhile waits for this transaction, so a message stored for it
    never breaks the transaction that caused it."""
    return db.execute(
        sa.select(_endpoint.c.id, _endpoint.c.event_types)
        .where(_endpoint.c.game_id == game_id)
        .order_by(_endpoint.c.id)
        .with_for_update(read=True, key_share=True)
    ).all()


def emit(
    db: Any,
    *,
    game_id: str,
    player: str,
    items: list[tuple[str, dict[str, Any]]],
    now: datetime,
) -> int:
    """Store each (type, data) of `items`, in order, for every endpoint of the game that
    takes its type (a disabled one's wait for it), in the caller's transaction (a Session
    or a Connection); how many messages. One read of the game's endpoints."""
    endpoints = game_endpoints(db, game_id)
    origin = made_by()
    rows = [
        {
            "message_id": "msg_" + uuid.uuid4().hex,
            "endpoint_id": endpoint.id,
            "type": message_type,
            "player": player,
            "body": message_body(message_type, data, now).decode(),
            "status": MessageStatus.PENDING,
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
            **origin,
        }
        for message_type, data in items
        for endpoint in endpoints
        if takes(endpoint.event_types, message_type)
    ]
    if rows:
        db.execute(_message.insert(), rows)
    return len(rows)


PROGRESS_COALESCE = timedelta(seconds=3)


def emit_progressed(
    db: Any,
    *,
    endpoints: list[Any],
    player: str,
    mission_id: str,
    data: dict[str, Any],
    now: datetime,
) -> int:
    """`mission.progressed` to the endpoints that name it, one per player and mission every
    few seconds: it waits PROGRESS_COALESCE before going out, and a later progress of the
    same player and mission replaces it while it is unsent, unless a later message of the
    player waits behind it; `endpoints`: the game's (`game_endpoints`). How many were
    stored anew."""
    key = f"{player}:{mission_id}"
    body = message_body("mission.progressed", data, now).decode()
    made = 0
    for endpoint in endpoints:
        if not takes(endpoint.event_types, "mission.progressed"):
            continue
        later = _message.alias("later")
        replaced = db.execute(
            sa.update(_message)
            .where(
                _message.c.endpoint_id == endpoint.id,
                _message.c.coalesce_key == key,
                _message.c.status == MessageStatus.PENDING,
                _message.c.attempts == 0,
                _message.c.lease_until.is_(None),
                # Not past a later message of the player: the order they happened in.
                ~sa.select(later.c.id)
                .where(
                    later.c.endpoint_id == _message.c.endpoint_id,
                    later.c.player == _message.c.player,
                    later.c.id > _message.c.id,
                )
                .exists(),
            )
            .values(body=body)
        )
        if replaced.rowcount:
            continue
        db.execute(
            _message.insert().values(
                message_id="msg_" + uuid.uuid4().hex,
                endpoint_id=endpoint.id,
                type="mission.progressed",
                player=player,
                body=body,
                coalesce_key=key,
                status=MessageStatus.PENDING,
                attempts=0,
                next_attempt_at=now + PROGRESS_COALESCE,
                created_at=now,
                **made_by(),
            )
        )
        made += 1
    return made


def game_takes(db: Any, game_id: str, message_type: str) -> bool:
    """Whether an endpoint of the game takes this type (one small read)."""
    return any(takes(row.event_types, message_type) for row in game_endpoints(db, game_id))


@dataclass(frozen=True)
class Claimed:
    id: int
    message_id: str
    endpoint_id: str
    body: str
    created_at: datetime
    retry_from: datetime | None = None
    # The request that made the message (api/ops: its attempts log and trace under it).
    request_id: str | None = None
    traceparent: str | None = None
    delivered_at: datetime | None = None  # an earlier delivery (a message sent again)
    # The lease this claim holds: a write for the message is fenced by it, so a claim that
    # ran out (another dispatcher took the message) changes nothing.
    lease_until: datetime | None = None


_earlier = _message.alias("earlier")
_EARLIER_PENDING = (
    sa.select(_earlier.c.id)
    .where(
        _earlier.c.endpoint_id == _message.c.endpoint_id,
        _earlier.c.player == _message.c.player,
        _earlier.c.id < _message.c.id,
        _earlier.c.status == MessageStatus.PENDING,
    )
    .exists()
)
_ENDPOINT_ACTIVE = (
    sa.select(_endpoint.c.id)
    .where(_endpoint.c.id == _message.c.endpoint_id, _endpoint.c.status == EndpointStatus.ACTIVE)
    .exists()
)

# A due message a dispatcher takes: its endpoint active, none of its player's before it
# unsent (also what the oldest-due gauge counts).
SENDABLE = (_ENDPOINT_ACTIVE, ~_EARLIER_PENDING)


def claim(
    engine: Engine, *, limit: int, lease_seconds: float, now: datetime, busy: frozenset[str]
) -> list[Claimed]:
    """Take up to `limit` due messages of endpoints not in `busy` (each endpoint is one
    lane), oldest first, until the lease ends."""
    due = sa.select(
        _message.c.id,
        _message.c.message_id,
        _message.c.endpoint_id,
        _message.c.body,
        _message.c.created_at,
        _message.c.retry_from,
        _message.c.request_id,
        _message.c.traceparent,
        _message.c.delivered_at,
    ).where(
        _message.c.status == MessageStatus.PENDING,
        _message.c.next_attempt_at <= now,
        sa.or_(_message.c.lease_until.is_(None), _message.c.lease_until < now),
        *SENDABLE,
    )
    if busy:
        due = due.where(_message.c.endpoint_id.not_in(sorted(busy)))
    due = due.order_by(_message.c.id).limit(limit).with_for_update(skip_locked=True)
    lease = now + timedelta(seconds=lease_seconds)
    with write_connection(engine) as conn:
        rows = [Claimed(*row, lease_until=lease) for row in conn.execute(due)]
        if rows:
            conn.execute(
                sa.update(_message)
                .where(_message.c.id.in_([r.id for r in rows]))
                .values(lease_until=lease)
            )
    return rows


def _held(message: Claimed) -> Any:
    """The message's row, while this claim still holds it."""
    return sa.and_(_message.c.id == message.id, _message.c.lease_until == message.lease_until)


def release(engine: Engine, claimed: list[Claimed]) -> None:
    """Let other dispatchers take these messages at once (a lane that stopped early)."""
    if claimed:
        with write_connection(engine) as conn:
            for message in claimed:
                conn.execute(sa.update(_message).where(_held(message)).values(lease_until=None))


def record(engine: Engine, message: Claimed, result: AttemptResult, now: datetime) -> None:
    """Keep an attempt and move the message on: delivered on any 2xx; otherwise retried
    with backoff for a day, then failed. A 410 disables the endpoint. Nothing is written
    when the claim no longer holds the message (its lease ran out and another took it, or
    its endpoint was removed)."""
    with write_connection(engine) as conn:
        _record(conn, message, result, now)


def _record(conn: Connection, message: Claimed, result: AttemptResult, now: datetime) -> None:
    attempts = _message.c.attempts + 1
    if result.delivered:
        moved = conn.execute(
            sa.update(_message)
            .where(_held(message))
            .values(
                status=MessageStatus.DELIVERED,
                attempts=attempts,
                delivered_at=now,
                lease_until=None,
            )
        )
    else:
        if conn.execute(sa.select(_message.c.id).where(_held(message))).first() is None:
            return
        # The waits start again from 5 s after a message is sent again or resumed.
        since = message.retry_from or message.created_at
        done = conn.execute(
            sa.select(sa.func.count()).where(
                _attempt.c.message_id == message.id, _attempt.c.started_at >= since
            )
        ).scalar_one()
        wait = min(FIRST_RETRY * (2**done), LONGEST_WAIT)
        gave_up = now + wait > (message.retry_from or message.created_at) + RETRY_FOR
        moved = conn.execute(
            sa.update(_message)
            .where(_held(message))
            .values(
                status=MessageStatus.FAILED if gave_up else MessageStatus.PENDING,
                attempts=attempts,
                next_attempt_at=now + wait,
                lease_until=None,
            )
        )
    if not moved.rowcount:
        return  # no longer this claim's
    if result.delivered and message.delivered_at is None:
        delivered_on_commit(conn, "webhook", message.created_at, now)
    conn.execute(
        _attempt.insert().values(
            message_id=message.id,
            started_at=now,
            duration_ms=result.duration_ms,
            status_code=result.status_code,
            body_excerpt=result.body_excerpt,
            error=result.error,
        )
    )
    if result.delivered:
        conn.execute(
            sa.update(_endpoint)
            .where(_endpoint.c.id == message.endpoint_id, _endpoint.c.failing_since.is_not(None))
            .values(failing_since=None)
        )
        return
    _failing(conn, message.endpoint_id, result, now)
    if result.status_code == 410:
        gone = conn.execute(
            sa.update(_endpoint)
            .where(
                _endpoint.c.id == message.endpoint_id,
                _endpoint.c.status != EndpointStatus.DISABLED,
            )
            .values(
                status=EndpointStatus.DISABLED,
                status_reason="the receiver answered 410 Gone",
                updated_at=now,
            )
            .returning(_endpoint.c.url, _endpoint.c.game_id)
        ).first()
        if gone is not None:  # the worker's own decision, recorded as the system's
            studio_id = conn.execute(
                sa.select(_game.c.studio_id).where(_game.c.id == gone.game_id)
            ).scalar()
            audit.record(
                conn,
                "webhook_endpoint.disabled",
                target_type="webhook_endpoint",
                target_id=message.endpoint_id,
                target_name=gone.url,
                scope=("studio", studio_id) if studio_id else None,
                changes={
                    "status": [None, str(EndpointStatus.DISABLED)],
                    "status_reason": [None, "the receiver answered 410 Gone"],
                },
                at=now,
            )


def _failing(conn: Connection, endpoint_id: str, result: AttemptResult, now: datetime) -> None:
    """Note a failed attempt on its endpoint: failing since the first of a row of them; a
    day of nothing but failures pauses an active endpoint and mails the game's designers
    (its messages wait, none is dropped, until a designer enables it again)."""
    conn.execute(
        sa.update(_endpoint)
        .where(_endpoint.c.id == endpoint_id, _endpoint.c.failing_since.is_(None))
        .values(failing_since=now)
    )
    paused = conn.execute(
        sa.update(_endpoint)
        .where(
            _endpoint.c.id == endpoint_id,
            _endpoint.c.status == EndpointStatus.ACTIVE,
            _endpoint.c.failing_since <= now - PAUSE_AFTER,
        )
        .values(
            status=EndpointStatus.PAUSED,
            status_reason="every attempt failed for a day",
            updated_at=now,
        )
        .returning(_endpoint.c.url, _endpoint.c.game_id, _endpoint.c.failing_since)
    ).first()
    if paused is not None:
        _mail_designers(conn, paused, result)


def _mail_designers(conn: Connection, paused: Any, result: AttemptResult) -> None:
    game = conn.execute(
        sa.select(col(Game.name), col(Game.studio_id)).where(col(Game.id) == paused.game_id)
    ).first()
    if game is None or game.studio_id is None:
        return
    designers = (
        conn.execute(
            sa.select(col(User.email)).where(
                col(User.studio_id) == game.studio_id, col(User.role) == Role.DESIGNER
            )
        )
        .scalars()
        .all()
    )
    last = result.error or f"answered {result.status_code}"
    # The mail outbox takes a session: one on this connection, inside its transaction.
    with Session(bind=conn) as session:
        for email in designers:
            _mail_pause(session, email, game.name, paused, last)
        session.flush()


def _mail_pause(session: Session, email: str, game: str, paused: Any, last: str) -> None:
    mail.enqueue(
        session,
        to=email,
        subject=f"Webhooks of {game} are paused",
        body=(
            f"Every webhook to {paused.url} has failed since "
            f"{paused.failing_since:%Y-%m-%d %H:%M} UTC (the last: {last}).\n\n"
            "Questwall has paused this endpoint: new messages wait and none is lost. "
            "Fix your receiver, send a test event, then enable the endpoint again "
            "(`questwall game webhook enable ENDPOINT_ID`).\n"
        ),
    )


def prune(db: Any, now: datetime) -> int:
    """Delete delivered and failed messages (with their attempts) made over `KEPT_FOR` ago;
    how many."""
    removed = db.execute(
        sa.delete(_message).where(
            _message.c.status != MessageStatus.PENDING, _message.c.created_at < now - KEPT_FOR
        )
    )
    return int(removed.rowcount or 0)
