"""Conversions: staff see every one, a designer their studio's; both reverse an approved one
with a reason. Each search and each reversal asks the service with the account's own scope
(`conversions.scope`), so whatever the browser sends, a designer reaches only their
studio's conversions."""

from __future__ import annotations

import reflex as rx

from api.conversions import ConversionError
from api.conversions import ledger as conversions
from models import ConversionStatus, Role
from portal.state.auth import SUBMITTED, AuthState, refusals
from portal.state.paging import PlayerFilter
from portal.state.rows import ConversionLine, conversion_line

MANAGERS = (Role.STAFF, Role.DESIGNER)
# The status filter's choices besides "all": pending and rejected are the review queue's
# (the Fraud page decides them; here they can be found).
STATUSES = ["approved", "pending", "rejected", "reversed"]


class ConversionsState(PlayerFilter, AuthState):
    rows: list[ConversionLine] = []
    status_filter: str = ""
    # The conversion in the reverse dialog, and what the dialog says about it.
    reversing: str = ""
    reversing_mission: str = ""
    reversing_publisher: str = ""
    reverse_errors: dict[str, str] = {}

    @rx.event
    @refusals()
    async def load(self):
        self.reversing = ""
        self._status_from_query()
        return await self._load_page(*MANAGERS)

    async def _fetch(self) -> None:
        text, status, test, page = self.search, self.status_filter, self._test_only(), self.page
        found = await self._run(
            lambda s, a: conversions.search(
                session=s,
                studio_id=conversions.scope(a),
                text=text,
                status=status,
                test=test,
                page=page,
            ),
            *MANAGERS,
        )
        self._show(found, conversion_line)

    @rx.event
    def start_reverse(self, transaction_id: str):
        """Open the dialog on an approved row this tab was shown (the server's copy, not
        what the browser says about it); the reversal itself is checked again by
        `api/conversions/ledger.py`."""
        row = next((r for r in self.rows if r.transaction_id == transaction_id), None)
        if row is None or row.status != ConversionStatus.APPROVED:
            return
        self.reversing, self.reversing_mission = row.transaction_id, row.mission
        self.reversing_publisher, self.reverse_errors = row.publisher, {}

    @rx.event
    def cancel_reverse(self):
        self.reversing = ""

    @rx.event
    @refusals(into="reverse_errors")
    async def reverse(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        transaction_id, reason, self.reverse_errors = self.reversing, form.get("reason", ""), {}
        try:
            row = await self._run(
                lambda s, a: conversions.reverse(
                    session=s,
                    transaction_id=transaction_id,
                    reason=reason,
                    actor=a.email,
                    studio_id=conversions.scope(a),
                ),
                *MANAGERS,
                write=True,
            )
        except ConversionError as refused:
            if refused.field is None:  # reversed by someone else meanwhile: show it so
                await self._fetch()
            raise
        self.reversing = ""
        await self._fetch()
        return rx.toast.success(
            f"Conversion {row.transaction_id} is reversed: {row.publisher} receives a "
            "reversal postback."
        )
