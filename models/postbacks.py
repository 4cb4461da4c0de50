"""The postback outbox: one row per attributed conversion, and every delivery attempt."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, UTCDateTime, utcnow


class PostbackStatus(StrEnum):
    """Where a postback stands in the outbox; stored as the plain string value."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class PostbackKind(StrEnum):
    """What a postback tells the publisher: a conversion ({status} approved) or its
    reversal ({status} reversed); for an offerwall that asked to hear of reviews, a held
    conversion ({status} pending) and a rejected one ({status} rejected). A conversion
    has at most one of each, sent in the order they were queued."""

    CONVERSION = "conversion"
    REVERSAL = "reversal"
    HELD = "held"
    REJECTION = "rejection"


class Postback(SQLModel, table=True):
    __tablename__ = "postback"
    __table_args__ = (
        sa.Index("ix_postback_due", "status", "next_attempt_at"),
        # A claim asks, for each due postback, whether an earlier one of its conversion
        # is unsent: without this index that question scanned every pending postback.
        sa.Index("ix_postback_conversion_status", "conversion_id", "status"),
        sa.UniqueConstraint("conversion_id", "kind", name="uq_postback_conversion_kind"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    conversion_id: int = Field(sa_type=sa.BigInteger, foreign_key="conversion.id")
    kind: str = Field(default=PostbackKind.CONVERSION, max_length=16)
    offerwall_id: str = Field(foreign_key="offerwall.id", index=True, max_length=36)
    # The URL as rendered at the first attempt (macros and hash_key filled in) and sent
    # unchanged on every retry; None until then.
    url: str | None = Field(default=None, sa_type=sa.Text)
    status: str = Field(default=PostbackStatus.PENDING, max_length=16)
    attempts: int = Field(default=0)
    next_attempt_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    # A dispatcher that claimed the postback holds it until then; after, another may.
    lease_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    delivered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The request whose transaction made the message: its X-Request-ID, and its W3C
    # trace context when traces are on, carried to every attempt's log line and span.
    request_id: str | None = Field(default=None, max_length=64)
    traceparent: str | None = Field(default=None, max_length=64)


class PostbackAttempt(SQLModel, table=True):
    __tablename__ = "postback_attempt"

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    postback_id: int = Field(sa_type=sa.BigInteger, foreign_key="postback.id", index=True)
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    duration_ms: int
    status_code: int | None = Field(default=None)
    # The first KiB of the answer, and what went wrong when there was no answer.
    body_excerpt: str | None = Field(default=None, sa_type=sa.Text)
    error: str | None = Field(default=None, sa_type=sa.Text)
    # Whether a request went out: False when the target was refused before sending
    # (scheme, non-public address) or the postback had no URL. Not inferred from timing.
    sent: bool
