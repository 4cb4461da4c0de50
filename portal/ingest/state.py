"""The live event debugger. The page ticks every 2 s while it is open (a client-side
timer, so nothing runs on the server for a closed page); a tick queries the database
only when this process saw new data for the game, or every 10 s for other processes'."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.core.refusals import DomainError
from api.ingest import debugger
from models import Game
from portal import activity
from portal.components.formatting import instant
from portal.state.auth import refusals
from portal.state.game_scope import GameScoped
from portal.state.rows import FlagLine, flag_line

FULL_REFRESH_SECONDS = 10
T = TypeVar("T")


# The debugger's rows as the page lists them: `api.ingest.debugger`'s, each moment written
# to the millisecond (the events set aside are the Fraud page's `FlagLine`s, to the second).


@dataclass(frozen=True)
class EventLine:
    id: int
    time: str
    received: str
    user_id: str
    name: str
    value: str
    traits: str


@dataclass(frozen=True)
class IdentifierLine:
    updated: str
    user_id: str
    kind: str
    value: str
    platform_user_id: str


@dataclass(frozen=True)
class RejectionLine:
    at: str
    status: int
    item: str
    code: str
    message: str


@dataclass(frozen=True)
class RefusedLine:
    """A signed request refused as a whole, and what the server computed for it."""

    at: str
    status: int
    code: str
    reason: str
    client_id: str
    signed: str  # clientId + timestamp + the body as received (its first 2 KB), or ""
    skew: str
    body: str
    body_sha256: str
    signature: str


def _lines(rows: list[Any], line: Callable[..., T], moments: tuple[str, ...]) -> list[T]:
    """Each row as `line`, its `moments` written."""

    def written(name: str, value: object) -> object:
        return instant(value) if name in moments and isinstance(value, datetime) else value

    return [line(**{k: written(k, v) for k, v in vars(row).items()}) for row in rows]


class DebuggerState(GameScoped):
    user_filter: str = ""
    live: bool = True
    events: list[EventLine] = []
    identifiers: list[IdentifierLine] = []
    rejected: list[RejectionLine] = []
    refused: list[RefusedLine] = []
    set_aside: list[FlagLine] = []
    _seen: int = -1
    _fetched_at: float = 0.0

    @rx.event
    @refusals()
    async def load(self):
        self.user_filter = ""
        return await self._load_game_page()

    async def _fetch(self) -> None:
        user = self.user_filter.strip()
        self._seen = activity.version(self.game_id)

        def work(session: Session, game: Game, _a: Account):
            return (
                debugger.recent_events(session=session, game_id=game.id, user_id=user),
                debugger.identifier_changes(session=session, game_id=game.id, user_id=user),
                debugger.rejections(session=session, game_id=game.id),
                debugger.set_aside(session=session, game_id=game.id, user_id=user),
                debugger.refused_requests(session=session, game_id=game.id),
            )

        events, identifiers, rejected, set_aside, refused = await self._on_game(work)
        self.set_aside = [flag_line(f) for f in set_aside]
        self.events = _lines(events, EventLine, ("time", "received"))
        self.identifiers = _lines(identifiers, IdentifierLine, ("updated",))
        self.rejected = _lines(rejected, RejectionLine, ("at",))
        self.refused = _lines(refused, RefusedLine, ("at",))
        self._fetched_at = time.monotonic()

    @rx.event
    @refusals()
    async def tick(self, _now: str = ""):
        if not self.live or not self.game_id:
            return None
        moved = activity.version(self.game_id) != self._seen
        if moved or time.monotonic() - self._fetched_at > FULL_REFRESH_SECONDS:
            try:
                await self._fetch()
            except DomainError:
                self.live = False  # stop ticking; the refusal is shown like any other
                raise
        return None

    @rx.event
    @refusals()
    async def filter_user(self, form: dict[str, str]):
        self.user_filter = form.get("user_id", "")
        await self._fetch()

    @rx.event
    def toggle_live(self, live: bool):
        self.live = bool(live)
