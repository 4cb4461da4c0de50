"""The paging every list of audit events shares (newest first, "Older" and back to the
newest), and what a viewer sees of each actor.

A state lists `EventList` first among its bases and reads a page in `_page`, through
`AuthState._run` (or `_on`), so the account is checked on the server in each handler."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api import audit
from api.accounts import Account
from models import Role
from portal.audit.lines import EventLine, lines_of
from portal.state.auth import refusals

PAGE_SIZE = 25


@dataclass(frozen=True)
class Read:
    """A page of events, and whose actions the viewer sees in full: the ids of their
    organisation's accounts, None for staff (every actor)."""

    page: audit.Page
    own: frozenset[str] | None


def read(session: Session, account: Account, wanted: audit.Filters, before: int | None) -> Read:
    """A page of `wanted`, for `account` to see (after the caller checked it may)."""
    page = audit.read_page(session, wanted, before=before, limit=PAGE_SIZE)
    if account.role == Role.STAFF:
        return Read(page, None)
    scope = (
        ("studio", account.studio_id or "")
        if account.role == Role.DESIGNER
        else ("offerwall", account.offerwall_id or "")
    )
    return Read(page, audit.accounts_in(session, scope))


class EventList(rx.State, mixin=True):
    events: list[EventLine] = []
    older: int = 0  # the cursor of the next, older page; 0: this is the last
    before: int = 0  # this page's cursor; 0: the newest

    async def _page(self, before: int | None) -> Read:
        raise NotImplementedError

    def _forget(self) -> None:
        """On a page's load: nothing of the page opened before shows (a refused load
        leaves the list empty, not another object's events)."""
        self.events, self.older, self.before = [], 0, 0

    async def _fetch(self) -> None:
        found = await self._page(self.before or None)
        self.events = lines_of(found.page, own=found.own)
        self.older = found.page.older or 0

    @rx.event
    @refusals()
    async def older_page(self):
        if self.older:
            self.before = self.older
        await self._fetch()

    @rx.event
    @refusals()
    async def newest_page(self):
        self.before = 0
        await self._fetch()
