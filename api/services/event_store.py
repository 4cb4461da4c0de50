"""Bulk insert of validated events: the hot path of ingestion.

SQLAlchemy's per-row type processing costs more than the insert itself at 100 events
a request, so rows go straight to the driver (api/core/driver.py). On PostgreSQL a
batch is one statement, `INSERT … SELECT FROM unnest(…)` over one typed array per
column, so it costs one round trip whatever its size (an executemany is one statement
per row, even pipelined). SQLite is in-process, so its executemany has no round trip
to save and keeps it.

The insert names its columns and nothing else: it assumes nothing about the table's
key, which the database fills in (whatever columns that key spans).
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
from sqlalchemy import Connection
from sqlmodel import Session

from api.core.driver import DriverStatement, to_db_json, to_db_time
from models import tables
from models.schemas import EventIn
from models.types import utcnow

_COLUMNS = ("game_id", "user_id", "name", "time", "value", "traits", "group_id", "received_at")
_INSERT = DriverStatement(tables.event.insert(), column_keys=_COLUMNS)

# One array a column; the game and arrival time are the same for every row. `traits`
# travels as JSON text and is cast per element, so NULL stays SQL NULL.
_UNNEST_INSERT = """
INSERT INTO event (game_id, user_id, name, time, value, traits, group_id, received_at)
SELECT %(game_id)s, u.user_id, u.name, u.time, u.value, u.traits::jsonb, u.group_id,
       %(received_at)s
FROM unnest(%(user_ids)s::text[], %(names)s::text[], %(times)s::timestamp[],
            %(values)s::float8[], %(traits)s::text[], %(group_ids)s::text[])
     AS u(user_id, name, time, value, traits, group_id)
"""


def insert_events(*, session: Session, game_id: str, events: Sequence[EventIn]) -> int:
    """Store validated events in the session's transaction; returns how many."""
    if not events:
        return 0
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        _insert_unnest(connection, game_id, events)
    else:
        _insert_many(connection, game_id, events)
    return len(events)


def _insert_unnest(connection: Connection, game_id: str, events: Sequence[EventIn]) -> None:
    dialect = connection.dialect
    params = {
        "game_id": game_id,
        "received_at": to_db_time(dialect, utcnow()),
        "user_ids": [e.userId for e in events],
        "names": [e.event for e in events],
        "times": [to_db_time(dialect, e.time) for e in events],
        "values": [e.value for e in events],
        "traits": [None if e.traits is None else orjson.dumps(e.traits).decode() for e in events],
        "group_ids": [e.groupId for e in events],
    }
    # Through SQLAlchemy's plain-SQL door: no per-value processing, but its statement
    # events still see it (a test counts the statements of a batch).
    connection.exec_driver_sql(_UNNEST_INSERT, params)


def _insert_many(connection: Connection, game_id: str, events: Sequence[EventIn]) -> None:
    dialect = connection.dialect
    received = to_db_time(dialect, utcnow())
    rows = [
        {
            "game_id": game_id,
            "user_id": e.userId,
            "name": e.event,
            "time": to_db_time(dialect, e.time),
            "value": e.value,
            "traits": to_db_json(dialect, e.traits),
            "group_id": e.groupId,
            "received_at": received,
        }
        for e in events
    ]
    _INSERT.executemany(connection, rows)
