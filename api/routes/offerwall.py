"""GET /offerwall/offers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response

from api.deps import BoxDep, EngineDep, SettingsDep
from api.routes.blocking import run_db
from api.routes.docs import error_responses
from api.services.offer_listing import approved_offerwall, list_offers, parse_page

router = APIRouter(tags=["offerwall"])

# The OpenAPI description; the rules themselves are in docs/contract.md#offers-listing.
OFFERS_DESCRIPTION = (
    "Standalone missions and quests, newest first; `total` counts both and a page cuts "
    "across the combined list. Only active, unexpired, uncapped offers. `payout` is in the "
    "offerwall's currency; `trackingLink` carries its owid. `limit` defaults to 20 and is "
    "clamped to 100 (the envelope reports the value used); `offset` defaults to 0 and is "
    "at most 2147483647. A negative, non-integer or larger value is 400 `invalid_parameter`."
)


@router.get(
    "/offerwall/offers",
    summary="List offers (missions and quests)",
    description=OFFERS_DESCRIPTION,
    responses=error_responses(400, 401, 403),
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
) -> Response:
    page = parse_page(limit, offset)

    def work() -> bytes:
        with engine.connect() as conn:
            wall = approved_offerwall(conn=conn, box=box, api_key=x_api_key)
            return list_offers(conn=conn, offerwall=wall, page=page, base_url=settings.base_url)

    return Response(await run_db(engine, work), media_type="application/json")
