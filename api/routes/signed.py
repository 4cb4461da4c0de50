"""The signed request a route checks: its three signing headers and its raw body.

Both signed routes take it as a dependency, so the headers are read and documented
in one place, and the body is read once, with its size limit, before any other work.
A request refused as a whole (any `ApiError` of the route, or a body over the limit) is
recorded for the game's live event debugger (`api/ingest/refused_requests.py`) before it is
answered.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated

from fastapi import Depends, Header, Request

from api.core.errors import ApiError
from api.deps import SettingsDep
from api.ingest import Refusal, RefusalRecorder, SignedMessage
from api.ops import RATE_LIMITED, SIGNED_REFUSED, code_label
from api.routes.blocking import run_db
from api.routes.body import declared_length, read_limited_body

log = logging.getLogger("questwall.api")


async def read_signed_message(
    request: Request,
    settings: SettingsDep,
    x_client_id: Annotated[
        str | None, Header(description="Client id of a game credential.")
    ] = None,
    x_timestamp: Annotated[str | None, Header(description="Unix time in milliseconds.")] = None,
    x_signature: Annotated[
        str | None, Header(description="hex HMAC-SHA256(secret, clientId + timestamp + body)")
    ] = None,
) -> AsyncIterator[SignedMessage]:
    """The signing headers as sent (checked later, by `signing.authenticate`) and the body."""
    limit = settings.max_body_bytes
    try:
        body = await read_limited_body(request, limit)
    except ApiError as error:
        unread = SignedMessage(x_client_id, x_timestamp, x_signature, b"")
        size = declared_length(request.headers.get("content-length")) or 0
        over = size if size > limit else None  # else a stream ran over what it declared
        _count(error)
        await _record(request, Refusal(unread, error, limit, body_read=False, declared_size=over))
        raise
    message = SignedMessage(x_client_id, x_timestamp, x_signature, body)
    try:
        yield message
    except ApiError as error:
        _count(error)
        await _record(request, Refusal(message, error, limit))
        raise


def _count(error: ApiError) -> None:
    SIGNED_REFUSED.labels(reason=code_label(error.code)).inc()
    if error.status == 429:
        RATE_LIMITED.labels(limit="ingest").inc()


async def _record(request: Request, refusal: Refusal) -> None:
    state = request.app.state
    recorder: RefusalRecorder = state.refusals
    try:
        game_id = await run_db(state.engine, partial(recorder.record, state.engine, refusal))
    except Exception as exc:  # the refusal is answered as it is, recorded or not
        # The type only: a database error's text may carry its URL.
        log.warning("a refused signed request was not recorded: %s", type(exc).__name__)
        return
    if game_id is not None and state.on_stored is not None:
        state.on_stored(game_id)  # the live debugger looks again


SignedMessageDep = Annotated[SignedMessage, Depends(read_signed_message)]
