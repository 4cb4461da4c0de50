"""POST /v2/platform-users/lookup: a game's user ids → platform user ids (docs/contract.md#lookup)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session
from api.core.errors import ApiError, json_object, validation_failed
from api.core.ratelimit import RateLimiter
from api.ingest.signing import SignedMessage, authenticate
from models.schemas import NUL
from models.tables import game_user as _game_user

MAX_IDS = 1000


def parse_lookup(body: bytes) -> tuple[str, list[str]]:
    """The gameId and user ids of a lookup body, or the error to answer with."""
    data, problems = json_object(body, known=frozenset({"gameId", "userIds"}))
    game_id, user_ids = data.get("gameId"), data.get("userIds")
    if not isinstance(game_id, str) or not game_id:
        problems.append({"path": "gameId", "message": "required, a non-empty string"})
    if not isinstance(user_ids, list) or not 1 <= len(user_ids) <= MAX_IDS:
        problems.append(
            {"path": "userIds", "message": f"required, an array of 1 to {MAX_IDS} strings"}
        )
    else:
        problems += [
            {
                "path": f"userIds.{i}",
                "message": "must be a string of 1 to 128 characters, without NUL",
            }
            for i, u in enumerate(user_ids)
            if not isinstance(u, str) or not 1 <= len(u) <= 128 or NUL in u
        ][:20]
    if problems:
        raise validation_failed("The lookup request is invalid.", problems)
    return game_id, user_ids  # type: ignore[return-value]


def lookup_platform_users(
    *,
    engine: Engine,
    box: SecretBox,
    settings: Settings,
    request: SignedMessage,
    limiter: RateLimiter | None = None,
) -> dict[str, Any]:
    """Authenticate, then map every submitted user id to its platform user id or None."""
    game_id, user_ids, body_error = _parse_kept(request.body)
    with new_session(engine) as session:
        authenticate(
            session,
            box=box,
            request=request,
            game_id=game_id,
            window_seconds=settings.signature_window_seconds,
            limiter=limiter,
            body_error=body_error,
        )
        wanted = list(dict.fromkeys(user_ids))
        rows = session.execute(
            sa.select(_game_user.c.user_id, _game_user.c.platform_user_id).where(
                _game_user.c.game_id == game_id, _game_user.c.user_id.in_(wanted)
            )
        ).all()
    found = {row.user_id: row.platform_user_id for row in rows}
    return {
        "message": "OK",
        "statusCode": 200,
        "platformUserIds": {user_id: found.get(user_id) for user_id in wanted},
    }


def _parse_kept(body: bytes) -> tuple[str | None, list[str], ApiError | None]:
    # The error is kept, not raised: an unauthenticated caller learns only invalid_signature.
    try:
        game_id, user_ids = parse_lookup(body)
    except ApiError as exc:
        return None, [], exc
    return game_id, user_ids, None
