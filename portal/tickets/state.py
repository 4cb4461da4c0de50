"""Support tickets: staff see every one, a publisher their offerwall's; both open a ticket
with what Questwall knew when the player reported it, answer it (closing it or not),
close and reopen it. Every event asks the service with the signed-in account
(`desk.ticket_for`), so a ticket id sent by hand reaches only the account's own. The
page shows them in words (`portal.tickets.words`)."""

from __future__ import annotations

import reflex as rx

from api.tickets import desk as tickets
from models import TicketStatus
from portal.state.auth import SUBMITTED, AuthState, refusals
from portal.state.paging import Paged
from portal.tickets.words import TicketLine, TicketWords, in_words, line

STATUSES = tickets.STATUSES


class TicketsState(Paged, AuthState):
    rows: list[TicketLine] = []
    open_count: int = 0
    answered_count: int = 0
    # The ticket in the dialog (None: the list alone), and its answer form's errors.
    ticket: TicketWords | None = None
    answer_errors: dict[str, str] = {}

    @rx.event
    @refusals()
    async def load(self):
        self.ticket, self.answer_errors = None, {}
        self._status_from_query()
        return await self._load_page(*tickets.MANAGERS)

    async def _fetch(self) -> None:
        text, status, page = self.search, self.status_filter, self.page
        found, counts = await self._run(
            lambda s, a: (
                tickets.search_tickets(s, account=a, status=status, text=text, page=page),
                tickets.status_counts(s, account=a),
            ),
            *tickets.MANAGERS,
        )
        self._show(found, line)
        self.open_count = counts[TicketStatus.OPEN]
        self.answered_count = counts[TicketStatus.ANSWERED]

    async def _show_ticket(self, ticket_id: int) -> None:
        detail = await self._run(
            lambda s, a: tickets.ticket_detail(s, account=a, ticket_id=ticket_id),
            *tickets.MANAGERS,
        )
        self.ticket = in_words(detail)

    @rx.event
    @refusals()
    async def view(self, ticket_id: int):
        self.answer_errors = {}
        await self._show_ticket(ticket_id)

    @rx.event
    def hide(self):
        self.ticket, self.answer_errors = None, {}

    @rx.event
    @refusals(into="answer_errors")
    async def send_answer(self, form: dict[str, str]):
        if self.ticket is None or not self._first(form.get(SUBMITTED)):
            return None  # no ticket open, or a second click of the same form
        ticket_id, self.answer_errors = self.ticket.id, {}
        text, close = form.get("answer", ""), form.get("close") == "true"
        done = await self._run(
            lambda s, a: tickets.answer(s, account=a, ticket_id=ticket_id, text=text, close=close),
            *tickets.MANAGERS,
            write=True,
        )
        await self._refresh(ticket_id)
        if close:
            return rx.toast.success(f"Answer sent; ticket {done.reference} is closed.")
        return rx.toast.success(f"Answer sent: the player reads it under {done.reference}.")

    @rx.event
    @refusals()
    async def close_ticket(self, drawn_with: int | None = None):
        if self.ticket is None or not self._first(drawn_with):
            return None
        ticket_id = self.ticket.id
        done = await self._run(
            lambda s, a: tickets.close(s, account=a, ticket_id=ticket_id),
            *tickets.MANAGERS,
            write=True,
        )
        await self._refresh(ticket_id)
        return rx.toast.success(f"Ticket {done.reference} is closed.")

    @rx.event
    @refusals()
    async def reopen_ticket(self, drawn_with: int | None = None):
        if self.ticket is None or not self._first(drawn_with):
            return None
        ticket_id = self.ticket.id
        done = await self._run(
            lambda s, a: tickets.reopen(s, account=a, ticket_id=ticket_id),
            *tickets.MANAGERS,
            write=True,
        )
        await self._refresh(ticket_id)
        return rx.toast.success(f"Ticket {done.reference} is open again.")

    async def _refresh(self, ticket_id: int) -> None:
        """The ticket as it is now, and the list and counts around it."""
        await self._show_ticket(ticket_id)
        await self._fetch()
