"""The publisher's offer catalog: what their offerwall lists, with ready tracking links."""

from __future__ import annotations

from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.listing import catalog
from models import Role
from models.types import utcnow
from portal.backend import settings
from portal.components.formatting import money, usd, when
from portal.state.auth import refusals
from portal.state.workspace import OfferwallScoped


@dataclass(frozen=True)
class CatalogCard:
    """`catalog.CatalogOffer` as the page shows it: its payout and expiry written."""

    id: str
    kind: str  # "mission" or "quest"
    name: str
    thumbnail: str
    payout: str  # "51 GEM": in the offerwall's currency
    payout_usd: str  # "$0.51"
    caps_left: str
    expires: str  # "Ends 2026-01-05 14:03 UTC", or "No end date"
    targeting: str
    tracking_link: str
    missions: int  # a quest's open missions (0 for a mission)


def catalog_card(offer: catalog.CatalogOffer) -> CatalogCard:
    return CatalogCard(
        id=offer.id,
        kind=offer.kind,
        name=offer.name,
        thumbnail=offer.thumbnail,
        payout=money(offer.payout, decimals=offer.currency_decimals, code=offer.currency_code),
        payout_usd=usd(offer.payout_micros),
        caps_left=offer.caps_left,
        expires="Ends " + when(offer.expires_at) if offer.expires_at else "No end date",
        targeting=offer.targeting,
        tracking_link=offer.tracking_link,
        missions=offer.missions,
    )


class CatalogState(OfferwallScoped):
    offers: list[CatalogCard] = []
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

        def work(session: Session, account: Account) -> list[catalog.CatalogOffer]:
            return catalog.offer_catalog(
                session=session,
                account=account,
                requested=requested,
                base_url=base,
                now=utcnow(),
                search=search,
            )

        found = await self._run(work, Role.PUBLISHER, Role.STAFF)
        self.offers = [catalog_card(offer) for offer in found]

    @rx.event
    @refusals()
    async def find(self, form: dict[str, str]):
        self.search = form.get("search", "")
        await self._fetch()
