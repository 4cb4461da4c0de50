"""What a reader of the audit trail asks for: the filters of the staff's Audit log, the
`/staff/audit` API and `questwall audit list|export`, read from text the same way for
each, and the SQL condition they make.

A filter left empty matches every row. Bad text is refused with `FilterError`, naming
the filter (the API answers 400, the CLI a usage error, the portal a message)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from api.core.refusals import DomainError
from models.accounts import User
from models.audit import AuditEvent

_event = AuditEvent.__table__  # type: ignore[attr-defined]
_user = User.__table__  # type: ignore[attr-defined]

# The scopes an event may have: whose views show it.
SCOPES = ("studio", "offerwall")
# An action, or the start of one ending in "." (every action of that entity).
_ACTION = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]*)*")
_NAME = re.compile(r"[a-z][a-z0-9_]*")
_MAX_TEXT = 320  # the longest column a filter is compared with (an email)


class FilterError(DomainError):
    """A filter's text is not valid; `field` names the filter."""


@dataclass(frozen=True)
class Filters:
    """Which events to read. `actor`: an account's email (any case) or id, or the CLI's
    operating-system user. `action`: one action, or a prefix ending in "." (`offerwall.`).
    `target_type` alone: every target of that type. `since` inclusive, `until` exclusive.
    `about`: the events about an object (its target, or its scope: an offerwall's page
    shows every event within it). `accounts_of`: a studio's or an offerwall's security
    log, the events about its accounts and those its accounts made."""

    actor: str = ""
    action: str = ""
    target_type: str = ""
    target_id: str = ""
    scope_type: str = ""
    scope_id: str = ""
    since: datetime | None = None
    until: datetime | None = None
    about: tuple[str, str] | None = None
    accounts_of: tuple[str, str] | None = None

    def described(self) -> dict[str, Any]:
        """The filters that narrow, as JSON keeps them (an export's event records them)."""
        shown: dict[str, Any] = {}
        for name, value in asdict(self).items():
            if value in (None, ""):
                continue
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            shown[name] = value
        return shown


def _text(field: str, value: str | None, pattern: re.Pattern[str] | None = None) -> str:
    text = (value or "").strip()
    if "\x00" in text or len(text) > _MAX_TEXT:
        raise FilterError(f"{field} must be at most {_MAX_TEXT} characters, without NUL.", field)
    if text and pattern is not None and not pattern.fullmatch(text):
        raise FilterError(f"{field} is not valid: {text[:50]!r}.", field)
    return text


def parse_time(field: str, value: str | None, *, end: bool = False) -> datetime | None:
    """An ISO date (`2026-11-29`) or date and time (`2026-11-29T14:03`, `...Z`,
    `...+02:00`; without a zone: UTC), as an aware UTC time. A date alone as the end of a
    range (`end`) includes that whole day."""
    text = _text(field, value)
    if not text:
        return None
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
            return moment + timedelta(days=1) if end else moment
        moment = datetime.fromisoformat(text.replace("z", "Z"))
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    except (ValueError, OverflowError):  # not a time, or past the calendar's ends in UTC
        raise FilterError(
            f"{field} must be an ISO date or time, such as 2026-11-29 or 2026-11-29T14:03Z.",
            field,
        ) from None


def parse_target(value: str | None) -> tuple[str, str]:
    """`TYPE:ID` (or `TYPE` alone) as the CLI writes a target."""
    text = _text("target", value)
    kind, _, ident = text.partition(":")
    return kind, ident


def filters(
    *,
    actor: str | None = None,
    action: str | None = None,
    target_type: str | None = None,
    target_id: str | None = None,
    scope_type: str | None = None,
    scope_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> Filters:
    """The filters from their text, or `FilterError` naming the first bad one."""
    kind = _text("target_type", target_type, _NAME)
    ident = _text("target_id", target_id)
    if ident and not kind:
        raise FilterError("target_id needs target_type (the kind of object it is).", "target_id")
    scope = _text("scope_type", scope_type)
    if scope and scope not in SCOPES:
        raise FilterError(f"scope_type must be one of {', '.join(SCOPES)}.", "scope_type")
    scope_ident = _text("scope_id", scope_id)
    if scope_ident and not scope:
        raise FilterError("scope_id needs scope_type (studio or offerwall).", "scope_id")
    start = parse_time("since", since)
    stop = parse_time("until", until, end=True)
    if start is not None and stop is not None and start >= stop:
        raise FilterError("since must be before until.", "since")
    return Filters(
        actor=_text("actor", actor),
        action=_text("action", action, _ACTION),
        target_type=kind,
        target_id=ident,
        scope_type=scope,
        scope_id=scope_ident,
        since=start,
        until=stop,
    )


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _members(scope: tuple[str, str]) -> Any:
    kind, ident = scope
    column = _user.c.studio_id if kind == "studio" else _user.c.offerwall_id
    return sa.select(_user.c.id).where(column == ident)


def accounts_in(session: Session | sa.Connection, scope: tuple[str, str]) -> frozenset[str]:
    """The ids of a studio's or an offerwall's accounts (`scope`: its kind and id)."""
    return frozenset(session.execute(_members(scope)).scalars())


def _accounts_of(scope: tuple[str, str]) -> Any:
    kind, ident = scope
    members = _members(scope)
    about_them = sa.and_(
        _event.c.target_type == "account",
        _event.c.scope_type == kind,
        _event.c.scope_id == ident,
    )
    return sa.or_(
        about_them,
        _event.c.target_id.in_(members) & (_event.c.target_type == "account"),
        _event.c.actor_id.in_(members),
    )


def condition(wanted: Filters) -> Any:
    """The SQL condition of `wanted` over `audit_event`."""
    c = _event.c
    parts: list[Any] = []
    if wanted.actor:
        parts.append(
            sa.or_(c.actor_id == wanted.actor, sa.func.lower(c.actor_email) == wanted.actor.lower())
        )
    if wanted.action.endswith("."):
        parts.append(c.action.like(_like_prefix(wanted.action), escape="\\"))
    elif wanted.action:
        parts.append(c.action == wanted.action)
    if wanted.target_type:
        parts.append(c.target_type == wanted.target_type)
    if wanted.target_id:
        parts.append(c.target_id == wanted.target_id)
    if wanted.scope_type:
        parts.append(c.scope_type == wanted.scope_type)
    if wanted.scope_id:
        parts.append(c.scope_id == wanted.scope_id)
    if wanted.since is not None:
        parts.append(c.at >= wanted.since)
    if wanted.until is not None:
        parts.append(c.at < wanted.until)
    if wanted.about is not None:
        kind, ident = wanted.about
        parts.append(
            sa.or_(
                sa.and_(c.target_type == kind, c.target_id == ident),
                sa.and_(c.scope_type == kind, c.scope_id == ident),
            )
        )
    if wanted.accounts_of is not None:
        parts.append(_accounts_of(wanted.accounts_of))
    return sa.and_(sa.true(), *parts)
