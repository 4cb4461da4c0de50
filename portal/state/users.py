"""Staff: every account (search, filter by role), disable and enable, a reset link by
mail, a designer's studio; and the mail outbox. The services check the role again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import staff as users
from api.accounts.access import Account
from api.mail import outbox as mail
from models import Role, User
from portal.backend import settings
from portal.components.formatting import when
from portal.state.auth import AuthState, refusals
from portal.state.paging import Paged

ROLES = [str(role) for role in users.ROLES]
MAIL_STATUSES = ["queued", "sent", "failed"]


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


def user_line(row: users.UserRow) -> UserLine:
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


@dataclass(frozen=True)
class MailLine:
    """A message of the outbox as the list shows it (`outbox.MailRow`, moments written)."""

    id: int
    to_address: str
    subject: str
    status: str
    attempts: int
    created_at: str
    sent_at: str
    last_error: str


def mail_line(row: mail.MailRow) -> MailLine:
    return MailLine(
        id=row.id,
        to_address=row.to_address,
        subject=row.subject,
        status=row.status,
        attempts=row.attempts,
        created_at=when(row.created_at),
        sent_at=when(row.sent_at),
        last_error=row.last_error,
    )


class UsersState(Paged, AuthState):
    rows: list[UserLine] = []
    studios: list[users.StudioChoice] = []
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
            found = users.list_users(
                session=session, account=account, role=role, search=search, page=page
            )
            return found, users.studio_choices(session=session, account=account)

        found, self.studios = await self._run(work, Role.STAFF)
        self._show(found, user_line)

    async def _act(self, change: Callable[[Session, Account], User], done: str):
        """One change as staff, the list again, and a toast naming the account."""
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
    async def disable(self):
        user_id, self.disabling_id = self.disabling_id, ""
        return await self._act(
            lambda s, a: users.disable(session=s, account=a, user_id=user_id),
            "{} is disabled and signed out everywhere.",
        )

    @rx.event
    @refusals()
    async def enable(self, user_id: str):
        return await self._act(
            lambda s, a: users.enable(session=s, account=a, user_id=user_id),
            "{} can sign in again.",
        )

    @rx.event
    @refusals()
    async def send_reset(self, user_id: str):
        self.sending_to = user_id  # that row's button shows it is on its way
        yield
        try:
            yield await self._act(
                lambda s, a: users.send_reset(session=s, account=a, user_id=user_id),
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
            lambda s, a: users.move_to_studio(
                session=s, account=a, user_id=user_id, studio_id=studio_id
            ),
            Role.STAFF,
            write=True,
        )
        self.moving_id = ""
        await self._fetch()
        return rx.toast.success(f"{self.moving_email} now works for {studio}.")


class MailState(Paged, AuthState):
    rows: list[MailLine] = []
    # Without SMTP_URL the outbox is where mail goes: the page says so.
    smtp_configured: bool = False
    open_id: int = 0
    open_to: str = ""
    open_subject: str = ""
    open_body: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.open_id = 0
        self.smtp_configured = bool(settings().smtp_url)
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        status, search, page = self.status_filter, self.search, self.page
        found = await self._run(
            lambda s, _a: mail.list_messages(session=s, status=status, search=search, page=page),
            Role.STAFF,
        )
        self._show(found, mail_line)

    @rx.event
    @refusals()
    async def open(self, message_id: int):
        configured = bool(settings().smtp_url)
        body = await self._run(
            lambda s, _a: mail.readable_body(
                session=s, message_id=message_id, smtp_configured=configured
            ),
            Role.STAFF,
        )
        row = next((r for r in self.rows if r.id == message_id), None)
        if row is None:
            return rx.toast.error("No such message.")
        self.open_id, self.open_to, self.open_subject, self.open_body = (
            row.id,
            row.to_address,
            row.subject,
            body,
        )
        return None

    @rx.event
    def close(self):
        self.open_id = 0
