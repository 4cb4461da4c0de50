"""Staff: studios (create, rename) and their designers' accounts."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.studios import studios
from models import Role
from portal.state.auth import SUBMITTED, AuthState, refusals

# The ids of the two forms, emptied once what they create exists.
STUDIO_FORM = "new-studio-form"
DESIGNER_FORM = "new-designer-form"


class StudioState(AuthState):
    rows: list[studios.StudioRow] = []
    studio_errors: dict[str, str] = {}
    designer_errors: dict[str, str] = {}
    # The studio in the rename dialog.
    renaming_id: str = ""
    renaming_name: str = ""
    rename_errors: dict[str, str] = {}

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        self.rows = await self._run(lambda s, _a: studios.list_studios(session=s), Role.STAFF)

    async def _create(self, work: Callable[[Session, Account], str], done: str, form: str):
        """Create as staff, list again, say what was created and empty the form (a refusal
        raises before: the form keeps what was typed, beside the error)."""
        created = await self._run(work, Role.STAFF, write=True)
        await self._fetch()
        return [
            rx.toast.success(done.format(created)),
            rx.call_script(f"document.getElementById('{form}').reset()"),
        ]

    @rx.event
    @refusals(into="studio_errors")
    async def create_studio(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        self.studio_errors = {}
        return await self._create(
            lambda s, _a: studios.create_studio(session=s, name=form.get("name", "")).name,
            "Studio {} created.",
            STUDIO_FORM,
        )

    @rx.event
    @refusals(into="designer_errors")
    async def add_designer(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        self.designer_errors = {}
        return await self._create(
            lambda s, _a: (
                studios.add_designer(
                    session=s,
                    studio_id=form.get("studio", ""),
                    email=form.get("email", ""),
                    password=form.get("password", ""),
                    name=form.get("designer_name", ""),
                ).email
            ),
            "Designer {} can sign in now.",
            DESIGNER_FORM,
        )

    @rx.event
    def start_rename(self, studio_id: str, name: str):
        self.renaming_id, self.renaming_name, self.rename_errors = studio_id, name, {}

    @rx.event
    def cancel_rename(self):
        self.renaming_id = ""

    @rx.event
    @refusals(into="rename_errors")
    async def rename(self, form: dict[str, str]):
        studio_id, self.rename_errors = self.renaming_id, {}
        name = await self._run(
            lambda s, _a: (
                studios.rename_studio(
                    session=s, studio_id=studio_id, name=form.get("name", "")
                ).name
            ),
            Role.STAFF,
            write=True,
        )
        self.renaming_id = ""
        await self._fetch()
        return rx.toast.success(f"The studio is now called {name}.")
