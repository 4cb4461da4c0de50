"""Staff's Users page: every account (search, filter by role), disable and enable, a reset
link by mail, a designer's studio. `api/accounts/staff.py` checks the role again. (The signed-in
user's own account is portal/accounts/account_state.py; the mail outbox, portal/mail/state.py.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, staff
from models import Role, User
from portal.components.formatting import when
from portal.state.auth import AuthState, refusals
from portal.state.paging import Paged
from portal.state.reauth import Reauth

ROLES = [str(role) for role in staff.ROLES]


@dataclass(frozen=True)
class UserLine:
    """An account as the list shows it (`staff.UserRow` with its moments written)."""

    id: str
    email: str
    name: str
    role: str
    studio_id: str
    belongs_to: str  # the designer's studio, or the publisher's company
    status: str  # "active" or "disabled"
    created_at: str
    last_login_at: str  # "never" for an account never signed in


def user_line(row: staff.UserRow) -> UserLine:
    return UserLine(
        id=row.id,
        email=row.email,
        name=row.name,
        role=row.role,
        studio_id=row.studio_id,
        belongs_to=row.belongs_to,
        status=row.status,
        created_at=when(row.created_at),
        last_login_at=when(row.last_login_at) or "never",
    )


class UsersState(Reauth, Paged, AuthState):
    rows: list[UserLine] = []
    studios: list[staff.StudioChoice] = []
    # The account in the "disable" confirmation, and the designer in the "studio" dialog.
    disabling_id: str = ""
    disabling_email: str = ""
    moving_id: str = ""
    moving_email: str = ""
    moving_studio: str = ""
    move_errors: dict[str, str] = {}
    sending_to: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.disabling_id = self.moving_id = ""
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        role, search, page = self.status_filter, self.search, self.page

        def work(session: Session, account: Account):
            found = staff.list_users(
                session=session, account=account, role=role, search=search, page=page
            )
            return found, staff.studio_choices(session=session, account=account)

        found, self.studios = await self._run(work, Role.STAFF)
        self._show(found, user_line)

    async def _act(
        self, change: Callable[[Session, Account], User], done: str, *, confirmed: bool = False
    ):
        """One change as staff (`confirmed`: behind the password, asked again after ten
        minutes), the list again, and a toast naming the account."""
        if confirmed:
            user = await self._run_confirmed(change, Role.STAFF)
        else:
            user = await self._run(change, Role.STAFF, write=True)
        await self._fetch()
        return rx.toast.success(done.format(user.email))

    @rx.event
    def ask_disable(self, user_id: str, email: str):
        self.disabling_id, self.disabling_email = user_id, email

    @rx.event
    def cancel_disable(self):
        self.disabling_id = ""

    @rx.event
    @refusals()
    async def disable(self, user_id: str = ""):
        user_id = user_id or self.disabling_id
        self.disabling_id = ""
        return await self._act(
            lambda s, a: staff.disable(session=s, account=a, user_id=user_id),
            "{} is disabled and signed out everywhere.",
            confirmed=True,
        )

    @rx.event
    @refusals()
    async def enable(self, user_id: str):
        return await self._act(
            lambda s, a: staff.enable(session=s, account=a, user_id=user_id),
            "{} can sign in again.",
            confirmed=True,
        )

    @rx.event
    @refusals()
    async def end_sessions(self, user_id: str):
        """Sign the account out of every browser (behind the password)."""
        return await self._act(
            lambda s, a: staff.end_all_sessions(session=s, account=a, user_id=user_id),
            "{} is signed out everywhere.",
            confirmed=True,
        )

    @rx.event
    @refusals()
    async def send_reset(self, user_id: str):
        self.sending_to = user_id  # that row's button shows it is on its way
        yield
        try:
            yield await self._act(
                lambda s, a: staff.send_reset(session=s, account=a, user_id=user_id),
                "A link to set a new password is on its way to {}.",
            )
        finally:
            self.sending_to = ""

    @rx.event
    def start_move(self, user_id: str, email: str, studio_id: str):
        self.moving_id, self.moving_email, self.moving_studio = user_id, email, studio_id
        self.move_errors = {}

    @rx.event
    def cancel_move(self):
        self.moving_id = ""

    @rx.event
    @refusals(into="move_errors")
    async def move(self, form: dict[str, str]):
        user_id, studio_id = self.moving_id, form.get("studio", "")
        self.move_errors = {}
        studio = await self._run(
            lambda s, a: staff.move_to_studio(
                session=s, account=a, user_id=user_id, studio_id=studio_id
            ),
            Role.STAFF,
            write=True,
        )
        self.moving_id = ""
        await self._fetch()
        return rx.toast.success(f"{self.moving_email} now works for {studio}.")
