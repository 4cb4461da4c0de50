"""Support tickets: a player's "Missing reward?" report about one offer, and the answer of
the publisher (or staff) to it."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, JSONDoc, UTCDateTime, utcnow


class TicketStatus(StrEnum):
    """open: waiting for an answer. answered: the player can read the answer; it still
    counts as the player's ticket on that offer. closed: settled (with or without an
    answer); the player may report the offer again."""

    OPEN = "open"
    ANSWERED = "answered"
    CLOSED = "closed"


class SupportTicket(SQLModel, table=True):
    __tablename__ = "support_ticket"
    __table_args__ = (
        # The publisher's list: their offerwall's tickets by status, newest first.
        sa.Index("ix_support_ticket_offerwall_status", "offerwall_id", "status", "created_at"),
        # The player's list on the wall, and the limits checked when they open one.
        sa.Index("ix_support_ticket_player", "platform_user_id", "created_at"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    # What the player quotes ("K7MP-2QXD"): short, random, unique.
    reference: str = Field(unique=True, max_length=16)
    offerwall_id: str = Field(foreign_key="offerwall.id", max_length=36)
    platform_user_id: str = Field(foreign_key="platform_user.id", max_length=36)
    # The publisher's id of the player, as their links carry it.
    uid: str = Field(max_length=255)
    # The offer the player picked: a standalone mission or a quest. The title is kept, so
    # the ticket still reads after the offer is renamed or deleted.
    mission_id: str | None = Field(
        default=None, foreign_key="mission.id", max_length=36, ondelete="SET NULL"
    )
    quest_id: str | None = Field(
        default=None, foreign_key="quest.id", max_length=36, ondelete="SET NULL"
    )
    offer_title: str = Field(max_length=200)
    message: str = Field(sa_type=sa.Text)
    # What Questwall knew of the player and the offer when the ticket was opened: clicks,
    # progress per mission, events seen, conversions (api/tickets/tickets.py).
    context: dict[str, Any] = Field(default_factory=dict, sa_type=JSONDoc)
    status: str = Field(default=TicketStatus.OPEN, max_length=16)
    answer: str | None = Field(default=None, sa_type=sa.Text)
    # The e-mail address of the account that answered last.
    answered_by: str | None = Field(default=None, max_length=320)
    answered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    closed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
