"""POST /v2/custom-events."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Header, Request

from api.deps import BoxDep, EngineDep, LimiterDep, SettingsDep
from api.ingest import (
    BatchArgs,
    check_batch,
    parse_batch,
    store_batch,
    write_grouped,
)
from api.ops import INGEST_ITEMS, code_label
from api.responses import OrjsonResponse
from api.routes.blocking import run_db
from api.routes.docs import SIGNED_HEADERS_DOC, error_responses, request_body
from api.routes.signed import SignedMessageDep
from models.schemas import CustomEventsRequest, CustomEventsResponse

router = APIRouter(tags=["ingestion"])


def count_items(status: int, body: dict) -> None:
    """questwall_ingest_items_total: a batch's items, accepted and refused by code."""
    if status not in (200, 207, 422):
        return
    accepted = body.get("accepted") or {}
    for kind, key in (("identifier", "identifiers"), ("event", "events")):
        if accepted.get(key):
            INGEST_ITEMS.labels(kind=kind, outcome="accepted").inc(accepted[key])
    for item in body.get("rejected") or ():
        kind = item.get("kind") if item.get("kind") in ("identifier", "event") else "other"
        INGEST_ITEMS.labels(kind=kind, outcome=code_label(item.get("code"))).inc()


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
        **error_responses(400, 401, 403, 409, 413, 422, 429, 503),
    },
    openapi_extra=request_body(CustomEventsRequest),
)
async def custom_events(
    request: Request,
    signed: SignedMessageDep,
    engine: EngineDep,
    box: BoxDep,
    settings: SettingsDep,
    limiter: LimiterDep,
    idempotency_key: Annotated[
        str | None, Header(description="Optional: a retry with the same key gets the first answer.")
    ] = None,
) -> OrjsonResponse:
    # Parsing and validation are pure CPU: they run here, on the event loop.
    parsed = parse_batch(body=signed.body, settings=settings, countries=request.app.state.countries)
    args: BatchArgs = {
        "engine": engine,
        "box": box,
        "settings": settings,
        "request": signed,
        "parsed": parsed,
        "idempotency_key": idempotency_key,
        "limiter": limiter,
    }
    if engine.dialect.name == "sqlite":
        # SQLite work runs on the event loop (api/routes/blocking.py): the batches that
        # arrive together share one commit.
        outcome = await write_grouped(engine, settings, check_batch(**args))
    else:
        outcome = await run_db(engine, partial(store_batch, **args))
    count_items(outcome.status, outcome.body)
    on_stored = request.app.state.on_stored
    if on_stored is not None and parsed.game_id and outcome.status in (200, 207, 422):
        on_stored(parsed.game_id)  # e.g. the portal's live debugger looks again
    return OrjsonResponse(outcome.body, status_code=outcome.status, headers=outcome.headers)
