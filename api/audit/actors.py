"""Who acts: set once where a change comes in (a portal event, an API request, a command,
the worker), read by every audit event recorded under it."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    """`kind`: account (with its id, email and role as they are now), cli (the
    operating-system user as `email`), or system; where the change came from."""

    kind: str
    id: str | None = None
    email: str | None = None
    role: str | None = None
    ip: str | None = None
    user_agent: str | None = None


SYSTEM = Actor("system")
_ACTOR: ContextVar[Actor | None] = ContextVar("questwall_actor", default=None)


def account_actor(
    account_id: str, email: str, role: str, *, ip: str | None = None, user_agent: str | None = None
) -> Actor:
    return Actor("account", account_id, email, str(role), ip, (user_agent or "")[:512] or None)


def cli_actor() -> Actor:
    """A command run by the operating-system user who ran it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = "unknown"
    return Actor("cli", email=user)


def current_actor() -> Actor:
    """Who the code runs for; the system when nothing said otherwise (the worker)."""
    return _ACTOR.get() or SYSTEM


@contextmanager
def acting_as(actor: Actor) -> Iterator[Actor]:
    """Record what runs inside as done by `actor`."""
    token = _ACTOR.set(actor)
    try:
        yield actor
    finally:
        _ACTOR.reset(token)
