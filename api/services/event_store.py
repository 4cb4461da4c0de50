"""Bulk insert of validated events: the hot path of ingestion.

SQLAlchemy's per-row type processing costs more than the insert itself at 100 events
a request, so rows go to the driver's executemany (api/core/driver.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlmodel import Session

from api.core.driver import DriverStatement, to_db_json, to_db_time
from models import tables
from models.schemas import EventIn
from models.types import utcnow

_COLUMNS = ("game_id", "user_id", "name", "time", "value", "traits", "group_id", "received_at")
_INSERT = DriverStatement(tables.event.insert(), column_keys=_COLUMNS)


def insert_events(*, session: Session, game_id: str, events: Sequence[EventIn]) -> int:
    """Store validated events in the session's transaction; returns how many."""
    if not events:
        return 0
    connection = session.connection()
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
    return len(rows)
