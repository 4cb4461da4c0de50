"""Recording an audit event, in the transaction of the change it records, chained by
SHA-256 to the one before it; and reading the trail back.

`note` queues an event on the ORM session; it is recorded when that session commits, as
the transaction's last write (so the chain's head is always the last lock a transaction
takes, and no two writers wait on each other for it). `record` writes at once, for the
callers that work on a bare connection or need the hash.

An event's `changes` name each changed field with its value before and after. A secret is
never a value: the caller leaves secret fields out (a rotated key is recorded by its
action, `offerwall.api_key_rotated`, with neither key), and any field whose name looks
secret is replaced by "[redacted]" here as a backstop.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session

from api.audit.actors import Actor, current_actor
from api.ops import current_request_id
from models.audit import GENESIS, AuditChain, AuditEvent
from models.types import utcnow

_event = AuditEvent.__table__  # type: ignore[attr-defined]
_chain = AuditChain.__table__  # type: ignore[attr-defined]

REDACTED = "[redacted]"
# Field names that would hold a secret: redacted whatever the caller passed.
_SECRET_NAME = re.compile(
    r"secret|password|passwd|token|api_?key|private|credential|cookie|authorization"
    r"|(?<!require_)signature",
    re.IGNORECASE,
)
# The fields a row's hash covers, in this order (every column but the id and the hash).
HASHED = (
    "at",
    "actor_kind",
    "actor_id",
    "actor_email",
    "actor_role",
    "actor_ip",
    "user_agent",
    "action",
    "target_type",
    "target_id",
    "target_name",
    "scope_type",
    "scope_id",
    "request_id",
    "changes",
    "previous_hash",
)


def changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, list[Any]]:
    """{field: [before, after]} for each field whose value differs."""
    return {
        name: [before.get(name), after.get(name)]
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


def redacted(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {
        name: [REDACTED, REDACTED] if _SECRET_NAME.search(name) else _plain(value)
        for name, value in changes.items()
    }


def _plain(value: Any) -> Any:
    """A value as JSON keeps it (times as ISO text, decimals as text)."""
    return json.loads(json.dumps(value, default=str))


def row_hash(row: Mapping[str, Any]) -> str:
    """SHA-256 over the hashed fields of `row`, the previous row's hash among them."""
    content = {name: row.get(name) for name in HASHED}
    at = content["at"]
    if isinstance(at, datetime):
        content["at"] = at.replace(tzinfo=None).isoformat(timespec="microseconds")
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One event to record: its action, target, scope and changes."""

    action: str
    target_type: str
    target_id: object
    target_name: str = ""
    scope: tuple[str, str] | None = None
    changes: Mapping[str, Any] | None = None


def record(
    session: Session | sa.Connection,
    action: str,
    *,
    target_type: str,
    target_id: object,
    target_name: str = "",
    scope: tuple[str, str] | None = None,
    changes: Mapping[str, Any] | None = None,
    at: datetime | None = None,
) -> str:
    """Record `action` (`<entity>.<verb>`) on the target, by the current actor, in the
    caller's transaction; returns the new row's hash. The chain's head is locked until
    the transaction ends, so rows chain in the order they commit."""
    entry = Entry(action, target_type, target_id, target_name, scope, changes)
    return record_all(session, [entry], at=at)


def record_all(
    session: Session | sa.Connection,
    entries: Sequence[Entry],
    *,
    at: datetime | None = None,
    actor: Actor | None = None,
    request_id: str | None = None,
) -> str:
    """Record `entries` in order (a bulk decision: one event each), with one lock of the
    chain's head, one insert and one update of the head; returns the last hash. Call it
    last in the transaction: the head's lock is then held briefly, and never taken before
    a lock another writer takes after it (no deadlock)."""
    actor, moment = actor or current_actor(), at or utcnow()
    request_id = request_id or current_request_id()
    head = session.execute(
        sa.select(_chain.c.last_hash).where(_chain.c.id == 1).with_for_update()
    ).scalar_one_or_none()
    if head is None:  # a database emptied by hand: the chain starts again
        session.execute(
            _chain.insert().values(
                id=1, last_hash=GENESIS, start_previous_hash=GENESIS, pruning=False
            )
        )
        head = GENESIS
    rows = []
    plain: dict[int, dict[str, Any]] = {}  # a bulk decision's entries share their changes
    for entry in entries:
        changes = entry.changes or {}
        if id(changes) not in plain:
            plain[id(changes)] = redacted(changes)
        row: dict[str, Any] = {
            "at": moment,
            "actor_kind": actor.kind,
            "actor_id": actor.id,
            "actor_email": actor.email,
            "actor_role": actor.role,
            "actor_ip": actor.ip,
            "user_agent": actor.user_agent,
            "action": entry.action,
            "target_type": entry.target_type,
            "target_id": str(entry.target_id)[:100],
            "target_name": entry.target_name[:200],
            "scope_type": entry.scope[0] if entry.scope else None,
            "scope_id": entry.scope[1] if entry.scope else None,
            "request_id": request_id,
            "changes": plain[id(changes)],
            "previous_hash": head,
        }
        row["hash"] = head = row_hash(row)
        rows.append(row)
    if rows:
        session.execute(_event.insert(), rows)
        session.execute(sa.update(_chain).where(_chain.c.id == 1).values(last_hash=head))
    return head


_QUEUE = "audit_queue"


@dataclass(frozen=True)
class Target:
    """What an event is about: its type, id and name as it is now, and whose scoped views
    show it (a studio's or an offerwall's)."""

    type: str
    id: object
    name: str = ""
    scope: tuple[str, str] | None = None

    @classmethod
    def offerwall(cls, offerwall: Any) -> Target:
        """An offerwall, in its own scope (its publisher's views)."""
        return cls("offerwall", offerwall.id, offerwall.name, ("offerwall", offerwall.id))

    @classmethod
    def of_studio(cls, type: str, id: object, name: str, studio_id: str | None) -> Target:
        """A studio's object (a game, a mission, an endpoint), in the studio's scope."""
        return cls(type, id, name, ("studio", studio_id) if studio_id else None)


def note(
    session: Session,
    action: str,
    target: Target,
    changes: Mapping[str, Any] | None = None,
) -> None:
    """Queue `action` on the target, by the current actor (and request): recorded when
    `session` commits, as its transaction's last write; forgotten if it rolls back."""
    entry = Entry(action, target.type, target.id, target.name, target.scope, changes)
    session.info.setdefault(_QUEUE, []).append((entry, current_actor(), current_request_id()))


def note_changed(
    session: Session,
    action: str,
    target: Target,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
) -> bool:
    """`note` the fields of `after` whose values differ from `before`; nothing when none
    does (saving a form unchanged is no event). Returns whether something changed."""
    changes = changed(
        {name: _plain(value) for name, value in before.items()},
        {name: _plain(value) for name, value in after.items()},
    )
    if changes:
        note(session, action, target, changes)
    return bool(changes)


@event.listens_for(Session, "before_commit")
def _record_queued(session: Session) -> None:
    queued = session.info.pop(_QUEUE, None)
    if not queued:
        return
    session.flush()  # the change itself first: the trail's head is the last lock
    # Each run of events by one actor in one request, in the order they were noted.
    for (actor, request_id), run in groupby(queued, key=lambda q: (q[1], q[2])):
        record_all(session, [entry for entry, _, _ in run], actor=actor, request_id=request_id)


@event.listens_for(Session, "after_transaction_end")
def _forget_queued(session: Session, transaction: Any) -> None:
    """The outermost transaction ended without committing what was queued (a rollback):
    nothing happened, so nothing is recorded. A savepoint's end keeps the queue."""
    if transaction.parent is None:
        session.info.pop(_QUEUE, None)
