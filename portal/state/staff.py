"""Staff: the publishers by status, approval (with the offerwall's owid and API key),
rejection with a reason, suspension and reinstatement."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.services import offerwalls, publishers
from api.services.access import Account, Forbidden
from api.services.offerwalls import OfferwallError
from models import Offerwall, Role
from portal.backend import box
from portal.state.auth import AuthState

STATUSES = ["pending", "approved", "rejected", "suspended"]


class StaffState(AuthState):
    rows: list[publishers.PublisherRow] = []
    counts: dict[str, int] = {}
    total: int = 0
    page: int = 1
    pages: int = 1
    status_filter: str = "pending"
    search: str = ""
    # The publisher in the reject dialog.
    rejecting_id: str = ""
    rejecting_company: str = ""
    reject_error: str = ""

    @rx.event
    async def load(self):
        guard = await self._guard(Role.STAFF)
        if guard is not None:
            return guard
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        status, search, page = self.status_filter, self.search, self.page

        def work(session: Session, _a: Account):
            found = publishers.list_publishers(
                session=session, status=status, search=search, page=page
            )
            return found, publishers.status_counts(session=session)

        found, counts = await self._run(work, Role.STAFF)
        self.rows, self.total, self.page, self.pages = (
            found.rows,
            found.total,
            found.page,
            found.pages,
        )
        self.counts = {s: counts.get(s, 0) for s in STATUSES}

    @rx.event
    async def filter_status(self, status: str | list[str]):
        chosen = status if isinstance(status, str) else (status[0] if status else "all")
        self.status_filter = "" if chosen == "all" else chosen
        self.page = 1
        await self._fetch()

    @rx.event
    async def find(self, form: dict[str, str]):
        self.search, self.page = form.get("search", ""), 1
        await self._fetch()

    @rx.event
    async def go(self, page: int):
        self.page = page
        await self._fetch()

    async def _act(self, offerwall_id: str, change, done: str):
        def work(session: Session, _a: Account) -> str:
            offerwall = session.get(Offerwall, offerwall_id)
            if offerwall is None:
                raise OfferwallError("No such publisher.")
            change(session, offerwall)
            return offerwall.name

        try:
            company = await self._run(work, Role.STAFF, write=True)
        except (Forbidden, OfferwallError) as exc:
            return rx.toast.error(str(exc))
        await self._fetch()
        return rx.toast.success(f"{company} {done}.")

    @rx.event
    async def approve(self, offerwall_id: str):
        return await self._act(
            offerwall_id,
            lambda s, o: offerwalls.approve(session=s, box=box(), offerwall=o),
            "is approved: its offerwall id and API key are issued",
        )

    @rx.event
    async def suspend(self, offerwall_id: str):
        return await self._act(
            offerwall_id,
            lambda s, o: offerwalls.suspend(session=s, offerwall=o),
            "is suspended: its API key stops working now",
        )

    @rx.event
    async def reinstate(self, offerwall_id: str):
        return await self._act(
            offerwall_id,
            lambda s, o: offerwalls.reinstate(session=s, offerwall=o),
            "is reinstated",
        )

    @rx.event
    def start_reject(self, offerwall_id: str, company: str):
        self.rejecting_id, self.rejecting_company, self.reject_error = offerwall_id, company, ""

    @rx.event
    def cancel_reject(self):
        self.rejecting_id = ""

    @rx.event
    async def reject(self, form: dict[str, str]):
        reason = form.get("reason", "")
        # The service refuses the same reason; checking first keeps the dialog open with
        # the message beside the field.
        problem = offerwalls.rejection_reason_problem(reason)
        if problem is not None:
            self.reject_error = problem
            return None
        result = await self._act(
            self.rejecting_id,
            lambda s, o: offerwalls.reject(session=s, offerwall=o, reason=reason),
            "is rejected",
        )
        self.rejecting_id = ""
        return result
