"""When `questwall prune` last ran to its end, and what it removed: one `prune_run` row per
run, which the staff's System page reads. Runs over `KEPT_FOR` old are removed by the
next run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlmodel import Session

from models import PruneRun

KEPT_FOR = timedelta(days=90)

_table = PruneRun.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PruneRecord:
    """One finished prune."""

    started_at: datetime
    finished_at: datetime
    records: int  # expired records: retries, sessions, reset links, sent mail, …
    events: int
    refused: int  # refused clicks and events set aside by anti-cheat rules

    @property
    def removed(self) -> int:
        return self.records + self.events + self.refused


def record_prune(session: Session, record: PruneRecord) -> None:
    """Keep `record`, and forget the runs older than `KEPT_FOR`."""
    session.execute(sa.delete(_table).where(_table.c.finished_at < record.finished_at - KEPT_FOR))
    session.add(
        PruneRun(
            started_at=record.started_at,
            finished_at=record.finished_at,
            records=record.records,
            events=record.events,
            refused=record.refused,
        )
    )


def last_prune(conn: Connection) -> PruneRecord | None:
    """The latest prune that ran to its end (None: none did)."""
    row = (
        conn.execute(sa.select(_table).order_by(_table.c.finished_at.desc()).limit(1))
        .mappings()
        .first()
    )
    if row is None:
        return None
    return PruneRecord(
        row["started_at"], row["finished_at"], row["records"], row["events"], row["refused"]
    )
