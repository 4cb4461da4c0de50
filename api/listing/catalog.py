"""A publisher's offer catalog in the portal: every offer their offerwall can list, as
`GET /offerwall/offers` selects them (`offers.build_listing`), with payouts in the
offerwall's currency (rounded as its postbacks round), what is left of each cap, the
expiry, the targeting and a tracking link ready to copy. The portal writes the amounts
and the expiry for people."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import Account, offerwall_for
from api.economics import NO_RULES, payout_rules
from api.listing.offers import Listed, Pricing, build_listing
from api.publishers import OfferwallError
from models import Mission, Offerwall, Quest

# What a publisher puts in place of their user's id in a tracking link.
UID_PLACEHOLDER = "{uid}"


@dataclass(frozen=True)
class CatalogOffer:
    id: str
    kind: str  # "mission" or "quest"
    name: str
    thumbnail: str
    payout: Decimal  # in the offerwall's currency; a quest's is its missions' together
    currency_code: str
    currency_decimals: int
    payout_micros: int  # in millionths of a USD
    caps_left: str
    expires_at: datetime | None  # None: no end date
    targeting: str
    tracking_link: str  # with UID_PLACEHOLDER where the user's id goes
    missions: int  # a quest's open missions (0 for a mission)


def offer_catalog(
    *,
    session: Session,
    account: Account,
    base_url: str,
    now: datetime,
    requested: str = "",
    search: str = "",
) -> list[CatalogOffer]:
    """The offers the account's offerwall (staff: the requested one) can list now, newest
    first, those whose name, description or tags contain `search` (any case)."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    if not offerwall.owid:
        raise OfferwallError("This offerwall lists offers once it is approved.")
    listing, _ = build_listing(session, now)
    needle = search.strip().lower()
    chosen = [o for o in listing if not needle or needle in _searchable(o.doc)]
    used = _used(session, chosen)
    # The payouts agreed with this offerwall (its rules; no country, no promotion).
    rules = payout_rules.load(session.connection(), [offerwall.id]).get(offerwall.id, NO_RULES)
    pricing = Pricing(
        offerwall.exchange_rate,
        offerwall.currency_decimals,
        offerwall.currency_code,
        rules,
        offerwall_id=offerwall.id,
    )
    return [_offer(o, offerwall, pricing, base_url, used) for o in chosen]


def _searchable(doc: dict[str, Any]) -> str:
    words = [doc.get("title") or doc.get("name") or "", doc.get("description") or ""]
    return " ".join([*words, *doc.get("tags", [])]).lower()


def _used(session: Session, offers: list[Listed]) -> dict[str, int]:
    """Conversions of each mission and starts of each quest so far, for caps left."""
    missions = [o.id for o in offers if o.kind == "mission"]
    quests = [o.id for o in offers if o.kind == "quest"]
    used: dict[str, int] = {}
    if missions:
        found = session.execute(
            sa.select(col(Mission.id), col(Mission.conversions)).where(
                col(Mission.id).in_(missions)
            )
        )
        used.update({i: int(n) for i, n in found.all()})
    if quests:
        found = session.execute(
            sa.select(col(Quest.id), col(Quest.starts)).where(col(Quest.id).in_(quests))
        )
        used.update({i: int(n) for i, n in found.all()})
    return used


def _offer(
    offer: Listed, wall: Offerwall, pricing: Pricing, base_url: str, used: dict[str, int]
) -> CatalogOffer:
    doc = offer.doc
    quest = offer.kind == "quest"
    payouts = [pricing.usd(g.mission_id, g.payout_micros, g.terms) for g in offer.goals]
    # Each payout as its postback would carry it, then added up.
    payout = sum((pricing.amount(m, boosted=False) for m in payouts), Decimal(0))
    cap = doc.get("startCap") if quest else doc.get("cap")
    unit = "start" if quest else "conversion"
    if cap is None:
        caps_left = "No cap"
    else:
        left = max(cap - used.get(offer.id, 0), 0)
        caps_left = f"{left:,} of {cap:,} {unit}s left"
    caps_left = " · ".join([caps_left, *_live_caps(doc)])
    link = f"{base_url}/{offer.kind}s/{offer.id}?owid={wall.owid}&uid={UID_PLACEHOLDER}"
    return CatalogOffer(
        id=offer.id,
        kind=offer.kind,
        name=doc["name"] if quest else doc["title"],
        thumbnail=doc.get("thumbnail") or "",
        payout=payout,
        currency_code=wall.currency_code,
        currency_decimals=wall.currency_decimals,
        payout_micros=sum(payouts),
        caps_left=caps_left,
        expires_at=_expiry(doc.get("expirationDate")),
        targeting=_targeting(doc),
        tracking_link=link,
        missions=len(doc["missions"]) if quest else 0,
    )


def _live_caps(doc: dict[str, Any]) -> list[str]:
    """A mission's caps per period and per offerwall, in words: "500 a day"."""
    words = []
    for every, limit in (doc.get("periodCaps") or {}).items():
        if every in ("day", "week", "month") and limit:
            words.append(f"{limit:,} a {every}")
    if doc.get("capPerOfferwall"):
        words.append(f"{doc['capPerOfferwall']:,} per offerwall")
    return words


def _expiry(iso: str | None) -> datetime | None:
    if not iso:
        return None
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def _targeting(doc: dict[str, Any]) -> str:
    systems = ", ".join(doc.get("operatingSystem") or []) or "Every device"
    geo = doc.get("geotargeting") or {}
    include, exclude = geo.get("countriesInclude") or [], geo.get("countriesExclude") or []
    if include:
        countries = ", ".join(include)
    elif exclude:
        countries = "Every country but " + ", ".join(exclude)
    else:
        countries = "Every country"
    return f"{systems} · {countries}"
