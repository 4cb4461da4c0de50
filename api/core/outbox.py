"""What the mail and alert outboxes share: a sender that runs in a thread of its own,
woken at once when a transaction of this process that queued work for it commits, and
looking again every `poll` seconds for retries and for work queued by other processes."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy import Engine, event
from sqlmodel import Session

from api.core.db import write_session
from models import MailStatus

log = logging.getLogger("questwall.outbox")

_PREFIX = "questwall.outbox."
_senders: dict[str, set[OutboxSender]] = {}
_lock = threading.Lock()


def queued(session: Session, kind: str) -> None:
    """Mark the session's transaction as having queued work for the senders of `kind`."""
    session.info[_PREFIX + kind] = True


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    for kind in [
        key.removeprefix(_PREFIX) for key in list(session.info) if key.startswith(_PREFIX)
    ]:
        session.info.pop(_PREFIX + kind)
        with _lock:
            senders = list(_senders.get(kind, ()))
        for sender in senders:
            sender.wake()


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    for key in [key for key in list(session.info) if key.startswith(_PREFIX)]:
        session.info.pop(key)


class OutboxSender:
    """Runs `run_once` until stopped; subclasses say their `kind` and send in `run_once`."""

    kind: ClassVar[str]

    def __init__(self, *, poll: float = 15.0):
        self.poll = poll
        self._wake = threading.Event()
        self._stop = threading.Event()

    def run_once(self) -> int:
        """Claim and try every due item once; returns how many were tried."""
        raise NotImplementedError

    def run(self) -> None:
        """Send until stopped; registered so that commits in this process wake it."""
        with _lock:
            _senders.setdefault(self.kind, set()).add(self)
        try:
            while not self._stop.is_set():
                try:
                    while self.run_once() and not self._stop.is_set():
                        pass
                except Exception:
                    log.exception("sending the queued %s failed; trying again later", self.kind)
                self._wake.wait(self.poll)
                self._wake.clear()
        finally:
            with _lock:
                _senders.get(self.kind, set()).discard(self)

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()


def claim_due(
    engine: Engine,
    table: sa.Table,
    columns: Sequence[str],
    *,
    now: datetime,
    lease: timedelta,
    limit: int,
) -> Sequence[Any]:
    """Take the queued rows of `table` due at `now` (their `columns`, oldest due first) for
    this sender until `lease` ends; another sender skips them meanwhile."""
    with write_session(engine) as session:
        due = session.execute(
            sa.select(*(table.c[name] for name in columns))
            .where(
                table.c.status == MailStatus.QUEUED,
                table.c.next_attempt_at <= now,
                sa.or_(table.c.lease_until.is_(None), table.c.lease_until < now),
            )
            .order_by(table.c.next_attempt_at, table.c.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        ).all()
        if due:
            session.execute(
                sa.update(table)
                .where(table.c.id.in_([row.id for row in due]))
                .values(lease_until=now + lease)
            )
    return due


def prune_done(session: Session, table: sa.Table, now: datetime, kept_for: timedelta) -> int:
    """Delete the rows of `table` sent or given up before `kept_for` ago."""
    removed = session.execute(
        sa.delete(table).where(
            table.c.status != MailStatus.QUEUED, table.c.created_at < now - kept_for
        )
    )
    return int(removed.rowcount or 0)  # type: ignore[attr-defined]
