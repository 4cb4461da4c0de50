"""The live event debugger: a game's latest events, identifier changes, rejected items
and requests refused as a whole, newest first, optionally for one user."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from api.fraud import FlagRow, cheat_flags
from models import Event, GameCredential, GameUser, GameUserIdentifier
from models.events import SignedRefusal, SignedRequest

LIMIT = 50


@dataclass(frozen=True)
class EventRow:
    id: int
    time: datetime
    received: datetime
    user_id: str
    name: str
    value: str
    traits: str


@dataclass(frozen=True)
class IdentifierRow:
    updated: datetime
    user_id: str
    kind: str
    value: str
    platform_user_id: str


@dataclass(frozen=True)
class RejectionRow:
    at: datetime
    status: int
    item: str
    code: str
    message: str


@dataclass(frozen=True)
class RefusedRow:
    """A signed request refused as a whole, and what the server computed for it."""

    at: datetime
    status: int
    code: str
    reason: str
    client_id: str
    signed: str  # clientId + timestamp + the body as received (its first 2 KB), or ""
    skew: str
    body: str
    body_sha256: str
    signature: str


def recent_events(*, session: Session, game_id: str, user_id: str = "") -> list[EventRow]:
    query = sa.select(Event).where(col(Event.game_id) == game_id)
    if user_id:
        query = query.where(col(Event.user_id) == user_id)
    rows = session.execute(query.order_by(col(Event.id).desc()).limit(LIMIT)).scalars()
    return [
        EventRow(
            id=e.id or 0,
            time=e.time,
            received=e.received_at,
            user_id=e.user_id,
            name=e.name,
            value="" if e.value is None else f"{e.value:g}",
            traits=json.dumps(e.traits, ensure_ascii=False) if e.traits else "",
        )
        for e in rows
    ]


def identifier_changes(*, session: Session, game_id: str, user_id: str = "") -> list[IdentifierRow]:
    query = (
        sa.select(GameUserIdentifier, col(GameUser.user_id), col(GameUser.platform_user_id))
        .join(GameUser, col(GameUser.id) == col(GameUserIdentifier.game_user_id))
        .where(col(GameUser.game_id) == game_id)
    )
    if user_id:
        query = query.where(col(GameUser.user_id) == user_id)
    rows = session.execute(query.order_by(col(GameUserIdentifier.updated_at).desc()).limit(LIMIT))
    found = [
        (i.updated_at, IdentifierRow(i.updated_at, uid, i.kind, i.value, platform or ""))
        for i, uid, platform in rows
    ]
    # Links to platform users (platformUserId, or a verified identifier) live on the user.
    links = sa.select(GameUser).where(
        col(GameUser.game_id) == game_id, col(GameUser.platform_user_id).is_not(None)
    )
    if user_id:
        links = links.where(col(GameUser.user_id) == user_id)
    for user in session.execute(
        links.order_by(col(GameUser.updated_at).desc()).limit(LIMIT)
    ).scalars():
        link = user.platform_user_id or ""
        found.append(
            (
                user.updated_at,
                IdentifierRow(user.updated_at, user.user_id, "platformUserId", link, link),
            )
        )
    found.sort(key=lambda pair: pair[0], reverse=True)
    return [row for _, row in found[:LIMIT]]


def rejections(*, session: Session, game_id: str) -> list[RejectionRow]:
    """Items the API refused in partly or wholly rejected requests (207, 422), from the
    answers it keeps for retries; requests refused as a whole are `refused_requests`."""
    clients = sa.select(col(GameCredential.client_id)).where(col(GameCredential.game_id) == game_id)
    requests = session.execute(
        sa.select(
            col(SignedRequest.created_at),
            col(SignedRequest.status_code),
            col(SignedRequest.response),
        )
        .where(
            col(SignedRequest.client_id).in_(clients),
            col(SignedRequest.status_code).in_([207, 422]),
        )
        .order_by(col(SignedRequest.created_at).desc())
        .limit(LIMIT)
    ).all()
    found: list[RejectionRow] = []
    for at, status, response in requests:
        for item in (response or {}).get("rejected", []):
            where = f"{item.get('kind', '?')}s[{item.get('index', '?')}]"
            if item.get("field"):
                where += f".{item['field']}"
            found.append(
                RejectionRow(at, status, where, item.get("code", ""), item.get("message", ""))
            )
            if len(found) >= LIMIT:
                return found
    return found


def refused_requests(*, session: Session, game_id: str) -> list[RefusedRow]:
    """The game's signed requests refused as a whole (bad signature, stale timestamp, bad
    JSON, body too large, …), newest first (api/ingest/refused_requests.py)."""
    rows = session.execute(
        sa.select(SignedRefusal)
        .where(col(SignedRefusal.game_id) == game_id)
        .order_by(col(SignedRefusal.created_at).desc(), col(SignedRefusal.seq).desc())
        .limit(LIMIT)
    ).scalars()
    return [_refused_row(r) for r in rows]


def _refused_row(r: SignedRefusal) -> RefusedRow:
    # Bytes that are not UTF-8 (and NUL) are shown escaped, as \xNN.
    text = r.body_head.decode("utf-8", errors="backslashreplace").replace("\x00", "\\x00")
    cut = "…" if r.body_size > len(r.body_head) else ""
    # A body over the limit is not read (no digest either): nothing was signed.
    signed = f"{r.client_id}{r.timestamp}{text}{cut}" if r.body_sha256 else ""
    skew = "" if r.skew_ms is None else f"{r.skew_ms / 1000:+,.1f} s"
    return RefusedRow(
        at=r.created_at,
        status=r.status,
        code=r.code,
        reason=r.reason,
        client_id=r.client_id,
        signed=signed,
        skew=skew,
        body=f"{r.body_size:,} of {r.body_limit:,} bytes",
        body_sha256=r.body_sha256,
        signature=r.signature,
    )


def set_aside(*, session: Session, game_id: str, user_id: str = "") -> list[FlagRow]:
    """Events a mission's anti-cheat rule set aside (they did not count toward it), with
    the rule and what it said, newest first (docs/fraud.md#anti-cheat-rules)."""
    return cheat_flags(session=session, studio_id=None, game_id=game_id, user_id=user_id)
