"""Staff: studios and their designers' accounts."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.services import studios
from api.services.access import Account, Forbidden
from api.services.accounts import AccountError
from models import Role
from portal.state.auth import AuthState


class StudioState(AuthState):
    rows: list[studios.StudioRow] = []
    studio_errors: dict[str, str] = {}
    designer_errors: dict[str, str] = {}

    @rx.event
    async def load(self):
        guard = await self._guard(Role.STAFF)
        if guard is not None:
            return guard
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        self.rows = await self._run(lambda s, _a: studios.list_studios(session=s), Role.STAFF)

    @rx.event
    async def create_studio(self, form: dict[str, str]):
        self.studio_errors = {}

        def work(session: Session, _a: Account) -> str:
            return studios.create_studio(session=session, name=form.get("name", "")).name

        try:
            name = await self._run(work, Role.STAFF, write=True)
        except Forbidden as exc:
            return rx.toast.error(str(exc))
        except AccountError as exc:
            self.studio_errors = {exc.field or "name": str(exc)}
            return None
        await self._fetch()
        return rx.toast.success(f"Studio {name} created.")

    @rx.event
    async def add_designer(self, form: dict[str, str]):
        self.designer_errors = {}

        def work(session: Session, _a: Account) -> str:
            return studios.add_designer(
                session=session,
                studio_id=form.get("studio", ""),
                email=form.get("email", ""),
                password=form.get("password", ""),
                name=form.get("designer_name", ""),
            ).email

        try:
            email = await self._run(work, Role.STAFF, write=True)
        except Forbidden as exc:
            return rx.toast.error(str(exc))
        except AccountError as exc:
            self.designer_errors = {exc.field or "email": str(exc)}
            return None
        await self._fetch()
        return rx.toast.success(f"Designer {email} can sign in now.")
