"""What publishers list: `GET /offerwall/offers` (`offers`), one player's side of it
(`players`: filters, progress, what is left to do; the hosted wall uses it too), the
publisher's offer catalog in the portal (`catalog`), and an offer as players see it
(`preview`).
"""

from api.listing.catalog import UID_PLACEHOLDER
from api.listing.keys import approved_offerwall, kept_offerwall
from api.listing.offers import (
    LISTINGS,
    MAX_OFFSET,
    Goal,
    Listed,
    ListingOfferwall,
    for_offerwall,
    invalid_parameter,
    kept_page,
    list_offers,
    parse_page,
    whole_number,
)
from api.listing.players import (
    COMPLETED,
    DOABLE,
    NEW,
    SORTS,
    STARTED,
    ListingIndex,
    MissionState,
    OfferFilters,
    OfferState,
    hidden_offers,
    list_for_player,
    parse_filters,
    parse_uid,
    player_progress,
    progress_document,
    select,
    targets,
)
from api.listing.preview import OfferPreview, offer_preview

__all__ = [
    "COMPLETED",
    "DOABLE",
    "LISTINGS",
    "MAX_OFFSET",
    "NEW",
    "SORTS",
    "STARTED",
    "UID_PLACEHOLDER",
    "Goal",
    "Listed",
    "ListingIndex",
    "ListingOfferwall",
    "MissionState",
    "OfferFilters",
    "OfferPreview",
    "OfferState",
    "approved_offerwall",
    "for_offerwall",
    "hidden_offers",
    "invalid_parameter",
    "kept_offerwall",
    "kept_page",
    "list_for_player",
    "list_offers",
    "offer_preview",
    "parse_filters",
    "parse_page",
    "parse_uid",
    "player_progress",
    "progress_document",
    "select",
    "targets",
    "whole_number",
]
