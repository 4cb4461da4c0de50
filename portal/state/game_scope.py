"""The per-game pages' base state (`?game=<id>`): the studios' game pages, the missions'
editors, the live event debugger and the webhooks all open one game this way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, Forbidden, game_for
from models import Game, Role
from portal import routes
from portal.state.auth import REFUSAL_TOAST, AuthState

MANAGERS = (Role.DESIGNER, Role.STAFF)
T = TypeVar("T")


class GameScoped(AuthState):
    """Base of the per-game pages (`?game=<id>`): the game's header, and work on it after
    the server checked that the account manages it."""

    game_id: str = ""
    game_name: str = ""

    def _requested(self) -> str:
        return self.router.url.query_parameters.get("game", "")

    async def _on_game(
        self, work: Callable[[Session, Game, Account], T], *, write: bool = False
    ) -> T:
        requested = self._requested()
        return await self._on(
            lambda s, a: game_for(session=s, account=a, game_id=requested),
            work,
            *MANAGERS,
            write=write,
        )

    async def _open(self) -> Any:
        """on_load: check access and fill the header; None, or where to go instead."""
        guard = await self._guard(*MANAGERS)
        if guard is not None:
            return guard
        try:
            game = await self._on_game(lambda _s, g, _a: g)
        except Forbidden as exc:
            # Forget the game the tab showed before, so nothing that ticks on this state
            # (Live events) asks again and toasts the refusal a second time.
            self.game_id = self.game_name = ""
            return [rx.redirect(routes.GAMES), rx.toast.error(str(exc), id=REFUSAL_TOAST)]
        self.game_id, self.game_name = game.id, game.name
        return None

    async def _load_game_page(self) -> Any:
        """on_load of a per-game page that shows data: where to go instead, or fetch it."""
        redirect = await self._open()
        if redirect is None:
            await self._fetch()
        return redirect
