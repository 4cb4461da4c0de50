"""POST /v2/custom-events: envelope, items, partial acceptance, limits, idempotency."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import func, select

from api.core.db import new_session
from models import Event, GameUser
from tests.factories import iso_now


def _events(engine) -> list[Event]:
    with new_session(engine) as session:
        return list(session.exec(select(Event).order_by(Event.id)))


def _count(engine, model) -> int:
    with new_session(engine) as session:
        return session.exec(select(func.count()).select_from(model)).one()


def test_event_fields_are_stored_in_utc_milliseconds(signed, game, engine):
    response = signed.events(
        {
            "userId": "p1",
            "event": "MATCH_END",
            "time": "2026-11-21T12:00:00.123456+02:00",
            "value": 1500,
            "traits": {"isSurvivor": True, "matchId": 7, "score": 1500},
            "groupId": "match-7",
        }
    )
    assert response.status_code == 200, response.text
    [event] = _events(engine)
    assert event.game_id == game.game_id
    assert (event.user_id, event.name, event.value) == ("p1", "MATCH_END", 1500.0)
    assert event.time == datetime(2026, 11, 21, 10, 0, 0, 123000, tzinfo=UTC)
    assert event.traits == {"isSurvivor": True, "matchId": 7, "score": 1500}
    assert event.group_id == "match-7"


def test_many_users_and_timestamps_in_one_batch(signed, engine):
    base = datetime.now(UTC) - timedelta(hours=1)
    batch = [
        {
            "userId": f"user-{i % 25}",
            "event": "KILL_PLAYER",
            "time": (base + timedelta(seconds=i)).isoformat(),
            "groupId": f"g{i % 3}",
            "traits": {"weapon": "bow", "player": f"user-{(i + 1) % 25}"},
        }
        for i in range(500)
    ]
    response = signed.events(*batch)
    assert response.json()["accepted"] == {"identifiers": 0, "events": 500}
    stored = _events(engine)
    assert len(stored) == 500
    assert len({e.user_id for e in stored}) == 25
    assert len({e.time for e in stored}) == 500


def test_unknown_event_names_are_accepted(signed, engine):
    assert (
        signed.events({"userId": "p", "event": "OPENED_CHEST", "time": iso_now()}).status_code
        == 200
    )


def test_two_identical_events_are_two_events(signed, engine):
    event = {"userId": "p", "event": "KILL_PLAYER", "time": "2026-11-21T10:00:00.000Z"}
    assert signed.events(event, event).json()["accepted"]["events"] == 2
    assert _count(engine, Event) == 2


def test_events_of_unidentified_users_are_stored(signed, engine):
    signed.events({"userId": "stranger", "event": "START_GAME", "time": iso_now()})
    assert _count(engine, Event) == 1
    assert _count(engine, GameUser) == 0


def test_partial_acceptance_is_207_and_stores_the_valid_items(signed, engine):
    response = signed.events(
        {"userId": "p1", "event": "GAME_OVER", "time": iso_now(), "value": 10},
        {"userId": "p1", "event": "GAME_OVER", "time": "2026-11-21 10:00"},
        {"userId": "p1", "event": "GAME_OVER", "time": iso_now(), "value": "ten"},
        "not an object",
        identifiers=[{"userId": "p1", "email": "bad"}, {"userId": "p1", "discordId": "42"}],
    )
    assert response.status_code == 207
    body = response.json()
    assert body["message"] == "Partially accepted" and body["statusCode"] == 207
    assert body["accepted"] == {"identifiers": 1, "events": 1}
    assert [(r["kind"], r["index"], r["code"]) for r in body["rejected"]] == [
        ("identifier", 0, "invalid_email"),
        ("event", 1, "invalid_time"),
        ("event", 2, "invalid_value"),
        ("event", 3, "invalid_item"),
    ]
    assert all(r["message"] for r in body["rejected"])
    assert body["rejected"][0]["field"] == "email"
    assert len(_events(engine)) == 1


@pytest.mark.parametrize(
    ("email", "message"),
    [
        ("bad", "Enter an email address such as name@example.com."),
        ("ada@", "Write the domain after the @, as in name@example.com."),
        ("ada..l@example.com", "Check the dots: an address has no two in a row."),
    ],
)
def test_an_invalid_email_is_refused_in_the_portals_words(signed, email, message):
    from api.accounts import AccountError
    from api.accounts.sessions import normalize_email

    response = signed.events(identifiers=[{"userId": "p1", "email": email}])
    [rejected] = response.json()["rejected"]
    assert (rejected["code"], rejected["field"], rejected["message"]) == (
        "invalid_email",
        "email",
        message,
    )
    with pytest.raises(AccountError) as portal:  # what the portal's forms say of it
        normalize_email(email)
    assert portal.value.message == message


def test_all_invalid_is_422_and_stores_nothing(signed, engine):
    response = signed.events(
        {"userId": "p1", "event": "bad name!", "time": iso_now()},
        identifiers=[{"userId": "p1"}],
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation_failed"
    assert body["accepted"] == {"identifiers": 0, "events": 0}
    assert {r["code"] for r in body["rejected"]} == {"invalid_event_name", "identifier_required"}
    assert _count(engine, Event) == 0
    assert _count(engine, GameUser) == 0


def test_empty_arrays_are_ok(signed):
    response = signed.events()
    assert response.status_code == 200
    assert response.json()["accepted"] == {"identifiers": 0, "events": 0}


def test_not_json_is_400(signed):
    response = signed.post_raw("/v2/custom-events", b"{not json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"


def test_wrong_envelope_types_are_422_naming_the_path(signed, game):
    response = signed.send({"gameId": game.game_id, "events": {"userId": "x"}})
    assert response.status_code == 422
    assert response.json()["details"][0]["path"] == "events"
    assert signed.send([1, 2]).status_code == 422
    missing = signed.send({"events": []})
    assert missing.status_code == 422 and missing.json()["details"][0]["path"] == "gameId"
    typo = signed.send({"gameId": game.game_id, "event": []})
    assert typo.status_code == 422 and typo.json()["details"][0]["path"] == "event"


def test_body_over_one_mebibyte_is_413_and_stores_nothing(signed, game, engine):
    padding = "x" * 1_100_000
    response = signed.events(
        {"userId": "p", "event": "E", "time": iso_now(), "traits": {"p": padding}}
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"
    assert _count(engine, Event) == 0


def test_more_than_1000_events_is_refused_whole(signed, engine):
    event = {"userId": "p", "event": "E", "time": "2026-11-21T10:00:00Z"}
    response = signed.events(*[event] * 1001)
    assert response.status_code == 413
    assert response.json()["code"] == "too_many_items"
    assert _count(engine, Event) == 0
    assert signed.events(*[event] * 1000).json()["accepted"]["events"] == 1000


def test_more_than_1000_identifiers_is_refused_whole(signed, engine):
    items = [{"userId": f"u{i}", "steamId": str(i)} for i in range(1001)]
    response = signed.identifiers(*items)
    assert response.status_code == 413
    assert _count(engine, GameUser) == 0


def test_idempotency_key_returns_the_first_answer_and_changes_nothing(signed, engine):
    event = {"userId": "p", "event": "E", "time": iso_now()}
    first = signed.events(event, extra_headers={"Idempotency-Key": "batch-1"})
    # A new signature (new timestamp), same key and body: the first answer, nothing stored.
    second = signed.events(event, extra_headers={"Idempotency-Key": "batch-1"})
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert second.headers.get("idempotent-replayed") == "true"
    assert _count(engine, Event) == 1


def test_idempotency_key_is_per_game(client, signed, engine, box):
    from tests.factories import SignedClient, make_game

    other = SignedClient(client, make_game(engine, box, name="Other"))
    event = {"userId": "p", "event": "E", "time": iso_now()}
    signed.events(event, extra_headers={"Idempotency-Key": "k"})
    other.events(event, extra_headers={"Idempotency-Key": "k"})
    assert _count(engine, Event) == 2


def test_idempotency_key_reused_with_another_body_is_409(signed, engine):
    signed.events(
        {"userId": "p", "event": "E", "time": iso_now()}, extra_headers={"Idempotency-Key": "k"}
    )
    response = signed.events(
        {"userId": "q", "event": "E", "time": iso_now()}, extra_headers={"Idempotency-Key": "k"}
    )
    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_reused"
    assert _count(engine, Event) == 1


def test_unknown_api_path_and_wrong_method_answer_json(client):
    missing = client.get("/v2/nothing-here")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    wrong = client.get("/v2/custom-events")
    assert wrong.status_code == 405 and wrong.json()["code"] == "method_not_allowed"
    assert client.delete("/offerwall/whatever").json()["code"] == "not_found"


def test_openapi_documents_the_endpoint_and_its_signing_headers(client):
    spec = client.get("/v2/openapi.json").json()
    operation = spec["paths"]["/v2/custom-events"]["post"]
    headers = {p["name"] for p in operation["parameters"] if p["in"] == "header"}
    assert {"x-client-id", "x-timestamp", "x-signature", "idempotency-key"} <= headers
    assert "HMAC-SHA256" in operation["description"]
    schema_ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    name = schema_ref.rsplit("/", 1)[1]
    assert set(spec["components"]["schemas"][name]["properties"]) == {
        "gameId",
        "identifiers",
        "events",
    }
    assert "EventIn" in spec["components"]["schemas"]
    assert {"200", "207", "401", "413", "422"} <= set(operation["responses"])


def test_same_body_twice_with_new_signatures_stores_twice(signed, game, engine):
    body = json.dumps(
        {"gameId": game.game_id, "events": [{"userId": "p", "event": "E", "time": iso_now()}]}
    ).encode()
    signed.post_raw(
        "/v2/custom-events", body, timestamp=1_000 + int(datetime.now(UTC).timestamp() * 1000)
    )
    signed.post_raw(
        "/v2/custom-events", body, timestamp=2_000 + int(datetime.now(UTC).timestamp() * 1000)
    )
    assert _count(engine, Event) == 2
