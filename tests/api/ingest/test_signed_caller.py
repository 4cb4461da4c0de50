"""The one signed-caller check, the same on every signed route (docs/contract.md#signed-requests, docs/contract.md#errors).

Each behaviour is asserted on `POST /v2/custom-events` and `POST /v2/platform-users/lookup`:
both answer through `signing.authenticate`, so they must answer alike.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_api
from api.core.db import write_session
from api.studios import games
from tests.factories import FixedCountries, SignedClient, make_game, now_ms

EVENTS, LOOKUP = "/v2/custom-events", "/v2/platform-users/lookup"
PATHS = pytest.mark.parametrize("path", [EVENTS, LOOKUP])


def _valid(path: str, game_id: str) -> dict:
    if path == LOOKUP:
        return {"gameId": game_id, "userIds": ["p1"]}
    return {"gameId": game_id, "events": [], "identifiers": []}


@PATHS
def test_missing_headers_are_invalid_signature(client, game, path):
    response = client.post(path, json=_valid(path, game.game_id))
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"


@PATHS
def test_unknown_revoked_and_wrong_get_one_answer(signed, game, engine, path):
    payload = _valid(path, game.game_id)
    unknown = signed.send(payload, path=path, client_id="qw_ci_nobody")
    wrong = signed.send(payload, path=path, secret="qw_cs_not-the-secret")
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    revoked = signed.send(payload, path=path)
    assert unknown.json() == wrong.json() == revoked.json()
    assert {unknown.status_code, wrong.status_code, revoked.status_code} == {401}
    assert revoked.json()["code"] == "invalid_signature"


@PATHS
def test_stale_timestamp_tells_the_server_time(signed, game, path):
    before = now_ms()
    response = signed.send(_valid(path, game.game_id), path=path, timestamp=before - 301_000)
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "timestamp_out_of_window"
    assert body["details"][0]["serverTime"] >= before


@PATHS
def test_another_games_id_is_game_mismatch(signed, engine, box, path):
    other = make_game(engine, box, name="Other")
    response = signed.send(_valid(path, other.game_id), path=path)
    assert response.status_code == 403
    assert response.json()["code"] == "game_mismatch"


@PATHS
def test_a_bad_body_is_told_only_to_an_authenticated_caller(signed, path):
    unsigned = signed.post_raw(path, b"nope", secret="qw_cs_not-the-secret")
    assert unsigned.status_code == 401
    assert unsigned.json()["code"] == "invalid_signature"
    assert signed.post_raw(path, b"nope").json()["code"] == "invalid_json"
    not_a_game = signed.send({"gameId": 5}, path=path)
    assert not_a_game.status_code == 422
    assert not_a_game.json()["code"] == "validation_failed"


@PATHS
def test_over_the_rate_is_429_before_the_body_is_judged(engine, box, game, settings, path):
    strict = settings.model_copy(update={"ingest_rate_per_second": 0.01, "ingest_burst": 1})
    app = create_api(engine=engine, settings=strict, box=box, countries=FixedCountries())
    client = SignedClient(TestClient(app), game)
    assert client.send(_valid(path, game.game_id), path=path).status_code == 200
    limited = client.post_raw(path, b"nope")
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60


def test_both_routes_share_one_rate_per_client_id(engine, box, game, settings):
    strict = settings.model_copy(update={"ingest_rate_per_second": 0.01, "ingest_burst": 1})
    app = create_api(engine=engine, settings=strict, box=box, countries=FixedCountries())
    client = SignedClient(TestClient(app), game)
    assert client.send(_valid(EVENTS, game.game_id), path=EVENTS).status_code == 200
    assert client.send(_valid(LOOKUP, game.game_id), path=LOOKUP).status_code == 429


def test_a_stored_batch_is_told_to_whoever_mounted_the_api(engine, box, game, api_settings):
    stored: list[str] = []
    app = create_api(
        engine=engine,
        settings=api_settings,
        box=box,
        countries=FixedCountries(),
        on_stored=stored.append,
    )
    client = SignedClient(TestClient(app), game)
    assert client.send(_valid(LOOKUP, game.game_id), path=LOOKUP).status_code == 200
    assert stored == []
    assert client.send(_valid(EVENTS, game.game_id)).status_code == 200
    assert stored == [game.game_id]
    # A refusal kept for the debugger is new data for it too.
    assert client.send(_valid(EVENTS, game.game_id), secret="qw_cs_wrong").status_code == 401
    assert stored == [game.game_id, game.game_id]
