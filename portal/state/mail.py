"""Staff's mail outbox page: every message the portal sends (search, filter by status) and
where its delivery stands; a message opens with what staff may read of it."""

from __future__ import annotations

import reflex as rx

from api.mail import outbox as mail
from models import Role
from portal.backend import settings
from portal.state.auth import AuthState, refusals
from portal.state.paging import Paged

MAIL_STATUSES = ["queued", "sent", "failed"]


class MailState(Paged, AuthState):
    rows: list[mail.MailRow] = []
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
        self._show(found)

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
