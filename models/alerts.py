"""The alert outbox: each notice for ALERT_WEBHOOK_URL, with where its delivery stands, and
every attempt to post it."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.mail import MailStatus
from models.types import BigIntPK, UTCDateTime, utcnow


class AlertMessage(SQLModel, table=True):
    __tablename__ = "alert_message"
    __table_args__ = (sa.Index("ix_alert_message_due", "status", "next_attempt_at"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    event: str = Field(max_length=40)  # "endpoint.paused", "endpoint.resumed"
    body: str = Field(sa_type=sa.Text)  # the JSON posted
    # The states of a mail message: queued, sent, failed (out of attempts).
    status: str = Field(default=MailStatus.QUEUED, max_length=16)
    attempts: int = Field(default=0)
    last_error: str | None = Field(default=None, sa_type=sa.Text)
    next_attempt_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    # A sender that claimed the alert holds it until then; after, another may.
    lease_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    sent_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class AlertAttempt(SQLModel, table=True):
    """One attempt to post an alert: the webhook's answer, or what went wrong."""

    __tablename__ = "alert_attempt"

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    alert_id: int = Field(
        sa_type=sa.BigInteger, foreign_key="alert_message.id", index=True, ondelete="CASCADE"
    )
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    duration_ms: int
    status_code: int | None = Field(default=None)
    # The first KiB of the answer, and what went wrong when there was no answer.
    body_excerpt: str | None = Field(default=None, sa_type=sa.Text)
    error: str | None = Field(default=None, sa_type=sa.Text)
    # Whether a request went out: False when the address was refused before sending.
    sent: bool
