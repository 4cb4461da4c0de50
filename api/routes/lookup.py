"""POST /v2/platform-users/lookup."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import BoxDep, EngineDep, LimiterDep, SettingsDep
from api.ingest import lookup_platform_users
from api.responses import OrjsonResponse
from api.routes.blocking import run_db
from api.routes.docs import SIGNED_HEADERS_DOC, error_responses, request_body
from api.routes.signed import SignedMessageDep

router = APIRouter(tags=["lookup"])


class LookupRequest(BaseModel):
    gameId: str = Field(min_length=1)
    userIds: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        min_length=1, max_length=1000, description="A game's user ids, without NUL characters."
    )


class LookupResponse(BaseModel):
    message: str = "OK"
    statusCode: int = 200
    platformUserIds: dict[str, str | None]


@router.post(
    "/v2/platform-users/lookup",
    summary="Map a game's user ids to platform user ids",
    description="Every submitted id is a key of `platformUserIds`; its value is the platform "
    "user's UUID, or null when the user is not linked. " + SIGNED_HEADERS_DOC,
    response_model=LookupResponse,
    responses=error_responses(400, 401, 403, 413, 422, 429, 503),
    openapi_extra=request_body(LookupRequest),
)
async def lookup(
    signed: SignedMessageDep,
    engine: EngineDep,
    box: BoxDep,
    settings: SettingsDep,
    limiter: LimiterDep,
) -> OrjsonResponse:
    work = partial(
        lookup_platform_users,
        engine=engine,
        box=box,
        settings=settings,
        request=signed,
        limiter=limiter,
    )
    return OrjsonResponse(await run_db(engine, work))
