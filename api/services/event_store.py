"""Bulk insert of validated events: the hot path of ingestion.

SQLAlchemy's per-row type processing costs more than the insert itself at 100 events
a request, so the row values are prepared here once, in the form each driver takes,
and handed to the driver's executemany through a statement compiled once per dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson
from sqlalchemy.engine import Dialect
from sqlmodel import Session

from models import Event
from models.schemas import EventIn
from models.types import utcnow

_COLUMNS = ("game_id", "user_id", "name", "time", "value", "traits", "group_id", "received_at")


@lru_cache(maxsize=4)
def _compiled(dialect: Dialect) -> tuple[str, tuple[str, ...] | None]:
    table = Event.__table__  # type: ignore[attr-defined]
    compiled = table.insert().compile(dialect=dialect, column_keys=list(_COLUMNS))
    positions = tuple(compiled.positiontup) if compiled.positional else None
    return str(compiled), positions


def _sqlite_time(moment: datetime) -> str:
    # The exact text SQLAlchemy's SQLite DateTime writes (always with microseconds), so
    # comparisons stay consistent. Event times are already UTC.
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None).isoformat(" ", "microseconds")


def _pg_time(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None)


def _converters(dialect: Dialect) -> tuple[Callable[[datetime], Any], Callable[[Any], Any]]:
    if dialect.name == "sqlite":
        return (
            _sqlite_time,
            lambda traits: None if traits is None else orjson.dumps(traits).decode(),
        )
    from psycopg.types.json import Jsonb

    return _pg_time, lambda traits: None if traits is None else Jsonb(traits, dumps=orjson.dumps)


def insert_events(*, session: Session, game_id: str, events: Sequence[EventIn]) -> int:
    """Store validated events in the session's transaction; returns how many."""
    if not events:
        return 0
    connection = session.connection()
    dialect = connection.dialect
    sql, positions = _compiled(dialect)
    as_time, as_traits = _converters(dialect)
    received = as_time(utcnow())
    rows = [
        {
            "game_id": game_id,
            "user_id": e.userId,
            "name": e.event,
            "time": as_time(e.time),
            "value": e.value,
            "traits": as_traits(e.traits),
            "group_id": e.groupId,
            "received_at": received,
        }
        for e in events
    ]
    params: list[Any] = [tuple(r[k] for k in positions) for r in rows] if positions else rows
    connection.exec_driver_sql(sql, params)
    return len(rows)
