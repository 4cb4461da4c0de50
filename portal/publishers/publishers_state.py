"""Staff's Publishers page: the publishers by status, approval (with the offerwall's owid
and API key), rejection with a reason, suspension and reinstatement. (A publisher's own
workspace is portal/state/workspace.py.)"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.publishers import OfferwallError, offerwalls, staff_queue
from models import Offerwall, Role
from portal.backend import box
from portal.components.formatting import exact
from portal.state.auth import AuthState, refusals
from portal.state.paging import Paged

STATUSES = ["pending", "approved", "rejected", "suspended"]
Change = Callable[[Session, Offerwall], object]
# The lifecycle steps staff take with one click: the service call and what it did.
STEPS: dict[str, tuple[Change, str]] = {
    "approve": (
        lambda s, o: offerwalls.approve(session=s, box=box(), offerwall=o),
        "is approved: its offerwall id and API key are issued",
    ),
    "suspend": (
        lambda s, o: offerwalls.suspend(session=s, offerwall=o),
        "is suspended: its API key stops working now",
    ),
    "reinstate": (
        lambda s, o: offerwalls.reinstate(session=s, offerwall=o),
        "is reinstated",
    ),
}


@dataclass(frozen=True)
class PublisherLine:
    """A publisher as staff's list shows it (`staff_queue.PublisherRow` with its moment
    written)."""

    id: str
    company: str
    website: str
    contact: str
    email: str
    status: str
    owid: str
    created_at: str
    rejection_reason: str


def publisher_line(row: staff_queue.PublisherRow) -> PublisherLine:
    return PublisherLine(
        id=row.id,
        company=row.company,
        website=row.website,
        contact=row.contact,
        email=row.email,
        status=row.status,
        owid=row.owid,
        created_at=exact(row.created_at),
        rejection_reason=row.rejection_reason,
    )


class StaffState(Paged, AuthState):
    rows: list[PublisherLine] = []
    counts: dict[str, int] = {}
    status_filter: str = "pending"
    # The publisher in the reject dialog.
    rejecting_id: str = ""
    rejecting_company: str = ""
    reject_error: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self._status_from_query()
        return await self._load_page(Role.STAFF)

    async def _fetch(self) -> None:
        status, search, page = self.status_filter, self.search, self.page

        def work(session: Session, _a: Account):
            found = staff_queue.list_publishers(
                session=session, status=status, search=search, page=page
            )
            return found, staff_queue.status_counts(session=session)

        found, counts = await self._run(work, Role.STAFF)
        self._show(found, publisher_line)
        self.counts = {s: counts.get(s, 0) for s in STATUSES}

    async def _act(
        self, offerwall_id: str, change: Callable[[Session, Offerwall], object], done: str
    ):
        def work(session: Session, _a: Account) -> str:
            offerwall = session.get(Offerwall, offerwall_id)
            if offerwall is None:
                raise OfferwallError("No such publisher.")
            change(session, offerwall)
            return offerwall.name

        company = await self._run(work, Role.STAFF, write=True)
        await self._fetch()
        return rx.toast.success(f"{company} {done}.")

    @rx.event
    @refusals()
    async def approve(self, offerwall_id: str):
        return await self._act(offerwall_id, *STEPS["approve"])

    @rx.event
    @refusals()
    async def suspend(self, offerwall_id: str):
        return await self._act(offerwall_id, *STEPS["suspend"])

    @rx.event
    @refusals()
    async def reinstate(self, offerwall_id: str):
        return await self._act(offerwall_id, *STEPS["reinstate"])

    @rx.event
    def start_reject(self, offerwall_id: str, company: str):
        self.rejecting_id, self.rejecting_company, self.reject_error = offerwall_id, company, ""

    @rx.event
    def cancel_reject(self):
        self.rejecting_id = ""

    @rx.event
    @refusals()
    async def reject(self, form: dict[str, str]):
        reason = form.get("reason", "")
        # The service refuses the same reason; checking first keeps the dialog open with
        # the message beside the field.
        problem = offerwalls.rejection_reason_problem(reason)
        if problem is not None:
            self.reject_error = problem
            return None
        offerwall_id, self.rejecting_id = self.rejecting_id, ""
        return await self._act(
            offerwall_id,
            lambda s, o: offerwalls.reject(session=s, offerwall=o, reason=reason),
            "is rejected",
        )
