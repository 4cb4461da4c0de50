"""The mail outbox: every message the service sends, with where its delivery stands."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, UTCDateTime, utcnow


class MailStatus(StrEnum):
    QUEUED = "queued"  # waiting for its (next) attempt, or for an SMTP server to be set
    SENT = "sent"
    FAILED = "failed"  # refused by the server, out of attempts, or expired


class MailMessage(SQLModel, table=True):
    __tablename__ = "mail_message"
    __table_args__ = (sa.Index("ix_mail_message_due", "status", "next_attempt_at"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    to_address: str = Field(max_length=254)
    subject: str = Field(max_length=200)
    body: str = Field(sa_type=sa.Text)
    # Holds a password reset link: never shown to staff while mail goes out through SMTP,
    # and blanked once sent (api/mail/outbox.py).
    sensitive: bool = Field(default=False)
    status: str = Field(default=MailStatus.QUEUED, max_length=16)
    attempts: int = Field(default=0)
    last_error: str | None = Field(default=None, sa_type=sa.Text)
    next_attempt_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    # A sender that claimed the message holds it until then; after, another may.
    lease_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # Not sent by then (a reset link's lifetime): given up rather than sent stale.
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    sent_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
