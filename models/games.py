"""Games and the credentials they sign requests with."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import JSONDoc, UTCDateTime, new_uuid, utcnow


class Game(SQLModel, table=True):
    __tablename__ = "game"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    name: str = Field(max_length=200)
    # The studio whose designers manage the game; None for games made from the command line.
    studio_id: str | None = Field(default=None, foreign_key="studio.id", index=True, max_length=36)
    # A budget of revenue over all its missions {amount, every, timeZone} (docs/economics.md).
    budget: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class GameCredential(SQLModel, table=True):
    """A client id and secret for one game. A game may hold two live ones (rotation)."""

    __tablename__ = "game_credential"

    id: str = Field(default_factory=new_uuid, primary_key=True, max_length=36)
    game_id: str = Field(foreign_key="game.id", index=True, max_length=36, ondelete="CASCADE")
    # Public: sent in the x-client-id header.
    client_id: str = Field(unique=True, max_length=64)
    # What people call it ("prod-key"); "Key 1", "Key 2", … unless named.
    name: str = Field(default="", max_length=60)
    # The secret, AES-GCM sealed under the master key (see api/core/crypto.py).
    secret_sealed: str = Field(sa_type=sa.Text)
    # Keyed digest of the secret: lets an operator find a credential from a leaked secret.
    secret_digest: str = Field(index=True, max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    revoked_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
