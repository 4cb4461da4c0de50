"""The paging every list of audit events shares (newest first, "Older" and back to the
newest), and staff's Audit log with its filters and export links.

A state lists `EventList` first among its bases and reads a page in `_page`, through
`AuthState._run` (or `_on`), so the account is checked on the server in each handler."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import reflex as rx
from sqlmodel import Session

from api import audit
from api.accounts import Account
from models import Role
from portal.audit.lines import EventLine, lines_of
from portal.state.auth import AuthState, refusals

PAGE_SIZE = 25
# The API's export route (api/routes/staff_audit.py), which the export links download.
EXPORT_PATH = "/staff/audit/export"
# The Audit log's filter inputs, and the export route's parameter of each.
FILTERS = ("actor", "action", "target", "since", "until")


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


class AuditLogState(EventList, AuthState):
    """Staff's Audit log: every event, narrowed by the filters."""

    actor: str = ""
    action: str = ""
    target: str = ""  # TYPE or TYPE:ID
    since: str = ""
    until: str = ""
    filter_error: str = ""

    def _filters(self) -> audit.Filters:
        kind, ident = audit.parse_target(self.target)
        return audit.filters(
            actor=self.actor,
            action=self.action,
            target_type=kind,
            target_id=ident,
            since=self.since,
            until=self.until,
        )

    async def _page(self, before: int | None) -> Read:
        wanted = self._filters()
        return await self._run(lambda s, a: read(s, a, wanted, before), Role.STAFF)

    @rx.var
    def export_query(self) -> str:
        """The export route's query for the filters shown (checked there again)."""
        kind, _, ident = self.target.strip().partition(":")
        params = {
            "actor": self.actor,
            "action": self.action,
            "targetType": kind,
            "targetId": ident,
            "since": self.since,
            "until": self.until,
        }
        return urlencode({k: v.strip() for k, v in params.items() if v.strip()})

    @rx.event
    @refusals()
    async def load(self):
        query = self.router.url.query_parameters
        for name in FILTERS:  # a link may open the log filtered (?action=offerwall.)
            setattr(self, name, str(query.get(name, "")))
        self._forget()
        self.filter_error = ""
        guard = await self._guard(Role.STAFF)
        if guard is None:
            await self._filtered()
        return guard

    async def _filtered(self) -> None:
        try:
            await self._fetch()
            self.filter_error = ""
        except audit.FilterError as exc:
            self.events, self.older = [], 0
            self.filter_error = exc.message

    @rx.event
    @refusals()
    async def apply(self, form: dict[str, str]):
        for name in FILTERS:
            setattr(self, name, str(form.get(name, "")).strip())
        self.before = 0
        await self._filtered()

    @rx.event
    @refusals()
    async def clear(self):
        for name in FILTERS:
            setattr(self, name, "")
        self.before = 0
        await self._filtered()
