"""The History of one object (a publisher's offerwall, a game, a mission) and the Security
log of a publisher or a studio: its events, read by whoever may see that object, checked
on the server in every handler (staff any; a designer their studio's games, missions and
log; a publisher their own offerwall's and log)."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api import audit
from api.accounts import Account, Forbidden
from models import Mission, Role, Studio
from portal.audit.event_list import EventList, Read, read
from portal.state.auth import AuthState, refusals
from portal.state.game_scope import GameScoped
from portal.state.workspace import OfferwallScoped


class GameHistoryState(EventList, GameScoped):
    """A game's History tab (`?game=`), or one mission's (`&mission=`)."""

    mission_id: str = ""
    mission_name: str = ""

    async def _page(self, before: int | None) -> Read:
        requested = self.router.url.query_parameters.get("mission", "")

        def work(session: Session, game, account: Account) -> tuple[str, str, Read]:
            about = ("game", game.id)
            name = ""
            if requested:
                mission = session.get(Mission, requested)
                if mission is None or mission.game_id != game.id:
                    raise Forbidden("No such mission.")
                about, name = ("mission", mission.id), mission.title
            return (
                about[1] if requested else "",
                name,
                read(session, account, audit.Filters(about=about), before),
            )

        self.mission_id, self.mission_name, page = await self._on_game(work)
        return page

    @rx.event
    @refusals()
    async def load(self):
        self._forget()
        self.mission_id = self.mission_name = ""
        return await self._load_game_page()


class OfferwallEvents(EventList, OfferwallScoped):
    """A publisher's page of events, in their workspace (staff: `?offerwall=`). Each page
    below declares its own `load` (a handler runs on the state that declares it)."""

    def _wanted(self, offerwall_id: str) -> audit.Filters:
        raise NotImplementedError

    async def _page(self, before: int | None) -> Read:
        return await self._on_offerwall(
            lambda s, wall, a: read(s, a, self._wanted(wall.id), before)
        )

    async def _load_events(self):
        self._forget()
        redirect, _wall = await self._open()
        if redirect is None:
            await self._fetch()
        return redirect


class OfferwallHistoryState(OfferwallEvents):
    """A publisher's History: the events about their offerwall and within it (its
    conversions, its payout rules)."""

    def _wanted(self, offerwall_id: str) -> audit.Filters:
        return audit.Filters(about=("offerwall", offerwall_id))

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_events()


class PublisherSecurityState(OfferwallEvents):
    """A publisher's Security log: what happened to their accounts (sign-ins, passwords)
    and what their accounts did."""

    def _wanted(self, offerwall_id: str) -> audit.Filters:
        return audit.Filters(accounts_of=("offerwall", offerwall_id))

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_events()


class StudioSecurityState(EventList, AuthState):
    """A studio's Security log: what happened to its accounts and what they did. A
    designer's own studio's; staff open any (`?studio=`)."""

    studio_id: str = ""
    studio_name: str = ""

    async def _page(self, before: int | None) -> Read:
        requested = str(self.router.url.query_parameters.get("studio", ""))

        def work(session: Session, account: Account) -> tuple[str, str, Read]:
            wanted_id = requested
            if account.role == Role.DESIGNER:
                if requested and requested != account.studio_id:
                    raise Forbidden("Your account may not do this.")
                wanted_id = account.studio_id or ""
            studio = session.get(Studio, wanted_id) if wanted_id else None
            if studio is None:
                raise Forbidden("No such studio.")
            wanted = audit.Filters(accounts_of=("studio", studio.id))
            return studio.id, studio.name, read(session, account, wanted, before)

        self.studio_id, self.studio_name, page = await self._run(work, Role.DESIGNER, Role.STAFF)
        return page

    @rx.event
    @refusals()
    async def load(self):
        self._forget()
        self.studio_id = self.studio_name = ""
        return await self._load_page(Role.DESIGNER, Role.STAFF)
