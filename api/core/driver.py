"""Statements run straight on the database driver, for the hottest paths.

SQLAlchemy compiles each statement once per dialect; `execute` then hands values to the
driver's cursor as they are, skipping SQLAlchemy's per-call and per-value processing
(which costs more than the statement itself on a fast path). Callers convert values
with `to_db_time` and read results with `from_db_time` and `from_db_json`, the only
types where SQLite and PostgreSQL drivers differ for us.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement


class DriverStatement:
    """A SQLAlchemy statement, compiled once per dialect, executed on the raw cursor.

    `statement` is the statement, or a function of the dialect's name that builds it
    (for dialect-specific constructs such as INSERT … ON CONFLICT)."""

    def __init__(
        self,
        statement: ClauseElement | Callable[[str], ClauseElement],
        column_keys: Sequence[str] | None = None,
    ):
        self._statement = statement
        self._column_keys = list(column_keys) if column_keys else None
        # Per dialect: the SQL, the order of positional parameters (None: named), and the
        # values of literals the statement binds itself (e.g. status == 'started').
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None, dict[str, Any]]] = {}

    def _for(self, dialect: Dialect) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
        found = self._compiled.get(dialect.name)
        if found is None:
            statement = self._statement
            if not isinstance(statement, ClauseElement):
                statement = statement(dialect.name)
            compiled: Any = statement.compile(dialect=dialect, column_keys=self._column_keys)
            order = (
                tuple(compiled.positiontup)
                if compiled.positional and compiled.positiontup
                else None
            )
            literals = {k: v for k, v in compiled.params.items() if v is not None}
            found = self._compiled[dialect.name] = (str(compiled), order, literals)
        return found

    def execute(self, conn: Connection, params: Mapping[str, Any]) -> Any:
        """Run with one set of parameters; returns the driver's cursor (rows are tuples)."""
        sql, order, literals = self._for(conn.dialect)
        if literals:
            params = {**literals, **params}
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(sql, tuple(params[name] for name in order) if order else params)
        return cursor

    def executemany(self, conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        sql, order, literals = self._for(conn.dialect)
        if literals:
            rows = [{**literals, **r} for r in rows]
        cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        cursor.executemany(sql, [tuple(r[name] for name in order) for r in rows] if order else rows)


def to_db_time(dialect: Dialect, moment: datetime | None) -> Any:
    """An aware datetime as the column stores it: naive UTC (SQLite: SQLAlchemy's text)."""
    if moment is None:
        return None
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    naive = moment.replace(tzinfo=None)
    return naive.isoformat(" ", "microseconds") if dialect.name == "sqlite" else naive


def from_db_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC)


def to_db_json(dialect: Dialect, value: Any) -> Any:
    if value is None:
        return None
    if dialect.name == "sqlite":
        return orjson.dumps(value).decode()
    from psycopg.types.json import Jsonb

    return Jsonb(value, dumps=orjson.dumps)


def from_db_json(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, str | bytes) else value
