"""Portal accounts: studios, users with a role, browser sessions, failed sign-ins."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, UTCDateTime, new_uuid, utcnow


class Role(StrEnum):
    STAFF = "staff"  # approves publishers, manages everything
    DESIGNER = "designer"  # one studio's games, missions and quests
    PUBLISHER = "publisher"  # their offerwall only


class Studio(SQLModel, table=True):
    __tablename__ = "studio"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    name: str = Field(unique=True, max_length=200)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class User(SQLModel, table=True):
    __tablename__ = "portal_user"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    # Stored lower-cased: one account per address however it is typed.
    email: str = Field(unique=True, max_length=254)
    name: str = Field(default="", max_length=200)
    # Argon2id (api/core/crypto.py); never leaves the server.
    password_hash: str = Field(sa_type=sa.Text)
    role: str = Field(max_length=16)
    studio_id: str | None = Field(default=None, foreign_key="studio.id", index=True, max_length=36)
    offerwall_id: str | None = Field(
        default=None, foreign_key="offerwall.id", unique=True, max_length=36
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    last_login_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class PortalSession(SQLModel, table=True):
    """A signed-in browser. The browser keeps the token; we keep its keyed digest."""

    __tablename__ = "portal_session"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    token_digest: str = Field(unique=True, max_length=64)
    user_id: str = Field(
        foreign_key="portal_user.id", index=True, max_length=36, ondelete="CASCADE"
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    last_seen_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class LoginFailure(SQLModel, table=True):
    """One failed sign-in for an address (by keyed digest), for throttling."""

    __tablename__ = "login_failure"

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    email_digest: str = Field(index=True, max_length=64)
    at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
