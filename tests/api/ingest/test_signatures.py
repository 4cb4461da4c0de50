"""Signed requests (docs/contract.md#signed-requests): every way a signature can be right or wrong."""

from __future__ import annotations

import json

from sqlmodel import func, select

from api.core.db import new_session, write_session
from api.studios import games
from models import Event
from tests.factories import SignedClient, iso_now, now_ms


def _kill(user: str = "p1") -> dict:
    return {"userId": user, "event": "KILL_PLAYER", "time": iso_now(), "traits": {"weapon": "axe"}}


def _event_count(engine) -> int:
    with new_session(engine) as session:
        return session.exec(select(func.count()).select_from(Event)).one()


def test_valid_signature_is_accepted_and_stored(signed, engine):
    response = signed.events(_kill())
    assert response.status_code == 200, response.text
    assert response.json() == {
        "statusCode": 200,
        "message": "OK",
        "accepted": {"identifiers": 0, "events": 1},
        "rejected": [],
    }
    assert _event_count(engine) == 1


def test_wrong_secret_is_invalid_signature(signed, engine):
    response = signed.events(_kill(), secret="qw_cs_not-the-secret")
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == "invalid_signature"
    assert body["error"] == "Unauthorized" and body["statusCode"] == 401
    assert _event_count(engine) == 0


def test_one_changed_body_byte_breaks_the_signature(signed, game, engine):
    body = json.dumps({"gameId": game.game_id, "events": [_kill()]}).encode()
    headers = signed.headers(body)
    tampered = body.replace(b"axe", b"axf")
    response = signed.client.post("/v2/custom-events", content=tampered, headers=headers)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"
    assert _event_count(engine) == 0


def test_stale_timestamp_is_out_of_window(signed):
    response = signed.events(_kill(), timestamp=now_ms() - 301_000)
    assert response.status_code == 401
    assert response.json()["code"] == "timestamp_out_of_window"


def test_future_timestamp_is_out_of_window(signed):
    response = signed.events(_kill(), timestamp=now_ms() + 301_000)
    assert response.status_code == 401
    assert response.json()["code"] == "timestamp_out_of_window"


def test_timestamp_just_inside_the_window_both_ways_is_accepted(signed):
    assert signed.events(_kill(), timestamp=now_ms() - 295_000).status_code == 200
    assert signed.events(_kill(), timestamp=now_ms() + 295_000).status_code == 200


def test_unknown_client_gets_the_same_answer_as_a_bad_signature(signed):
    unknown = signed.events(_kill(), client_id="qw_ci_doesnotexist")
    wrong = signed.events(_kill(), secret="qw_cs_wrong")
    assert unknown.status_code == wrong.status_code == 401
    assert unknown.json() == wrong.json()


def test_missing_headers_get_invalid_signature(client, game):
    body = json.dumps({"gameId": game.game_id, "events": []}).encode()
    for missing in ("x-client-id", "x-timestamp", "x-signature"):
        headers = SignedClient(client, game).headers(body)
        del headers[missing]
        response = client.post("/v2/custom-events", content=body, headers=headers)
        assert response.status_code == 401, missing
        assert response.json()["code"] == "invalid_signature"


def test_non_numeric_timestamp_is_invalid_signature(signed, game):
    body = b'{"gameId":"x"}'
    headers = signed.headers(body)
    headers["x-timestamp"] = "yesterday"
    response = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert response.json()["code"] == "invalid_signature"


def test_upper_case_hex_signature_is_accepted(signed, game):
    body = json.dumps({"gameId": game.game_id, "events": [_kill()]}).encode()
    headers = signed.headers(body)
    headers["x-signature"] = headers["x-signature"].upper()
    assert signed.client.post("/v2/custom-events", content=body, headers=headers).status_code == 200


def test_byte_identical_resend_answers_like_the_first_and_stores_once(signed, game, engine):
    body = json.dumps({"gameId": game.game_id, "events": [_kill(), _kill("p2")]}).encode()
    headers = signed.headers(body)
    first = signed.client.post("/v2/custom-events", content=body, headers=headers)
    second = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert second.headers.get("questwall-replayed") == "true"
    assert _event_count(engine) == 2


def test_resend_with_upper_case_signature_is_still_the_same_request(signed, game, engine):
    body = json.dumps({"gameId": game.game_id, "events": [_kill()]}).encode()
    headers = signed.headers(body)
    signed.client.post("/v2/custom-events", content=body, headers=headers)
    headers["x-signature"] = headers["x-signature"].upper()
    signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert _event_count(engine) == 1


def test_resend_after_a_failed_first_attempt_is_processed(signed, game, engine):
    # The first attempt fails (every item invalid, nothing committed); the signature is
    # not recorded, so the byte-identical resend is processed again, not answered from a record.
    body = json.dumps({"gameId": game.game_id, "events": [{"userId": "p1"}]}).encode()
    headers = signed.headers(body)
    first = signed.client.post("/v2/custom-events", content=body, headers=headers)
    second = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert first.status_code == second.status_code == 422
    assert "questwall-replayed" not in second.headers


def test_resend_after_a_rolled_back_attempt_is_stored(client, game, engine, monkeypatch):
    # The first attempt dies inside its transaction (a database failure); the resend stores.
    from fastapi.testclient import TestClient

    import api.ingest.custom_events as ingestion

    signed = SignedClient(TestClient(client.app, raise_server_exceptions=False), game)

    body = json.dumps({"gameId": game.game_id, "events": [_kill()]}).encode()
    headers = signed.headers(body)
    real_insert = ingestion.insert_events

    def failing_insert(*args, **kwargs):
        real_insert(*args, **kwargs)
        raise RuntimeError("the database went away")

    monkeypatch.setattr(ingestion, "insert_events", failing_insert)
    first = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert first.status_code == 500
    assert first.json()["code"] == "internal_error"
    assert _event_count(engine) == 0
    monkeypatch.setattr(ingestion, "insert_events", real_insert)
    second = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert second.status_code == 200
    assert _event_count(engine) == 1


def test_revoked_credential_stops_working_at_once(signed, game, engine):
    assert signed.events(_kill()).status_code == 200
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    response = signed.events(_kill())
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"


def test_rotated_credential_both_live_then_old_revoked(client, game, engine, box):
    with write_session(engine) as session:
        new = games.rotate_credential(session=session, box=box, game_id=game.game_id)
    old_client, new_client = SignedClient(client, game), SignedClient(client, new)
    assert old_client.events(_kill()).status_code == 200
    assert new_client.events(_kill()).status_code == 200
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    assert old_client.events(_kill()).status_code == 401
    assert new_client.events(_kill()).status_code == 200


def test_game_mismatch_is_403(signed, engine, box):
    from tests.factories import make_game

    other = make_game(engine, box, name="Other")
    response = signed.send({"gameId": other.game_id, "events": [_kill()]})
    assert response.status_code == 403
    assert response.json()["code"] == "game_mismatch"
    assert _event_count(engine) == 0


def test_official_node_client_request_is_accepted(client, game, engine):
    # Built byte for byte as the Node.js client does: JSON.stringify of
    # {gameId, events, identifiers} (no spaces, that key order), the signature over
    # clientId + timestamp + body, success read as message === "OK".
    events = [{"userId": "u-42", "event": "GAME_OVER", "time": iso_now(), "value": 1200}]
    identifiers = [{"userId": "u-42", "email": "player@example.com"}]
    body = (
        '{"gameId":"'
        + game.game_id
        + '","events":'
        + json.dumps(events, separators=(",", ":"))
        + ',"identifiers":'
        + json.dumps(identifiers, separators=(",", ":"))
        + "}"
    ).encode()
    import hashlib
    import hmac

    timestamp = str(now_ms())
    signature = hmac.new(
        game.client_secret.encode(), (game.client_id + timestamp).encode() + body, hashlib.sha256
    ).hexdigest()
    response = client.post(
        "/v2/custom-events",
        content=body,
        headers={
            "Content-Type": "application/json",
            "x-client-id": game.client_id,
            "x-timestamp": timestamp,
            "x-signature": signature,
        },
    )
    assert response.json()["message"] == "OK"
    assert _event_count(engine) == 1


def test_over_the_rate_is_429_with_retry_after(engine, box, game, settings):
    from fastapi.testclient import TestClient

    from api.app import create_api

    strict = settings.model_copy(update={"ingest_rate_per_second": 0.01, "ingest_burst": 2})
    client = SignedClient(TestClient(create_api(engine=engine, settings=strict, box=box)), game)
    assert client.events(_kill()).status_code == 200
    assert client.events(_kill()).status_code == 200
    limited = client.events(_kill())
    assert limited.status_code == 429
    assert limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert _event_count(engine) == 2
