"""Which master keys the database's secrets are sealed under (api/core/keycheck.py)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import UTCDateTime, utcnow


class MasterKeyCheck(SQLModel, table=True):
    """One row per master key that may have sealed something in this database: a known
    value sealed under that key. A process whose configured keys cannot open every row
    would fail on the secrets too, so it refuses to start."""

    __tablename__ = "master_key_check"

    key_id: str = Field(primary_key=True, max_length=16)
    check_sealed: str = Field(sa_type=sa.Text)
    recorded_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
