"""The signed request a route checks: its three signing headers and its raw body.

Both signed routes take it as a dependency, so the headers are read and documented
in one place, and the body is read once, with its size limit, before any other work.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from api.deps import SettingsDep
from api.routes.body import read_limited_body
from api.services.signing import SignedMessage


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
) -> SignedMessage:
    """The signing headers as sent (checked later, by `signing.authenticate`) and the body."""
    body = await read_limited_body(request, settings.max_body_bytes)
    return SignedMessage(x_client_id, x_timestamp, x_signature, body)


SignedMessageDep = Annotated[SignedMessage, Depends(read_signed_message)]
