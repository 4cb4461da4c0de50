"""Platform users, game users and their identifiers."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, UTCDateTime, new_uuid, utcnow


class PlatformUser(SQLModel, table=True):
    """Questwall's own account for a person (a UUID). One per (offerwall, uid); a click
    that carries only a clickid gets a platform user of its own."""

    __tablename__ = "platform_user"
    __table_args__ = (
        sa.UniqueConstraint("offerwall_id", "uid", name="uq_platform_user_offerwall_uid"),
    )

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    offerwall_id: str | None = Field(default=None, foreign_key="offerwall.id", max_length=36)
    uid: str | None = Field(default=None, max_length=255)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class PlatformUserIdentifier(SQLModel, table=True):
    """An identifier (e-mail, wallet, …) verified as belonging to a platform user."""

    __tablename__ = "platform_user_identifier"
    __table_args__ = (sa.Index("ix_platform_user_identifier_lookup", "kind", "value_normalized"),)

    platform_user_id: str = Field(
        foreign_key="platform_user.id", primary_key=True, max_length=36, ondelete="CASCADE"
    )
    kind: str = Field(primary_key=True, max_length=32)
    value_normalized: str = Field(primary_key=True, max_length=320)
    verified_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class GameUser(SQLModel, table=True):
    """One game's own user id, optionally linked to a platform user."""

    __tablename__ = "game_user"
    __table_args__ = (sa.UniqueConstraint("game_id", "user_id", name="uq_game_user_game_user_id"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    game_id: str = Field(foreign_key="game.id", max_length=36, ondelete="CASCADE")
    user_id: str = Field(max_length=128)
    platform_user_id: str | None = Field(
        default=None, foreign_key="platform_user.id", index=True, max_length=36
    )
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class GameUserIdentifier(SQLModel, table=True):
    """One identifier of a game user: kind (email, discordId, …) and value."""

    __tablename__ = "game_user_identifier"
    __table_args__ = (sa.Index("ix_game_user_identifier_lookup", "kind", "value_normalized"),)

    game_user_id: int = Field(
        sa_type=sa.BigInteger, foreign_key="game_user.id", primary_key=True, ondelete="CASCADE"
    )
    kind: str = Field(primary_key=True, max_length=32)
    value: str = Field(max_length=320)
    # Canonical form used for matching (lower-cased wallet, e-mail domain lower-cased).
    value_normalized: str = Field(max_length=320)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
