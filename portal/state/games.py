"""Games and their credentials: designers manage their studio's, staff see all."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.services import games, studios
from api.services.access import Account, Forbidden, game_for
from api.services.games import CredentialError
from models import Game, Role
from portal import routes
from portal.backend import box, settings
from portal.state.auth import AuthState

MANAGERS = (Role.DESIGNER, Role.STAFF)


class GamesState(AuthState):
    rows: list[studios.GameRow] = []
    can_create: bool = False
    error: str = ""

    @rx.event
    async def load(self):
        guard = await self._guard(*MANAGERS)
        if guard is not None:
            return guard
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        self.rows = await self._run(lambda s, a: studios.games_for(session=s, account=a), *MANAGERS)
        self.can_create = self.user_role == Role.DESIGNER

    @rx.event
    async def create(self, form: dict[str, str]):
        self.error = ""

        def work(session: Session, account: Account) -> games.IssuedCredential:
            return games.create_game(
                session=session, box=box(), name=form.get("name", ""), studio_id=account.studio_id
            )

        try:
            issued = await self._run(work, Role.DESIGNER, write=True)
        except Forbidden as exc:
            return rx.toast.error(str(exc))
        except ValueError as exc:
            self.error = str(exc)
            return None
        # The secret is shown once, on the game's page.
        game_state = await self.get_state(GameState)
        game_state.game_id = issued.game_id
        game_state.fresh_client_id, game_state.fresh_secret = issued.client_id, issued.client_secret
        return rx.redirect(f"{routes.GAME}?game={issued.game_id}")


class GameState(AuthState):
    game_id: str = ""
    name: str = ""
    studio: str = ""
    credentials: list[studios.CredentialRow] = []
    # A newly issued credential: shown once, then gone (the server keeps it sealed).
    fresh_client_id: str = ""
    fresh_secret: str = ""
    base_url: str = ""

    def _requested(self) -> str:
        return self.router.url.query_parameters.get("game", "")

    @rx.event
    async def load(self):
        guard = await self._guard(*MANAGERS)
        if guard is not None:
            return guard
        requested = self._requested()
        if requested != self.game_id:
            self.fresh_client_id = self.fresh_secret = ""
        try:
            await self._fetch(requested)
        except Forbidden as exc:
            return [rx.redirect(routes.GAMES), rx.toast.error(str(exc))]
        return None

    async def _fetch(self, requested: str) -> None:
        def work(session: Session, account: Account):
            game = game_for(session=session, account=account, game_id=requested)
            return game, studios.credentials(session=session, game=game)

        game, creds = await self._run(work, *MANAGERS)
        self.game_id, self.name, self.credentials = game.id, game.name, creds
        self.base_url = settings().base_url

    async def _issue(self, change) -> object:
        requested = self._requested()

        def work(session: Session, account: Account):
            game: Game = game_for(session=session, account=account, game_id=requested)
            return change(session, game)

        try:
            result = await self._run(work, *MANAGERS, write=True)
        except (Forbidden, CredentialError) as exc:
            return rx.toast.error(str(exc))
        if isinstance(result, games.IssuedCredential):
            self.fresh_client_id, self.fresh_secret = result.client_id, result.client_secret
        await self._fetch(requested)
        return rx.toast.success("Done.")

    @rx.event
    async def add_credential(self):
        return await self._issue(
            lambda s, g: games.add_credential(session=s, box=box(), game_id=g.id)
        )

    @rx.event
    async def revoke(self, client_id: str):
        return await self._issue(
            lambda s, g: games.revoke_credential(session=s, game_id=g.id, client_id=client_id)
        )

    @rx.event
    def dismiss_secret(self):
        self.fresh_client_id = self.fresh_secret = ""
