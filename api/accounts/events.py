"""The audit trail's account events (docs/operations.md#audit-trail): an account's events
name it as their target (`account`, its id, its email) and are scoped to its studio (a
designer) or its offerwall (a publisher); staff's have no scope. A password or a token is
never a value: a password change is recorded as changed, with neither password."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from api import audit
from models import PortalSession, Role, User


def scope(user: User) -> tuple[str, str] | None:
    """Whose scoped views show the account's events: its studio's or its offerwall's."""
    if user.role == Role.DESIGNER and user.studio_id:
        return ("studio", user.studio_id)
    if user.role == Role.PUBLISHER and user.offerwall_id:
        return ("offerwall", user.offerwall_id)
    return None


def entry(user: User, action: str, changes: Mapping[str, Any] | None = None) -> audit.Entry:
    return audit.Entry(action, "account", user.id, user.email, scope(user), changes)


def session_ended(user: User, ended: PortalSession, how: str) -> audit.Entry:
    """`session.ended` for one session of `user`: which one, from where, and `how`
    ("ended", "others_ended", "password_changed", "password_reset", "disabled", ...)."""
    return entry(
        user,
        "session.ended",
        {"session_id": [ended.id, None], "ip": [ended.ip, None], "ended_by": [None, how]},
    )


def record(
    session: Session,
    user: User,
    action: str,
    changes: Mapping[str, Any] | None = None,
    *,
    ended: Sequence[PortalSession] = (),
    how: str = "",
) -> None:
    """Record `action` on the account, then one `session.ended` per session in `ended`;
    call it last in the transaction (the chain's head is locked until it ends)."""
    entries = [entry(user, action, changes)] if action else []
    entries += [session_ended(user, s, how or action) for s in ended]
    if entries:
        audit.record_all(session, entries)


def actor_for(user: User, *, ip: str | None, user_agent: str | None) -> audit.Actor:
    """The account acting for itself, from this client (a sign-in, a reset link)."""
    return audit.account_actor(user.id, user.email, user.role, ip=ip, user_agent=user_agent)
