"""GET /offerwall/offers and GET /offerwall/users/{uid}/progress."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response
from sqlalchemy import Engine
from starlette.routing import Route

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.deps import BoxDep, EngineDep, SettingsDep
from api.listing import (
    SORTS,
    approved_offerwall,
    kept_offerwall,
    kept_page,
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


async def offers_route(request: Request) -> Response:
    """GET /offerwall/offers as a plain route, matched before the documented one below:
    FastAPI's parameter solving cost more than a kept page. Same parameters, same answers."""
    state, query = request.app.state, request.query_params
    return await offers_response(
        state.engine,
        state.box,
        state.settings,
        api_key=request.headers.get("x-api-key"),
        limit=query.get("limit"),
        offset=query.get("offset"),
        country=query.get("country"),
        os=query.get("os"),
        tag=query.get("tag"),
        min_payout=query.get("minPayout"),
        sort=query.get("sort"),
        uid=query.get("uid"),
    )


_plain = Route("/offerwall/offers", offers_route, methods=["GET"])
_plain.methods = {"GET"}  # as the documented route: no implicit HEAD
router.routes.append(_plain)


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
    """What the API reference describes; requests are answered by `offers_route`."""
    return await offers_response(
        engine,
        box,
        settings,
        api_key=x_api_key,
        limit=limit,
        offset=offset,
        country=country,
        os=os,
        tag=tag,
        min_payout=min_payout,
        sort=sort,
        uid=uid,
    )


async def offers_response(
    engine: Engine, box: SecretBox, settings: Settings, *, api_key: str | None, **query: str | None
) -> Response:
    """A page of offers. A page rendered before, for a key read before, is answered from
    memory without the database (api/listing/keys.py says how long what is kept holds)."""
    page = parse_page(query["limit"], query["offset"])
    filters = parse_filters(
        country=query["country"],
        os=query["os"],
        tag=query["tag"],
        min_payout=query["min_payout"],
        sort=query["sort"],
    )
    player = parse_uid(query["uid"])
    plain = player is None and not filters.narrows and filters.sort == "newest"
    kept = kept_offerwall(engine, box, api_key)
    if kept is not None and plain:
        body = kept_page(engine, kept, page, settings.base_url)
        if body is not None:
            return Response(body, media_type="application/json")

    def work() -> bytes:
        with engine.connect() as conn:
            wall = approved_offerwall(conn=conn, box=box, api_key=api_key)
            if plain:
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
