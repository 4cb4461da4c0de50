"""Signed requests refused as a whole, kept for the game's live event debugger
(docs/game-integration.md#debugging-your-signing).

An integrator whose signing is wrong gets one answer, `401 invalid_signature`, which by
design tells nothing. The debugger shows the designers of the game (and staff) what the
server saw instead: the reason, the string it signed (clientId + timestamp + the body as
received), the timestamp's skew, the body's size against the limit.

Bounded, since anyone may send a refused request:

- only client ids of a game's credentials are kept; a refusal with an unknown client id
  has no game, so nobody sees it in the portal: it is only counted, in the log, once a
  minute at most;
- a ring of `RING` rows per client id (`slot = seq % RING`, one upsert a refusal), so a
  flood of refusals overwrites the oldest and never grows the table; rows older than
  `RETENTION` are removed by `questwall prune`;
- at most `PER_CLIENT` recordings at once per client id, and `OVERALL` for every client
  id together, refilled at their rates, in each process (`RefusalRecorder`): past them a
  refusal is answered as before and only counted, so refused requests cannot become a
  stream of database writes.

Never kept: the client secret (the server does not log it nor the HMAC it expected,
which would let anyone who reads the page sign what they like), an `x-signature` that is
not 64 hex digits (a secret sent there by mistake), more than `BODY_HEAD` bytes of body.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session

from api.core.db import read_session, write_session
from api.core.errors import ApiError
from api.core.ratelimit import TokenBuckets
from api.core.sql import dialect_insert
from api.ingest.signing import SIGNATURE, TIMESTAMP, SignedMessage
from models.tables import game_credential as _credentials
from models.tables import signed_refusal as _refusals
from models.types import utcnow

RING = 50  # refusals kept per client id
BODY_HEAD = 2048  # bytes of the body kept
RETENTION = timedelta(hours=24)
PER_CLIENT = (1.0, 50)  # recordings a second per client id, and at once
OVERALL = (20.0, 200)  # the same for every client id together, per process
LOG_INTERVAL_SECONDS = 60.0
# Over the rate the client is told when to retry; recording each one would be the write
# the rate limit exists to avoid.
NOT_RECORDED = frozenset({"rate_limited"})

log = logging.getLogger("questwall.refusals")


@dataclass(frozen=True)
class Refusal:
    """A request the API refused as a whole: the error it answered and what it received.
    A body over the limit is not read (`body_read` False): its size is the one its
    Content-Length declared, if any."""

    message: SignedMessage
    error: ApiError
    body_limit: int
    body_read: bool = True
    declared_size: int | None = None


class RefusalRecorder:
    """Records refusals in the ring, within this process's recording rates, and counts in
    the log what it did not record. One per API app (`create_api`)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        per_client: tuple[float, int] = PER_CLIENT,
        overall: tuple[float, int] = OVERALL,
    ):
        self._per_client = TokenBuckets(*per_client, clock)
        self._overall = TokenBuckets(*overall, clock)
        self._clock = clock
        self._lock = threading.Lock()
        self._unknown = 0
        self._over_rate = 0
        self._counted_since = clock()

    def record(self, engine: Engine, refusal: Refusal) -> str | None:
        """Record one refusal; the game's id when it was recorded, else None."""
        if refusal.error.code in NOT_RECORDED:
            return None
        client_id = refusal.message.client_id or ""
        if not client_id or len(client_id) > 64 or "\x00" in client_id:
            self._count(unknown=1)
            return None
        if self._overall.take("*") is not None or self._per_client.take(client_id) is not None:
            self._count(over_rate=1)
            return None
        with read_session(engine) as session:
            credential = session.execute(
                sa.select(_credentials.c.game_id, _credentials.c.revoked_at).where(
                    _credentials.c.client_id == client_id
                )
            ).first()
        if credential is None:
            self._count(unknown=1)
            return None
        row = describe(refusal, revoked=credential.revoked_at is not None, now=utcnow())
        with write_session(engine) as session:
            _upsert(session, {**row, "client_id": client_id, "game_id": credential.game_id})
        self._count()
        return str(credential.game_id)

    def _count(self, *, unknown: int = 0, over_rate: int = 0) -> None:
        with self._lock:
            self._unknown += unknown
            self._over_rate += over_rate
            now = self._clock()
            if now - self._counted_since < LOG_INTERVAL_SECONDS:
                return
            unknown, over_rate = self._unknown, self._over_rate
            self._unknown = self._over_rate = 0
            self._counted_since = now
        if unknown or over_rate:
            log.warning(
                "signed requests refused and not recorded: %d with an unknown client id, "
                "%d over the recording rate",
                unknown,
                over_rate,
            )


def describe(refusal: Refusal, *, revoked: bool, now: datetime) -> dict[str, object]:
    """The stored form of a refusal: the reason in words and what the server computed."""
    message, error = refusal.message, refusal.error
    timestamp = message.timestamp or ""
    signature = message.signature or ""
    body = message.body
    server_ms = int(now.timestamp() * 1000)
    for detail in error.details:  # timestamp_out_of_window: the very time it compared
        server_ms = int(detail.get("serverTime", server_ms))
    skew_ms = server_ms - int(timestamp) if TIMESTAMP.fullmatch(timestamp) else None
    read = refusal.body_read
    return {
        "status": error.status,
        "code": error.code,
        "reason": _reason(refusal, revoked=revoked, skew_ms=skew_ms)[:255],
        "timestamp": timestamp[:32],
        "signature": signature.lower() if SIGNATURE.fullmatch(signature) else "",
        "skew_ms": skew_ms,
        "body_size": len(body) if read else (refusal.declared_size or refusal.body_limit + 1),
        "body_limit": refusal.body_limit,
        "body_head": body[:BODY_HEAD],
        "body_sha256": hashlib.sha256(body).hexdigest() if read else "",
        "created_at": now,
    }


def _reason(refusal: Refusal, *, revoked: bool, skew_ms: int | None) -> str:
    message, error = refusal.message, refusal.error
    if error.code == "payload_too_large":
        size = refusal.declared_size
        said = f"{size:,} bytes (its Content-Length)" if size else "larger"
        return f"The body is {said}, over the limit of {refusal.body_limit:,} bytes."
    if error.code == "timestamp_out_of_window" and skew_ms is not None:
        side = "behind" if skew_ms > 0 else "ahead of"
        return (
            f"x-timestamp is {abs(skew_ms) / 1000:,.1f} s {side} the server's clock; "
            f"{error.message}"
        )
    if error.code != "invalid_signature":
        paths = [f"{d['path']}: {d.get('message', '')}" for d in error.details if "path" in d]
        return f"{error.message} ({'; '.join(paths)})" if paths else error.message
    if revoked:
        return "This client id was revoked: sign with a live credential of the game."
    if not message.timestamp or not TIMESTAMP.fullmatch(message.timestamp):
        return "x-timestamp is missing or not Unix time in milliseconds (digits only)."
    if not message.signature or not SIGNATURE.fullmatch(message.signature):
        return "x-signature is missing or not 64 hex digits (lowercase hex of HMAC-SHA256)."
    return (
        "The signature does not match HMAC-SHA256 of the string signed below "
        "with this client id's secret."
    )


def _upsert(session: Session, row: dict[str, object]) -> None:
    # The next seq of this client id, and its slot in the ring: one statement, so two
    # refusals at once at worst share a slot (one overwrites the other), never add a row.
    seq = (
        sa.select(sa.func.coalesce(sa.func.max(_refusals.c.seq), 0) + 1)
        .where(_refusals.c.client_id == row["client_id"])
        .scalar_subquery()
    )
    insert = dialect_insert(session.get_bind().dialect.name, _refusals).values(
        **row, seq=seq, slot=seq % RING
    )
    columns = [c.name for c in _refusals.c if c.name not in ("client_id", "slot")]
    session.execute(
        insert.on_conflict_do_update(
            index_elements=["client_id", "slot"],
            set_={name: insert.excluded[name] for name in columns},
        )
    )


def prune(session: Session, now: datetime) -> int:
    """Remove refusals older than `RETENTION`; returns how many."""
    result = session.execute(sa.delete(_refusals).where(_refusals.c.created_at < now - RETENTION))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
