"""Small factories and a signing client for tests."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import Engine

from api.core.crypto import SecretBox, sign_request
from api.core.db import write_session
from api.services import games
from api.services.games import IssuedCredential
from models import PlatformUser, PlatformUserIdentifier


def make_game(engine: Engine, box: SecretBox, name: str = "Arena") -> IssuedCredential:
    with write_session(engine) as session:
        return games.create_game(session=session, box=box, name=name)


def make_platform_user(engine: Engine, **verified: str) -> str:
    """A platform user, with verified identifiers given as kind=value."""
    with write_session(engine) as session:
        user = PlatformUser()
        session.add(user)
        session.flush()
        for kind, value in verified.items():
            session.add(
                PlatformUserIdentifier(platform_user_id=user.id, kind=kind, value_normalized=value)
            )
        return user.id


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_now(offset_seconds: float = 0) -> str:
    from datetime import UTC, datetime, timedelta

    moment = datetime.now(UTC) + timedelta(seconds=offset_seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SignedClient:
    """Sends requests signed the way the official clients sign them."""

    def __init__(self, client: TestClient, credential: IssuedCredential):
        self.client = client
        self.credential = credential

    def headers(
        self,
        body: bytes,
        *,
        timestamp: int | None = None,
        secret: str | None = None,
        client_id: str | None = None,
    ) -> dict[str, str]:
        ts = str(timestamp if timestamp is not None else now_ms())
        cid = client_id or self.credential.client_id
        signature = sign_request(secret or self.credential.client_secret, cid, ts, body)
        return {
            "x-client-id": cid,
            "x-timestamp": ts,
            "x-signature": signature,
            "content-type": "application/json",
        }

    def post_raw(self, path: str, body: bytes, **kwargs: Any) -> Response:
        extra = kwargs.pop("extra_headers", {})
        headers = {**self.headers(body, **kwargs), **extra}
        return self.client.post(path, content=body, headers=headers)

    def send(
        self, payload: dict[str, Any], *, path: str = "/v2/custom-events", **kwargs: Any
    ) -> Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        return self.post_raw(path, body, **kwargs)

    def events(
        self,
        *events: dict[str, Any],
        identifiers: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> Response:
        payload = {
            "gameId": self.credential.game_id,
            "events": list(events),
            "identifiers": identifiers or [],
        }
        return self.send(payload, **kwargs)

    def identifiers(self, *items: dict[str, Any], **kwargs: Any) -> Response:
        return self.send({"gameId": self.credential.game_id, "identifiers": list(items)}, **kwargs)
