"""Portal accounts: studios, users with a role, browser sessions, password reset links,
sign-in throttling."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import UTCDateTime, new_uuid, utcnow


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
    # Set by staff: sign-in is refused and every session has ended.
    disabled_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


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
    # Where it signed in from: the client's IP, its User-Agent, and the IP's country.
    ip: str | None = Field(default=None, max_length=45)
    user_agent: str | None = Field(default=None, max_length=512)
    country: str | None = Field(default=None, max_length=2)
    # When the password was last entered in this session (at sign-in, and again before a
    # sensitive action): within `api.accounts.reauth.WINDOW` it is not asked again.
    password_confirmed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)


class PasswordReset(SQLModel, table=True):
    """A reset link sent by mail: single use, short-lived; we keep only its token's hash."""

    __tablename__ = "password_reset"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    token_digest: str = Field(unique=True, max_length=64)
    user_id: str = Field(
        foreign_key="portal_user.id", index=True, max_length=36, ondelete="CASCADE"
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class SignInThrottle(SQLModel, table=True):
    """Failed sign-ins for one address (by keyed digest) in the current window.

    One row per address, so that claiming an attempt is one conditional upsert: atomic
    on SQLite and PostgreSQL alike (api/accounts/throttle.py)."""

    __tablename__ = "sign_in_throttle"

    email_digest: str = Field(primary_key=True, max_length=64)
    failures: int = Field(default=0, nullable=False)
    window_start: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class SignInOrigin(SQLModel, table=True):
    """An IP address that signed in to an address successfully (both as one keyed digest).

    Sign-in from such an origin is not paused by the address's failure counter, so
    nobody locks an owner out by knowing their address alone."""

    __tablename__ = "sign_in_origin"

    email_digest: str = Field(primary_key=True, max_length=64)
    origin_digest: str = Field(primary_key=True, max_length=64)
    last_success_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class AccountTotp(SQLModel, table=True):
    """An account's authenticator app (two-factor sign-in, RFC 6238), once confirmed by a
    first valid code. The secret is sealed (api/core/crypto.py `seal_totp_secret`, bound to
    the account's id); `last_step` is the time step of the last code accepted, so a code is
    accepted once (a replay within its window is refused)."""

    __tablename__ = "account_totp"

    user_id: str = Field(
        foreign_key="portal_user.id", primary_key=True, max_length=36, ondelete="CASCADE"
    )
    secret_sealed: str = Field(sa_type=sa.Text)
    enrolled_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    last_step: int | None = Field(default=None, sa_type=sa.BigInteger)


class RecoveryCode(SQLModel, table=True):
    """A recovery code of an account with two-factor sign-in: Argon2-hashed, used once
    (`used_at`) instead of a code from the app."""

    __tablename__ = "account_recovery_code"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    user_id: str = Field(
        foreign_key="portal_user.id", index=True, max_length=36, ondelete="CASCADE"
    )
    code_hash: str = Field(sa_type=sa.Text)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    used_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
