"""GET /offerwall/offers and GET /offerwall/users/{uid}/progress."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response

from api.deps import BoxDep, EngineDep, SettingsDep
from api.listing import (
    SORTS,
    approved_offerwall,
    list_for_player,
    list_offers,
    parse_filters,
    parse_page,
    parse_uid,
    progress_document,
)
from api.routes.blocking import run_db
from api.routes.docs import API_KEY_DESCRIBED, error_responses
from models.offer_schemas import OPERATING_SYSTEMS
from models.types import utcnow

router = APIRouter(tags=["offerwall"])

# The OpenAPI description; the rules themselves are in docs/contract.md#offers-listing.
OFFERS_DESCRIPTION = (
    "Standalone missions and quests, newest first; `total` counts both and a page cuts "
    "across the combined list. Only active, unexpired, uncapped offers. `payout` is in the "
    "offerwall's currency, whose 3-letter code every mission's `currency` gives; "
    "`trackingLink` carries its owid. `limit` defaults to 20 and is clamped to 100 (the "
    "envelope reports the value used); `offset` defaults to 0 and is at most 2147483647. "
    "A negative, non-integer or larger value is 400 `invalid_parameter`.\n\n"
    "Filters narrow the list and `total` counts what is left: `country` (the offer's "
    "geotargeting lets that country in), `os` (the offer runs there), `tag` (any of "
    "comma-separated tags), `minPayout` (in the offerwall's currency; a quest's payout is "
    "its missions' together), `sort` (`newest`, the default, or `payout`, highest first). "
    "With `uid` the list narrows to what that player can still do, each offer carries a "
    "`progress` object and its `trackingLink` the uid."
)


@router.get(
    "/offerwall/offers",
    summary="List offers (missions and quests)",
    description=OFFERS_DESCRIPTION,
    responses=error_responses(400, 401, 403, 503, described=API_KEY_DESCRIBED),
)
async def offers(
    engine: EngineDep,
    box: BoxDep,
    settings: SettingsDep,
    x_api_key: Annotated[str | None, Header(description="The offerwall's API key.")] = None,
    limit: Annotated[str | None, Query(description="Page size, 0-100 (default 20).")] = None,
    offset: Annotated[
        str | None, Query(description="Offers to skip, 0-2147483647 (default 0).")
    ] = None,
    country: Annotated[
        str | None, Query(description="Two-letter country code (ISO 3166-1), e.g. `DE`.")
    ] = None,
    os: Annotated[str | None, Query(description=f"One of {', '.join(OPERATING_SYSTEMS)}.")] = None,
    tag: Annotated[str | None, Query(description="Tags, comma-separated: any of them.")] = None,
    min_payout: Annotated[
        str | None,
        Query(alias="minPayout", description="Lowest payout, in the offerwall's currency."),
    ] = None,
    sort: Annotated[str | None, Query(description=f"One of {', '.join(SORTS)}.")] = None,
    uid: Annotated[
        str | None, Query(description="A player: only what they can still do, with progress.")
    ] = None,
) -> Response:
    page = parse_page(limit, offset)
    filters = parse_filters(country=country, os=os, tag=tag, min_payout=min_payout, sort=sort)
    player = parse_uid(uid)

    def work() -> bytes:
        with engine.connect() as conn:
            wall = approved_offerwall(conn=conn, box=box, api_key=x_api_key)
            if player is None and not filters.narrows and filters.sort == "newest":
                return list_offers(conn=conn, offerwall=wall, page=page, base_url=settings.base_url)
            return list_for_player(
                conn=conn,
                offerwall=wall,
                page=page,
                base_url=settings.base_url,
                filters=filters,
                uid=player,
                now=utcnow(),
            )

    return Response(await run_db(engine, work), media_type="application/json")


@router.get(
    "/offerwall/users/{uid}/progress",
    summary="One player's offers, with state and counts",
    description=(
        "Every offer the player opened through a tracking link, oldest first: for a mission "
        "its state (`started`, `completed`, `expired`, `ended`), the rule's `current` count "
        "against its `target`, the percentage and conversions so far; for a quest the same "
        "per mission and `missionsCompleted` of `missionsTotal`. `available` tells whether "
        "the player can still do it. `counts` has how many offers are in each state. An "
        "unknown uid has opened nothing: empty lists."
    ),
    responses=error_responses(
        400,
        401,
        403,
        503,
        described={**API_KEY_DESCRIBED, 400: "`invalid_parameter`: the uid is not valid."},
    ),
)
async def player_progress(
    uid: str,
    engine: EngineDep,
    box: BoxDep,
    x_api_key: Annotated[str | None, Header(description="The offerwall's API key.")] = None,
) -> Response:
    player = parse_uid(uid) or ""

    def work() -> bytes:
        with engine.connect() as conn:
            wall = approved_offerwall(conn=conn, box=box, api_key=x_api_key)
            return progress_document(conn=conn, offerwall=wall, uid=player, now=utcnow())

    return Response(await run_db(engine, work), media_type="application/json")
