"""POST /v2/custom-events."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Header, Request

from api.deps import BoxDep, EngineDep, SettingsDep
from api.responses import OrjsonResponse
from api.routes.blocking import run_db
from api.routes.body import read_limited_body
from api.routes.docs import SIGNED_HEADERS_DOC, error_responses, request_body
from api.services import activity
from api.services.ingestion import parse_batch, store_batch
from api.services.signing import SignedRequest
from models.schemas import CustomEventsRequest, CustomEventsResponse

router = APIRouter(tags=["ingestion"])


@router.post(
    "/v2/custom-events",
    summary="Send identifiers and events",
    description=(
        "Create, update or remove a game's user identifiers and record game events. "
        + SIGNED_HEADERS_DOC
        + " Valid items are stored and invalid ones reported: 200 when all are valid, "
        "207 when some are, 422 when none is (nothing stored)."
    ),
    response_model=CustomEventsResponse,
    responses={
        207: {"model": CustomEventsResponse, "description": "Some items were rejected."},
        **error_responses(400, 401, 403, 409, 413, 422, 429),
    },
    openapi_extra=request_body(CustomEventsRequest),
)
async def custom_events(
    request: Request,
    engine: EngineDep,
    box: BoxDep,
    settings: SettingsDep,
    x_client_id: Annotated[
        str | None, Header(description="Client id of a game credential.")
    ] = None,
    x_timestamp: Annotated[str | None, Header(description="Unix time in milliseconds.")] = None,
    x_signature: Annotated[
        str | None, Header(description="hex HMAC-SHA256(secret, clientId + timestamp + body)")
    ] = None,
    idempotency_key: Annotated[
        str | None, Header(description="Optional: a retry with the same key gets the first answer.")
    ] = None,
) -> OrjsonResponse:
    body = await read_limited_body(request, settings.max_body_bytes)
    # Parsing and validation are pure CPU: they run here, on the event loop.
    parsed = parse_batch(body=body, settings=settings)
    signed = SignedRequest(x_client_id, x_timestamp, x_signature, body)
    work = partial(
        store_batch,
        engine=engine,
        box=box,
        settings=settings,
        request=signed,
        parsed=parsed,
        idempotency_key=idempotency_key,
        limiter=request.app.state.ingest_limiter,
    )
    outcome = await run_db(engine, work)
    if parsed.game_id and outcome.status in (200, 207, 422):
        activity.touch(parsed.game_id)  # the portal's live debugger looks again
    return OrjsonResponse(outcome.body, status_code=outcome.status, headers=outcome.headers)
