"""The staff's queue of publishers (the portal's Publishers page): every offerwall with its
publisher's account, newest first, filtered by status and searched (`list_publishers`),
and how many there are in each status (`status_counts`). Acting on one (approve, reject,
suspend, reinstate) is api/publishers/offerwalls.py's; the page's access check is the
caller's (api/accounts/access.py). The rows carry the moment each applied; the portal
writes it (portal/publishers/publishers_state.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from api.core.paging import Window, paged, searched
from models import Offerwall, User


@dataclass(frozen=True)
class PublisherRow:
    id: str
    company: str
    website: str
    contact: str
    email: str
    status: str
    owid: str
    created_at: datetime
    rejection_reason: str


def list_publishers(
    *, session: Session, status: str = "", search: str = "", page: int = 1
) -> Window[PublisherRow]:
    """Publishers newest first, by status and a search over company, email, website, owid."""
    query = sa.select(Offerwall, col(User.email)).outerjoin(
        User, col(User.offerwall_id) == col(Offerwall.id)
    )
    if status:
        query = query.where(col(Offerwall.status) == status)
    query = searched(
        query,
        search,
        col(Offerwall.name),
        col(User.email),
        col(Offerwall.website),
        col(Offerwall.owid),
    )
    rows, total, page, pages = paged(
        session, query.order_by(col(Offerwall.created_at).desc(), col(Offerwall.id)), page
    )
    return Window([_row(o, email) for o, email in rows], total, page, pages)


def status_counts(*, session: Session) -> dict[str, int]:
    counted = session.execute(
        sa.select(col(Offerwall.status), sa.func.count()).group_by(col(Offerwall.status))
    ).all()
    return {status: count for status, count in counted}


def _row(offerwall: Offerwall, email: str | None) -> PublisherRow:
    return PublisherRow(
        id=offerwall.id,
        company=offerwall.name,
        website=offerwall.website or "",
        contact=offerwall.contact_name or "",
        email=email or "",
        status=offerwall.status,
        owid=offerwall.owid or "",
        created_at=offerwall.created_at,
        rejection_reason=offerwall.rejection_reason or "",
    )
