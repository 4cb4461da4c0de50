"""Signed requests refused as a whole are kept for the game's live event debugger
(docs/game-integration.md#debugging-your-signing): the reason and what the server
computed, per client id, bounded, never the secret."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlmodel import select

from api.app import create_api
from api.core.db import new_session, write_session
from api.ingest import RefusalRecorder, debugger, refused_requests
from api.studios import games
from models import SignedRefusal
from models.types import utcnow
from tests.factories import SignedClient, make_game, now_ms

KILL = {"userId": "p1", "event": "KILL_PLAYER", "time": "2026-11-26T10:00:00.000Z"}


def _body(game) -> bytes:
    return json.dumps({"gameId": game.game_id, "events": [KILL]}, separators=(",", ":")).encode()


def _stored(engine) -> list[SignedRefusal]:
    with new_session(engine) as session:
        query = select(SignedRefusal).order_by(SignedRefusal.seq)  # type: ignore[arg-type]
        return list(session.exec(query))


def _only(engine) -> SignedRefusal:
    rows = _stored(engine)
    assert len(rows) == 1, rows
    return rows[0]


def _shown(engine, game_id: str) -> list[debugger.RefusedRow]:
    with new_session(engine) as session:
        return debugger.refused_requests(session=session, game_id=game_id)


def _holds_no_secret(row: SignedRefusal, secret: str) -> None:
    for value in row.model_dump().values():
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        assert secret not in text


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bad_signature_is_kept_with_the_string_signed_and_never_the_secret(signed, game, engine):
    body = _body(game)
    headers = signed.headers(body, secret="qw_cs_not-the-secret")
    response = signed.client.post("/v2/custom-events", content=body, headers=headers)
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"  # the answer tells nothing more

    row = _only(engine)
    assert (row.game_id, row.client_id, row.status, row.code) == (
        game.game_id,
        game.client_id,
        401,
        "invalid_signature",
    )
    assert "does not match" in row.reason
    assert row.timestamp == headers["x-timestamp"]
    assert row.signature == headers["x-signature"]
    assert row.body_head == body and row.body_size == len(body)
    assert row.body_sha256 == hashlib.sha256(body).hexdigest()
    assert row.skew_ms is not None and abs(row.skew_ms) < 60_000
    _holds_no_secret(row, game.client_secret)

    [shown] = _shown(engine, game.game_id)
    assert shown.signed == game.client_id + headers["x-timestamp"] + body.decode()
    assert shown.body == f"{len(body):,} of 1,048,576 bytes"
    assert shown.code == "invalid_signature"


def test_a_secret_sent_as_the_signature_is_not_kept(signed, game, engine):
    body = _body(game)
    headers = {**signed.headers(body), "x-signature": game.client_secret}
    assert signed.client.post("/v2/custom-events", content=body, headers=headers).status_code == 401
    row = _only(engine)
    assert row.signature == ""
    assert "not 64 hex digits" in row.reason
    _holds_no_secret(row, game.client_secret)


def test_a_stale_timestamp_is_kept_with_its_skew(signed, game, engine):
    response = signed.events(KILL, timestamp=now_ms() - 301_000)
    assert response.json()["code"] == "timestamp_out_of_window"
    row = _only(engine)
    server_time = response.json()["details"][0]["serverTime"]
    assert row.skew_ms == server_time - int(row.timestamp)
    assert 301_000 <= row.skew_ms < 360_000
    assert "s behind the server's clock" in row.reason
    assert _shown(engine, game.game_id)[0].skew.startswith("+301.")
    _holds_no_secret(row, game.client_secret)


def test_a_timestamp_ahead_is_kept_with_a_negative_skew(signed, engine):
    response = signed.events(KILL, timestamp=now_ms() + 400_000)
    row = _only(engine)
    assert row.skew_ms == response.json()["details"][0]["serverTime"] - int(row.timestamp)
    assert -400_000 < row.skew_ms < -340_000
    assert "ahead of the server's clock" in row.reason


def test_bad_json_under_a_right_signature_is_kept_with_the_parser_message(signed, game, engine):
    body = b'{"gameId": "' + game.game_id.encode() + b'", "events": [}'
    response = signed.post_raw("/v2/custom-events", body)
    assert response.json()["code"] == "invalid_json"
    row = _only(engine)
    assert (row.status, row.code) == (400, "invalid_json")
    assert row.reason.startswith("The body is not valid JSON")
    assert row.body_head == body
    _holds_no_secret(row, game.client_secret)


def test_an_invalid_envelope_is_kept_with_the_fields_it_names(signed, engine):
    response = signed.send({"gameId": 5, "events": {}})
    assert response.json()["code"] == "validation_failed"
    row = _only(engine)
    assert (row.status, row.code) == (422, "validation_failed")
    assert "gameId: required, a non-empty string" in row.reason
    assert "events: must be an array" in row.reason


def test_a_body_over_the_limit_is_kept_with_its_size_against_the_limit(
    engine, api_settings, box, game
):
    small = api_settings.model_copy(update={"max_body_bytes": 100})
    client = TestClient(create_api(engine=engine, settings=small, box=box))
    body = _body(game) + b" " * 200
    response = SignedClient(client, game).post_raw("/v2/custom-events", body)
    assert response.json()["code"] == "payload_too_large"
    row = _only(engine)
    assert (row.status, row.code, row.body_size, row.body_limit) == (
        413,
        "payload_too_large",
        len(body),
        100,
    )
    assert row.body_head == b"" and row.body_sha256 == ""  # not read
    assert f"{len(body):,} bytes" in row.reason and "limit of 100 bytes" in row.reason
    [shown] = _shown(engine, game.game_id)
    assert shown.body == f"{len(body):,} of 100 bytes"
    assert shown.signed == ""  # the body was not read: nothing was signed


def test_only_the_first_2_kb_of_the_body_are_kept(signed, game, engine):
    body = _body(game)[:-1] + b',"pad":"' + b"x" * 5000 + b'"}'
    signed.post_raw("/v2/custom-events", body, secret="qw_cs_wrong")
    row = _only(engine)
    assert row.body_head == body[:2048] and row.body_size == len(body)
    assert _shown(engine, game.game_id)[0].signed.endswith("x…")


def test_a_revoked_client_id_is_kept_for_its_game(signed, game, engine, box):
    with write_session(engine) as session:
        games.revoke_credential(session=session, game_id=game.game_id, client_id=game.client_id)
    assert signed.events(KILL).status_code == 401
    row = _only(engine)
    assert row.game_id == game.game_id and "revoked" in row.reason


def test_an_unknown_client_id_is_only_counted_in_the_log(client, signed, engine, caplog):
    clock = Clock()
    client.app.state.refusals = RefusalRecorder(clock)
    with caplog.at_level(logging.WARNING, "questwall.refusals"):
        for n in range(3):
            assert signed.events(KILL, client_id=f"qw_ci_unknown{n}").status_code == 401
        assert caplog.records == []  # counted, logged at most once a minute
        clock.now += 61
        signed.events(KILL, client_id="qw_ci_unknown3")
    assert _stored(engine) == []
    [line] = [r.getMessage() for r in caplog.records]
    assert "4 with an unknown client id" in line


def test_a_request_over_the_rate_is_not_recorded(engine, api_settings, box, game):
    # One token, back after 100 s: a slow first request cannot let the second through.
    tight = api_settings.model_copy(update={"ingest_rate_per_second": 0.01, "ingest_burst": 1})
    client = TestClient(create_api(engine=engine, settings=tight, box=box))
    sender = SignedClient(client, game)
    assert sender.events(KILL).status_code == 200
    assert sender.events(KILL).status_code == 429
    assert _stored(engine) == []


def test_the_lookup_endpoint_keeps_its_refusals_too(signed, game, engine):
    payload = {"gameId": game.game_id, "userIds": ["p1"]}
    response = signed.send(payload, path="/v2/platform-users/lookup", timestamp=now_ms() - 900_000)
    assert response.status_code == 401
    assert _only(engine).code == "timestamp_out_of_window"


def test_the_ring_keeps_the_last_50_of_120_refusals(client, signed, game, engine):
    """120 refusals go round the ring of 50 twice and stop part way into a third lap."""
    client.app.state.refusals = RefusalRecorder(per_client=(1.0, 1000), overall=(1.0, 1000))
    for n in range(120):
        body = _body(game)[:-1] + f',"n":{n}}}'.encode()
        assert signed.post_raw("/v2/custom-events", body, secret="qw_cs_wrong").status_code == 401
    rows = _stored(engine)
    assert len(rows) == refused_requests.RING == 50
    assert [r.seq for r in rows] == list(range(71, 121))
    assert rows[-1].body_head.endswith(b',"n":119}')
    shown = _shown(engine, game.game_id)
    assert len(shown) == 50 and shown[0].signed.endswith(',"n":119}')


def test_500_refusals_at_once_write_at_most_the_burst(client, signed, game, engine, caplog):
    clock = Clock()  # still: no token comes back during the flood
    client.app.state.refusals = RefusalRecorder(clock)
    for _ in range(500):
        assert signed.events(KILL, secret="qw_cs_wrong").status_code == 401
    rows = _stored(engine)
    burst = refused_requests.PER_CLIENT[1]
    assert len(rows) == burst and max(r.seq for r in rows) == burst  # 50 writes, no more
    with caplog.at_level(logging.WARNING, "questwall.refusals"):
        clock.now += 61
        signed.events(KILL, secret="qw_cs_wrong")
    assert "450 over the recording rate" in caplog.records[0].getMessage()


def test_a_game_sees_only_its_own_refusals(client, signed, game, engine, box):
    other = make_game(engine, box, "Other")
    SignedClient(client, other).events(KILL, secret="qw_cs_wrong")
    signed.events(KILL, secret="qw_cs_wrong")
    assert [r.client_id for r in _shown(engine, game.game_id)] == [game.client_id]
    assert [r.client_id for r in _shown(engine, other.game_id)] == [other.client_id]


def test_refusals_older_than_24_hours_are_pruned(signed, engine):
    signed.events(KILL, secret="qw_cs_wrong")
    with write_session(engine) as session:
        assert refused_requests.prune(session, utcnow() + timedelta(hours=23)) == 0
        assert refused_requests.prune(session, utcnow() + timedelta(hours=24, seconds=1)) == 1
    assert _stored(engine) == []


def test_a_missing_timestamp_is_kept_and_a_missing_client_id_is_not(signed, game, engine):
    body = _body(game)
    for header in ("x-timestamp", "x-client-id"):
        headers = {k: v for k, v in signed.headers(body).items() if k != header}
        response = signed.client.post("/v2/custom-events", content=body, headers=headers)
        assert response.status_code == 401
    row = _only(engine)
    assert row.timestamp == "" and row.skew_ms is None
    assert "x-timestamp is missing" in row.reason
