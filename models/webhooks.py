"""Webhooks to a game's own server (docs/game-integration.md#webhooks): the endpoints a
game's designers add, the outbox of messages to them, and every delivery attempt."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, JSONDoc, UTCDateTime, new_uuid, utcnow


class EndpointStatus(StrEnum):
    ACTIVE = "active"
    # No message goes out: turned off by a designer, or by the receiver answering 410.
    DISABLED = "disabled"
    # Every attempt failed for a day: its messages wait until a designer enables it again.
    PAUSED = "paused"


class WebhookEndpoint(SQLModel, table=True):
    __tablename__ = "webhook_endpoint"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    game_id: str = Field(foreign_key="game.id", index=True, max_length=36, ondelete="CASCADE")
    url: str = Field(max_length=2048)
    description: str = Field(default="", max_length=300)
    # The message types it takes (None: every type but those an endpoint must name).
    event_types: list[str] | None = Field(default=None, sa_type=JSONDoc)
    # The signing secret (`whsec_…`), sealed; during a rotation's overlap the one before
    # signs too, until `previous_until`.
    secret_sealed: str = Field(sa_type=sa.Text)
    previous_secret_sealed: str | None = Field(default=None, sa_type=sa.Text)
    previous_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    status: str = Field(default=EndpointStatus.ACTIVE, max_length=16)
    status_reason: str | None = Field(default=None, sa_type=sa.Text)
    # Since when every attempt has failed (None: the last one succeeded).
    failing_since: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class MessageStatus(StrEnum):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"  # given up after a day of attempts


class WebhookMessage(SQLModel, table=True):
    """One message to one endpoint, stored in the transaction that caused it."""

    __tablename__ = "webhook_message"
    __table_args__ = (
        sa.Index("ix_webhook_message_due", "status", "next_attempt_at"),
        # A player's messages to an endpoint go out in the order they were made.
        sa.Index("ix_webhook_message_endpoint_player", "endpoint_id", "player", "id"),
        sa.Index("ix_webhook_message_coalesce", "endpoint_id", "coalesce_key"),
        # An endpoint's delivery log, newest first, and its replays by time.
        sa.Index("ix_webhook_message_endpoint_id", "endpoint_id", "id"),
        sa.Index("ix_webhook_message_endpoint_created", "endpoint_id", "created_at"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    # The `webhook-id` header: the same on every attempt, so a receiver can dedupe.
    message_id: str = Field(unique=True, max_length=40)
    endpoint_id: str = Field(foreign_key="webhook_endpoint.id", max_length=36, ondelete="CASCADE")
    type: str = Field(max_length=40)
    # Whose message it is (the platform user's id): the order is kept per player.
    player: str = Field(default="", max_length=36)
    # The JSON body exactly as signed and sent, and its unix time (`webhook-timestamp`
    # is the attempt's).
    body: str = Field(sa_type=sa.Text)
    # A message a later one of the same key replaces while it is unsent (`mission.progressed`
    # per player and mission); None for the others.
    coalesce_key: str | None = Field(default=None, max_length=80)
    status: str = Field(default=MessageStatus.PENDING, max_length=16)
    attempts: int = Field(default=0)
    next_attempt_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    lease_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    delivered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Retried for a day from then: its making, or when it was sent again or resumed.
    retry_from: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The request whose transaction made the message: its X-Request-ID, and its W3C
    # trace context when traces are on, carried to every attempt's log line and span.
    request_id: str | None = Field(default=None, max_length=64)
    traceparent: str | None = Field(default=None, max_length=64)


class WebhookAttempt(SQLModel, table=True):
    __tablename__ = "webhook_attempt"

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    message_id: int = Field(
        sa_type=sa.BigInteger, foreign_key="webhook_message.id", index=True, ondelete="CASCADE"
    )
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    duration_ms: int
    status_code: int | None = Field(default=None)
    # The first KiB of the answer, and what went wrong when there was no answer.
    body_excerpt: str | None = Field(default=None, sa_type=sa.Text)
    error: str | None = Field(default=None, sa_type=sa.Text)
