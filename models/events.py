"""Stored game events, and the records that make ingestion safe to retry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, JSONDoc, UTCDateTime, utcnow


class Event(SQLModel, table=True):
    """A stored game event, kept for EVENT_RETENTION_DAYS (docs/operations.md#retention).

    On PostgreSQL the table is partitioned by month on `time` (migration 0008, managed by
    `api/ingest/retention.py`), so its primary key there is (id, time): a partitioned
    table's key must hold the partition key. `id` alone stays unique (one sequence), which
    is all the code relies on; nothing references an event by foreign key.
    """

    __tablename__ = "event"
    __table_args__ = (sa.Index("ix_event_game_user_time", "game_id", "user_id", "time"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    game_id: str = Field(foreign_key="game.id", max_length=36, ondelete="CASCADE")
    user_id: str = Field(max_length=128)
    name: str = Field(max_length=64)
    # When it happened (UTC, millisecond precision) and when it arrived.
    time: datetime = Field(sa_type=UTCDateTime, nullable=False)
    value: float | None = Field(default=None)
    traits: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    group_id: str | None = Field(default=None, max_length=128)
    # The country of the player's address when the game sent it (`playerIp`, which is not
    # kept): the country_mismatch signal compares it with the click's.
    country: str | None = Field(default=None, max_length=2)
    received_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class SignedRequest(SQLModel, table=True):
    """A committed signed request, so a byte-identical resend is answered, not re-applied."""

    __tablename__ = "signed_request"

    client_id: str = Field(primary_key=True, max_length=64)
    signature: str = Field(primary_key=True, max_length=64)
    status_code: int
    response: dict[str, Any] = Field(sa_type=JSONDoc)
    created_at: datetime = Field(
        default_factory=utcnow, sa_type=UTCDateTime, nullable=False, index=True
    )


class IdempotencyRecord(SQLModel, table=True):
    """The first answer to a request with an Idempotency-Key, kept for 24 hours."""

    __tablename__ = "idempotency_record"

    game_id: str = Field(foreign_key="game.id", primary_key=True, max_length=36, ondelete="CASCADE")
    key: str = Field(primary_key=True, max_length=255)
    # SHA-256 of the body, to refuse the same key reused for a different request.
    request_digest: str = Field(max_length=64)
    status_code: int
    response: dict[str, Any] = Field(sa_type=JSONDoc)
    created_at: datetime = Field(
        default_factory=utcnow, sa_type=UTCDateTime, nullable=False, index=True
    )


class SignedRefusal(SQLModel, table=True):
    """A signed request refused as a whole (bad signature, stale timestamp, bad JSON, …),
    kept for the game's live event debugger (docs/game-integration.md#debugging-your-signing).

    A ring: at most `api.ingest.refused_requests.RING` rows per client id, slot = seq % RING,
    each new refusal overwriting its slot, so a flood of refused requests cannot grow the
    table. Only client ids of the game's credentials are kept (none for unknown ids), with
    the headers and at most the first 2 KB of the body as received, never a secret.
    """

    __tablename__ = "signed_refusal"
    __table_args__ = (
        sa.Index("ix_signed_refusal_game_created", "game_id", "created_at"),
        sa.Index("ix_signed_refusal_created", "created_at"),
    )

    client_id: str = Field(primary_key=True, max_length=64)
    slot: int = Field(primary_key=True)
    seq: int  # the client id's count of recorded refusals: the newest has the highest
    game_id: str = Field(foreign_key="game.id", max_length=36, ondelete="CASCADE")
    status: int
    code: str = Field(max_length=40)
    reason: str = Field(max_length=255)
    timestamp: str = Field(max_length=32)  # the x-timestamp header as sent, cut
    # The x-signature header when it is 64 hex digits; never anything else (a secret
    # sent there by mistake is not kept).
    signature: str = Field(max_length=64)
    skew_ms: int | None = Field(default=None, sa_type=sa.BigInteger)  # server minus x-timestamp
    body_size: int = Field(sa_type=sa.BigInteger)
    body_limit: int
    body_head: bytes = Field(sa_type=sa.LargeBinary)  # at most the first 2 KB
    body_sha256: str = Field(max_length=64)  # of the whole body; empty when it was not read
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
