"""The alert outbox: each notice for ALERT_WEBHOOK_URL, with where its delivery stands."""

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
