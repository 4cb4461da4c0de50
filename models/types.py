"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import SQLModel

# Deterministic constraint names, so migrations can name what they alter.
SQLModel.metadata.naming_convention = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Auto-incrementing 64-bit key; SQLite only auto-increments an INTEGER PRIMARY KEY.
BigIntPK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

# JSON documents (event traits, stored answers); JSONB on PostgreSQL.
JSONDoc = sa.JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Stores naive UTC, hands back timezone-aware UTC datetimes."""

    impl = sa.DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use UTC-aware values")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC)


# The one clock of the service: every "now" reads `utcnow`. Tests move it forward with
# `move_clock` (a day, a DST change) instead of sleeping; nothing else sets it.
_clock_offset = timedelta(0)


def utcnow() -> datetime:
    return datetime.now(UTC) + _clock_offset


def move_clock(offset: timedelta) -> None:
    """Make `utcnow` read `offset` past the real time (timedelta(0) puts it back)."""
    global _clock_offset
    _clock_offset = offset


def new_uuid() -> str:
    return str(uuid.uuid4())
