"""Staff's Audit log: every event of the trail, narrowed by the filters, with export links
to the API's download (which records each export)."""

from __future__ import annotations

from urllib.parse import urlencode

import reflex as rx

from api import audit
from models import Role
from portal.audit.event_list import EventList, Read, read
from portal.state.auth import AuthState, refusals
from portal.state.reauth import Reauth

# The API's export route (api/routes/staff_audit.py), which the export links download.
EXPORT_PATH = "/staff/audit/export"
# The Audit log's filter inputs, and the export route's parameter of each.
FILTERS = ("actor", "action", "target", "since", "until")


class AuditLogState(Reauth, EventList, AuthState):
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
    async def export(self, shape: str):
        """Download the events the filters match (csv or jsonl): behind the password, like
        every sensitive action (the export route checks it again, and records the export)."""
        if shape not in audit.FORMATS:
            return None
        await self._run_confirmed(lambda session, account: None, Role.STAFF)
        query = "&".join(q for q in (f"format={shape}", self.export_query) if q)
        return rx.download(url=f"{EXPORT_PATH}?{query}")

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
