"""The publisher's offer catalog: what their offerwall lists, with ready tracking links."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.accounts.access import Account
from api.listing import catalog as publisher_offers
from models import Role
from models.types import utcnow
from portal.backend import settings
from portal.state.auth import refusals
from portal.state.workspace import OfferwallScoped


class CatalogState(OfferwallScoped):
    offers: list[publisher_offers.CatalogOffer] = []
    search: str = ""

    @rx.event
    @refusals()
    async def load(self):
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        search, base, requested = self.search, settings().base_url, self._requested()

        def work(session: Session, account: Account) -> list[publisher_offers.CatalogOffer]:
            return publisher_offers.offer_catalog(
                session=session,
                account=account,
                requested=requested,
                base_url=base,
                now=utcnow(),
                search=search,
            )

        self.offers = await self._run(work, Role.PUBLISHER, Role.STAFF)

    @rx.event
    @refusals()
    async def find(self, form: dict[str, str]):
        self.search = form.get("search", "")
        await self._fetch()
