"""An audit event as the portal's tables show it: when, who (with role and IP), the
action, the target as it was named, the request id, and each change before → after.

Staff see every actor as recorded. A publisher or a designer sees the actions of their own
organisation's accounts in full, and anyone else's without the person's email, address or
browser: Questwall's (staff, an operator's command, the system), or another organisation's
(a studio's designer deciding on a publisher's conversion)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from api import audit
from portal.components.formatting import exact

# A value longer than this is cut (a long URL stays readable in a table's cell).
LONGEST = 300
DASH = "—"


@dataclass(frozen=True)
class ChangeLine:
    field: str
    before: str
    after: str


@dataclass(frozen=True)
class EventLine:
    id: int
    when: str  # to the second, UTC
    day: str  # its day, then its time: two lines in a laptop's table
    time: str
    who: str
    role: str
    ip: str
    user_agent: str
    action: str
    target: str  # its name as it was then, or its id
    target_ref: str  # "offerwall 3f2c…": its type and id
    request_id: str
    changes: list[ChangeLine]


def _value(value: Any) -> str:
    if value is None or value == "":
        return DASH
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= LONGEST else text[: LONGEST - 1] + "…"


def _change(name: str, value: Any) -> ChangeLine:
    if isinstance(value, list) and len(value) == 2:
        return ChangeLine(name, _value(value[0]), _value(value[1]))
    return ChangeLine(name, DASH, _value(value))


def _anonymous(row: dict[str, Any]) -> str:
    if row["actor_kind"] == "system":
        return "Questwall (automatic)"
    if row["actor_kind"] == "cli":
        return "Questwall operator"
    return {
        "staff": "Questwall staff",
        "designer": "A game studio",
        "publisher": "A publisher",
    }.get(row["actor_role"] or "", "Another account")


def line_of(row: dict[str, Any], *, own: frozenset[str] | None) -> EventLine:
    """The event of `row` as a viewer sees it: `own`, the ids of the viewer's
    organisation's accounts, whose actions show in full (None: staff, who see all)."""
    hidden = own is not None and row["actor_id"] not in own
    if hidden or row["actor_kind"] == "system":
        who, role = _anonymous(row), ""
    else:  # an account as it was, or the operating-system user of a command
        who = row["actor_email"] or row["actor_kind"]
        role = row["actor_role"] or ("command line" if row["actor_kind"] == "cli" else "")
    return EventLine(
        id=row["id"],
        when=exact(row["at"]),
        day=exact(row["at"])[:10],
        time=exact(row["at"])[11:],
        who=who,
        role=role,
        ip="" if hidden else (row["actor_ip"] or ""),
        user_agent="" if hidden else (row["user_agent"] or ""),
        action=row["action"],
        target=row["target_name"] or row["target_id"],
        target_ref=f"{row['target_type']} {row['target_id']}",
        request_id=row["request_id"] or "",
        changes=[_change(name, value) for name, value in (row["changes"] or {}).items()],
    )


def lines_of(page: audit.Page, *, own: frozenset[str] | None) -> list[EventLine]:
    return [line_of(row, own=own) for row in page.rows]
