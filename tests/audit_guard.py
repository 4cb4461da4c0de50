"""Every write path of the service is audited: a watch on every engine of the test run.

Each statement that inserts, updates or deletes rows (one that matched none changed nothing) of a table holding money or access
(`RULES`) is noted on its connection; when that connection commits, an `audit_event` row
must have been inserted in the same transaction, or the commit is a violation and the test
that made it fails (tests/conftest.py's `audit_guard` fixture, on for every test). So a
new action cannot land without its audit event: whichever test first runs it fails.

Only the service's own statements count: one the tests make themselves to set up data
(the innermost frame of this project is under tests/) or a migration makes is not a
change anybody made. Writes that are no one's decision are declared below, column by
column or by the housekeeping function that makes them, each with its reason.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import Pool

ROOT = Path(__file__).resolve().parents[1]
SERVICE = (str(ROOT / "api") + "/", str(ROOT / "portal") + "/")
_PROJECT = str(ROOT) + "/"
_VENV = str(ROOT / ".venv") + "/"

# Columns whose writes are bookkeeping, not a change of money or access.
HEALTH = {"consecutive_failures", "failing_since", "deliveries_paused_at", "paused_at"}


def _all(op: str, columns: frozenset[str]) -> bool:
    return True


def _unless(*quiet: str) -> Callable[[str, frozenset[str]], bool]:
    """Every insert and delete; an update unless it sets only `quiet` columns."""
    allowed = frozenset(quiet)

    def rule(op: str, columns: frozenset[str]) -> bool:
        return op != "UPDATE" or not columns <= allowed

    return rule


def _updates_of(*watched: str) -> Callable[[str, frozenset[str]], bool]:
    """Only an update that sets one of `watched` (rows the system adds on its own)."""
    names = frozenset(watched)

    def rule(op: str, columns: frozenset[str]) -> bool:
        return op == "UPDATE" and bool(columns & names)

    return rule


RULES: dict[str, Callable[[str, frozenset[str]], bool]] = {
    "offerwall": _unless(*HEALTH, "signing_secret_shown_at"),
    "portal_user": _unless("last_login_at"),
    # Two-factor sign-in: the step of the last code accepted is bookkeeping (anti-replay).
    "account_totp": _unless("last_step"),
    "account_recovery_code": _all,
    "studio": _all,
    "game": _all,
    "game_credential": _unless("last_used_at"),
    # Counters of conversions and starts move with play, under the caps.
    "mission": _unless("conversions"),
    "quest": _unless("starts"),
    "mission_pool": _all,
    "payout_rule": _all,
    "promotion": _all,
    "webhook_endpoint": _unless(*HEALTH),
    "blocked_entry": _all,
    # A conversion is made by a completion (no one's decision); deciding it is.
    "conversion": _updates_of("status", "review_due_at"),
}

# Housekeeping that removes or rewrites rows by age or by key rotation: (file, function).
QUIET_FUNCTIONS = {
    ("api/accounts/sessions.py", "prune_sessions"),
    # The worker pauses an endpoint whose every attempt failed for a day (a designer's
    # enabling it again is recorded).
    ("api/webhooks/messages.py", "_failing"),
}
# The database plumbing: a statement it runs (a flush at commit) is its caller's.
PLUMBING = ("api/core/db.py", "api/core/sql.py")

_WRITE = re.compile(
    r"^\s*(?:WITH\b.*?\)\s*)?(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)\"?",
    re.IGNORECASE | re.DOTALL,
)
_SET = re.compile(r"\bSET\s+(.*?)(?:\bWHERE\b|\bFROM\b|\bRETURNING\b|$)", re.IGNORECASE | re.DOTALL)
_COLUMN = re.compile(r"\"?(\w+)\"?\s*=")


@dataclass
class Violation:
    statements: list[str]
    where: str

    def __str__(self) -> str:
        return f"{self.where}: " + "; ".join(self.statements)


@dataclass
class _Pending:
    writes: list[tuple[str, str]] = field(default_factory=list)  # (statement, caller)
    audited: bool = False


_violations: list[Violation] = []
_lock = threading.Lock()
_installed = False


def _caller() -> str | None:
    """The innermost frame of the service's own code, or None when a test (or a
    migration, or a housekeeping function) made the statement."""
    frame = sys._getframe(2)
    innermost: str | None = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(_PROJECT) and not path.startswith(_VENV):
            relative = path[len(_PROJECT) :]
            if (relative, frame.f_code.co_name) in QUIET_FUNCTIONS:
                return None
            if innermost is None and not relative.startswith(PLUMBING):
                if not path.startswith(SERVICE):
                    return None
                innermost = f"{relative}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return innermost


def _pending(conn: Connection) -> _Pending:
    found = conn.info.get("audit_guard")
    if found is None:
        found = conn.info["audit_guard"] = _Pending()
    return found


def _after_execute(conn, cursor, statement, parameters, context, executemany) -> None:
    if cursor.rowcount == 0:  # an update or delete that matched nothing changed nothing
        return
    match = _WRITE.match(statement)
    if not match:
        return
    op, table = match.group(1).split()[0].upper(), match.group(2).lower()
    if table == "audit_event" and op == "INSERT":
        _pending(conn).audited = True
        return
    rule = RULES.get(table)
    if rule is None:
        return
    columns: frozenset[str] = frozenset()
    if op == "UPDATE":
        found = _SET.search(statement)
        columns = frozenset(c.lower() for c in _COLUMN.findall(found.group(1) if found else ""))
    if not rule(op, columns):
        return
    caller = _caller()
    if caller is not None:
        _pending(conn).writes.append((" ".join(statement.split())[:160], caller))


def _commit(conn: Connection) -> None:
    pending = conn.info.pop("audit_guard", None)
    if pending is None or pending.audited or not pending.writes:
        return
    with _lock:
        _violations.append(
            Violation([s for s, _ in pending.writes], ", ".join({c for _, c in pending.writes}))
        )


def _rollback(conn: Connection) -> None:
    conn.info.pop("audit_guard", None)


def _checkin(dbapi_connection, record) -> None:
    """A connection back in the pool was rolled back by it: nothing of it was kept."""
    if record is not None:
        record.info.pop("audit_guard", None)


def install() -> None:
    """Watch every engine of this process (once)."""
    global _installed
    if _installed:
        return
    event.listen(Engine, "after_cursor_execute", _after_execute)
    event.listen(Engine, "commit", _commit)
    event.listen(Engine, "rollback", _rollback)
    event.listen(Pool, "checkin", _checkin)
    _installed = True


def take() -> list[Violation]:
    """The violations since the last call."""
    with _lock:
        found = list(_violations)
        _violations.clear()
    return found
