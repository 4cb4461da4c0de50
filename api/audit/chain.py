"""Checking the audit trail's chain, and the retention prune that keeps it checkable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Engine

from api.audit.trail import row_hash
from api.core.db import new_session, write_session
from models.audit import GENESIS, AuditChain, AuditEvent
from models.types import utcnow

_event = AuditEvent.__table__  # type: ignore[attr-defined]
_chain = AuditChain.__table__  # type: ignore[attr-defined]
BATCH = 1000


@dataclass(frozen=True)
class Verified:
    """How many rows were checked, the first that does not match (None: all do), why,
    and the last row's hash (to keep elsewhere: a trail cut short at its end still
    chains, but no longer ends there)."""

    rows: int
    broken_at: int | None
    why: str
    last_hash: str


def verify(engine: Engine) -> Verified:
    """Recompute every row's hash, in order, from where the chain starts."""
    with new_session(engine) as session:
        start = session.execute(
            sa.select(_chain.c.start_previous_hash).where(_chain.c.id == 1)
        ).scalar_one_or_none()
        previous, checked, after = start or GENESIS, 0, 0
        while True:
            rows = (
                session.execute(
                    sa.select(_event).where(_event.c.id > after).order_by(_event.c.id).limit(BATCH)
                )
                .mappings()
                .all()
            )
            for row in rows:
                checked += 1
                if row["previous_hash"] != previous:
                    return Verified(
                        checked, row["id"], "it does not chain to the row before", previous
                    )
                if row_hash(dict(row)) != row["hash"]:
                    return Verified(
                        checked, row["id"], "its content does not match its hash", previous
                    )
                previous = row["hash"]
            if len(rows) < BATCH:
                return Verified(checked, None, "", previous)
            after = rows[-1]["id"]


def prune(engine: Engine, *, keep_days: int, now: datetime | None = None) -> int:
    """Remove the rows older than `keep_days` (all at once, in one transaction) and record
    where the chain now starts; returns how many rows went."""
    cutoff = (now or utcnow()) - timedelta(days=keep_days)
    with write_session(engine) as session:
        last_old = session.execute(
            sa.select(_event.c.id, _event.c.hash)
            .where(_event.c.at < cutoff)
            .order_by(_event.c.id.desc())
            .limit(1)
        ).first()
        if last_old is None:
            return 0
        session.execute(sa.update(_chain).where(_chain.c.id == 1).values(pruning=True))
        deleted = session.execute(sa.delete(_event).where(_event.c.id <= last_old.id))
        gone = deleted.rowcount  # type: ignore[attr-defined]
        session.execute(
            sa.update(_chain)
            .where(_chain.c.id == 1)
            .values(pruning=False, start_id=last_old.id + 1, start_previous_hash=last_old.hash)
        )
        return gone or 0
