"""An offer as a publisher's player sees it, for the mission and quest editors: the card
(thumbnail, name, description, payout, instructions, requirements, expiry) and the record
the offers API returns for it (`GET /offerwall/offers`), rendered by the listing's own code
with the server's `BASE_URL` in the tracking link. Payouts are in USD millionths here (the
editors write them for people); each offerwall sees its own currency and its own owid."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from api.listing.offers import ListingOfferwall, mission_doc, mission_goal, quest_doc, render_offer
from models import Mission, Quest
from models.types import utcnow

# Stands for the offerwall that lists the offer: USD, two decimals, its owid unknown here.
PREVIEW_OFFERWALL = ListingOfferwall(
    owid="<owid>", exchange_rate=1.0, currency_decimals=2, catalog_version=0
)


@dataclass(frozen=True)
class PreviewMission:
    title: str
    payout_micros: int


@dataclass(frozen=True)
class OfferPreview:
    kind: str  # "mission" | "quest"
    title: str
    description: str
    thumbnail: str
    payout_micros: int  # USD millionths; a quest's is its missions' together
    instructions: str
    requirements: str
    expires: str  # "Ends on 31 Jan 2027", "Ended on …", or ""
    tracking_link: str
    json: str  # the offers API's record, indented
    missions: list[PreviewMission] = field(default_factory=list)


def offer_preview(
    offer: Mission | Quest,
    missions: Sequence[Mission] = (),
    *,
    base_url: str,
    now: datetime | None = None,
) -> OfferPreview:
    """The preview of a stored mission, or of a quest with its missions (in order)."""
    if isinstance(offer, Mission):
        kind, title, doc = "mission", offer.title, mission_doc(offer, mission_goal(offer), now)
        micros = offer.payout_micros
    else:
        goals = {m.id: mission_goal(m) for m in missions}
        kind, title, doc = "quest", offer.name, quest_doc(offer, list(missions), goals, now)
        micros = sum(m.payout_micros for m in missions)
    record = render_offer(kind, offer.id, doc, PREVIEW_OFFERWALL, base_url)
    return OfferPreview(
        kind=kind,
        title=title,
        description=offer.description or "",
        thumbnail=offer.thumbnail,
        payout_micros=micros,
        instructions=offer.instructions,
        requirements=offer.requirements,
        expires=_expiry(offer.expiration_date, now or utcnow()),
        tracking_link=record["trackingLink"],
        json=json.dumps(record, indent=2, ensure_ascii=False),
        missions=[PreviewMission(m.title, m.payout_micros) for m in missions],
    )


def _expiry(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return ""
    day = f"{moment.day} {moment:%b %Y}"
    return f"Ended on {day}" if moment <= now else f"Ends on {day}"
