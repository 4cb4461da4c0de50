"""The signed-caller check itself (`signing.authenticate`), without HTTP: what it
returns, the clock it judges the window by, and the order of its refusals (SQLite and
PostgreSQL). The same check over both signed routes is in `tests/api/ingest/test_signed_caller.py`."""

from __future__ import annotations

import pytest

from api.core.db import new_session
from api.core.errors import ApiError
from api.core.ratelimit import RateLimiter
from api.ingest.signing import SignedMessage, authenticate
from tests.factories import SignedClient, make_game, now_ms


@pytest.fixture
def game(engine, box):
    return make_game(engine, box)


def _request(game, body: bytes, timestamp: int) -> SignedMessage:
    headers = SignedClient(None, game).headers(body, timestamp=timestamp)  # type: ignore[arg-type]
    return SignedMessage(
        headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
    )


def _authenticate(engine, box, request: SignedMessage, **kwargs):
    """`authenticate` in a session of its own, with a 300 s window."""
    with new_session(engine) as session:
        return authenticate(session, box=box, request=request, window_seconds=300, **kwargs)


def test_authenticate_returns_the_caller_and_its_game(engine, box, game):
    request = _request(game, b"{}", timestamp=1_000_000)
    caller = _authenticate(engine, box, request, game_id=game.game_id, now_ms=1_000_000 + 300_000)
    assert (caller.client_id, caller.game_id) == (game.client_id, game.game_id)
    assert caller.signature == request.signature


def test_authenticate_judges_the_window_by_the_given_clock(engine, box, game):
    request = _request(game, b"{}", timestamp=1_000_000)
    with pytest.raises(ApiError) as raised:
        _authenticate(engine, box, request, game_id=game.game_id, now_ms=1_000_000 + 300_001)
    assert raised.value.code == "timestamp_out_of_window"
    assert raised.value.details == [{"serverTime": 1_300_001}]


def test_authenticate_raises_a_kept_body_error_only_after_the_signature(engine, box, game):
    kept = ApiError(400, "invalid_json", "The body is not valid JSON.")
    good = _request(game, b"nope", timestamp=now_ms())
    forged = SignedMessage(good.client_id, good.timestamp, "0" * 64, good.body)
    limiter = RateLimiter(1, 1)
    for request, code in ((forged, "invalid_signature"), (good, "invalid_json")):
        with pytest.raises(ApiError) as raised:
            _authenticate(engine, box, request, game_id=None, limiter=limiter, body_error=kept)
        assert raised.value.code == code
