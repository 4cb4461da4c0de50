"""The live event debugger. The page ticks every 2 s while it is open (a client-side
timer, so nothing runs on the server for a closed page); a tick queries the database
only when this process saw new data for the game, or every 10 s for other processes'."""

from __future__ import annotations

import time

import reflex as rx
from sqlmodel import Session

from api.accounts.access import Account
from api.core.refusals import DomainError
from api.fraud.cheat_flags import FlagRow
from api.ingest import debugger
from models import Game
from portal import activity
from portal.state.auth import refusals
from portal.state.games import GameScoped

FULL_REFRESH_SECONDS = 10


class DebuggerState(GameScoped):
    user_filter: str = ""
    live: bool = True
    events: list[debugger.EventRow] = []
    identifiers: list[debugger.IdentifierRow] = []
    rejected: list[debugger.RejectionRow] = []
    refused: list[debugger.RefusedRow] = []
    set_aside: list[FlagRow] = []
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

        found = await self._on_game(work)
        self.events, self.identifiers, self.rejected, self.set_aside, self.refused = found
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
