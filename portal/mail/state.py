"""Staff's mail outbox page: every message the portal sends (search, filter by status) and
where its delivery stands; a message opens with what staff may read of it."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx

from api.mail import outbox as mail
from models import Role
from portal.backend import settings
from portal.components.formatting import when
from portal.state.auth import AuthState, refusals
from portal.state.paging import Paged

MAIL_STATUSES = ["queued", "sent", "failed"]


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
