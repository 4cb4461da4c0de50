"""Reading the audit trail back: a page of events newest first, paged by id (a keyset, so
a page never shifts as new events arrive), and an export of every matching event as CSV
or JSON Lines, itself recorded as `audit.exported`, whoever makes it from wherever."""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from api.audit.filters import Filters, condition
from api.audit.trail import HASHED, record
from api.core.db import new_session, write_session
from models.audit import AuditEvent

_event = AuditEvent.__table__  # type: ignore[attr-defined]

log = logging.getLogger("questwall.audit")
PAGE_LIMIT = 50
MAX_LIMIT = 200
EXPORT_BATCH = 1000
FORMATS = ("csv", "jsonl")
# Every column, in the table's order: what the CSV's header names and each line holds.
COLUMNS = ("id", *HASHED, "hash")


@dataclass(frozen=True)
class Page:
    """One page of events, newest first; `older` is the cursor of the next (older) page,
    None on the last."""

    rows: list[dict[str, Any]]
    older: int | None


def bounded(limit: int | None) -> int:
    """A page's size: `PAGE_LIMIT` by default, from 1 to `MAX_LIMIT`."""
    return PAGE_LIMIT if limit is None else max(1, min(int(limit), MAX_LIMIT))


def read_page(
    session: Session | sa.Connection,
    wanted: Filters,
    *,
    before: int | None = None,
    limit: int | None = None,
) -> Page:
    """The newest `limit` events matching `wanted` whose id is below `before`."""
    size = bounded(limit)
    query = sa.select(_event).where(condition(wanted))
    if before is not None:
        query = query.where(_event.c.id < before)
    found = session.execute(query.order_by(_event.c.id.desc()).limit(size + 1)).mappings().all()
    rows = [dict(row) for row in found[:size]]
    return Page(rows, rows[-1]["id"] if len(found) > size else None)


def plain(row: dict[str, Any]) -> dict[str, Any]:
    """A row as JSON keeps it: every column, its time in ISO 8601 UTC (`...Z`)."""
    out = {name: row.get(name) for name in COLUMNS}
    at = out["at"]
    if isinstance(at, datetime):
        out["at"] = at.astimezone(UTC).replace(tzinfo=None).isoformat("T", "microseconds") + "Z"
    return out


def _cell(value: Any) -> str:
    """A CSV cell a spreadsheet takes as text: a name a publisher chose ("=...", "+...")
    is never run as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _csv_line(values: list[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow(values)
    return out.getvalue()


def _line(row: dict[str, Any], fmt: str) -> str:
    data = plain(row)
    if fmt == "jsonl":
        return json.dumps(data, ensure_ascii=False, sort_keys=False, default=str) + "\n"
    data["changes"] = json.dumps(data["changes"], ensure_ascii=False, sort_keys=True, default=str)
    return _csv_line([_cell(data[name]) for name in COLUMNS])


@dataclass(frozen=True)
class Export:
    """An export, recorded before its first line: its rows (oldest first, up to the last
    event when it was made), their count, and a file name."""

    format: str
    rows: int
    last_id: int
    lines: Iterator[str]

    @property
    def filename(self) -> str:
        return f"questwall-audit-{self.last_id}.{self.format}"

    @property
    def media_type(self) -> str:
        if self.format == "csv":
            return "text/csv; charset=utf-8"
        return "application/x-ndjson; charset=utf-8"


def export(engine: Engine, wanted: Filters, fmt: str) -> Export:
    """Every event matching `wanted`, as CSV (`changes` as JSON in its cell) or JSON
    Lines, oldest first. The export is recorded first, as `audit.exported` by the current
    actor with the filters and the row count, in its own transaction: the rows are those
    up to the last event before it, so the count is what the file holds."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    where = condition(wanted)
    with write_session(engine) as session:
        last = session.execute(sa.select(sa.func.max(_event.c.id))).scalar_one() or 0
        count = session.execute(
            sa.select(sa.func.count()).select_from(_event).where(where, _event.c.id <= last)
        ).scalar_one()
        record(
            session,
            "audit.exported",
            target_type="audit_trail",
            target_id=last,
            target_name=f"{fmt} export",
            changes={
                "filters": [None, wanted.described()],
                "format": [None, fmt],
                "rows": [None, count],
            },
        )
    log.info("audit trail exported: %s, %d event(s) up to id %d", fmt, count, last)
    return Export(fmt, count, last, _lines(engine, where, last, fmt))


def _lines(engine: Engine, where: Any, last: int, fmt: str) -> Iterator[str]:
    if fmt == "csv":
        yield _csv_line(list(COLUMNS))
    after = 0
    while True:
        with new_session(engine) as session:
            rows = (
                session.execute(
                    sa.select(_event)
                    .where(where, _event.c.id > after, _event.c.id <= last)
                    .order_by(_event.c.id)
                    .limit(EXPORT_BATCH)
                )
                .mappings()
                .all()
            )
        for row in rows:
            yield _line(dict(row), fmt)
        if len(rows) < EXPORT_BATCH:
            return
        after = rows[-1]["id"]
