"""Games and their credentials: designers manage their studio's, staff see all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import reflex as rx

from api.studios import games, studios
from models import Role
from portal import routes
from portal.backend import box, settings
from portal.components.formatting import day, when
from portal.state.auth import SUBMITTED, AuthState, refusals
from portal.state.game_scope import MANAGERS, GameScoped

T = TypeVar("T")


@dataclass(frozen=True)
class GameLine:
    """A game as the list shows it (`studios.GameRow`, its day written)."""

    id: str
    name: str
    studio: str
    live_credentials: int
    created_at: str


def game_line(row: studios.GameRow) -> GameLine:
    return GameLine(row.id, row.name, row.studio, row.live_credentials, day(row.created_at))


@dataclass(frozen=True)
class CredentialLine:
    """A game's credential as its page lists it (`studios.CredentialRow`, moments written)."""

    client_id: str
    name: str
    created_at: str
    revoked_at: str  # "" while live


def credential_line(row: studios.CredentialRow) -> CredentialLine:
    return CredentialLine(row.client_id, row.name, when(row.created_at), when(row.revoked_at))


class GamesState(AuthState):
    rows: list[GameLine] = []
    can_create: bool = False
    creating: bool = False
    error: str = ""

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_page(*MANAGERS)

    async def _fetch(self) -> None:
        found = await self._run(lambda s, a: studios.games_for(session=s, account=a), *MANAGERS)
        self.rows = [game_line(row) for row in found]
        self.can_create = self.user_role == Role.DESIGNER

    @rx.event
    @refusals(into="error")
    async def create(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return  # a second click of the same form
        self.error, self.creating = "", True
        yield
        try:
            issued = await self._run(
                lambda session, account: games.create_game(
                    session=session,
                    box=box(),
                    name=form.get("name", ""),
                    studio_id=account.studio_id,
                ),
                Role.DESIGNER,
                write=True,
            )
        finally:
            self.creating = False
        # The secret is shown once, on the game's page.
        game_state = await self.get_state(GameState)
        game_state.game_id = issued.game_id
        game_state.fresh_client_id, game_state.fresh_secret = issued.client_id, issued.client_secret
        yield rx.redirect(routes.game(issued.game_id))


class GameState(GameScoped):
    credentials: list[CredentialLine] = []
    # A newly issued credential: shown once, then gone (the server keeps it sealed).
    fresh_client_id: str = ""
    fresh_secret: str = ""
    fresh_name: str = ""
    base_url: str = ""
    credential_errors: dict[str, str] = {}
    # Changes after a credential is added, so the name input empties.
    credential_form_key: int = 0

    @rx.event
    @refusals()
    async def load(self):
        if self._requested() != self.game_id:
            self.fresh_client_id = self.fresh_secret = self.fresh_name = ""
        self.credential_errors = {}
        return await self._load_game_page()

    async def _fetch(self) -> None:
        found = await self._on_game(lambda s, g, _a: studios.credentials(session=s, game=g))
        self.credentials = [credential_line(row) for row in found]
        self.base_url = settings().base_url

    @rx.var
    def example_client_id(self) -> str:
        """The curl example's client id: the new credential's, else the newest live one's."""
        live = [c.client_id for c in self.credentials if not c.revoked_at]
        return self.fresh_client_id or (live[-1] if live else "<client id>")

    @rx.event
    @refusals(into="credential_errors")
    async def add_credential(self, form: dict[str, Any]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        self.credential_errors = {}
        name = str(form.get("name", ""))
        issued = await self._on_game(
            lambda s, g, _a: games.add_credential(session=s, box=box(), game_id=g.id, name=name),
            write=True,
        )
        self.fresh_client_id, self.fresh_secret = issued.client_id, issued.client_secret
        self.fresh_name = issued.name
        self.credential_form_key += 1
        await self._fetch()
        return rx.toast.success(f"Credential “{issued.name}” added: copy its secret now.")

    @rx.event
    @refusals()
    async def revoke(self, client_id: str):
        revoked = await self._on_game(
            lambda s, g, _a: games.revoke_credential(session=s, game_id=g.id, client_id=client_id),
            write=True,
        )
        if self.fresh_client_id == client_id:
            self.fresh_client_id = self.fresh_secret = self.fresh_name = ""
        await self._fetch()
        return rx.toast.success(
            f"Credential “{revoked.name}” revoked: requests signed with it are refused."
        )

    @rx.event
    def dismiss_secret(self):
        self.fresh_client_id = self.fresh_secret = self.fresh_name = ""
