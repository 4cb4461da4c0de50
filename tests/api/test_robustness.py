"""Bad input never yields a 500, and never stores anything it should not."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import SignedClient, iso_now

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)
event_like = st.fixed_dictionaries(
    {},
    optional={
        "userId": json_values | st.text(max_size=130),
        "event": json_values | st.sampled_from(["KILL", "MATCH_END", "bad name", ""]),
        "time": json_values | st.sampled_from(["2026-11-21T10:00:00Z", "2026-11-21T10:00:00", "x"]),
        "value": json_values,
        "traits": json_values,
        "groupId": json_values,
        "extra": json_values,
    },
)
identifier_like = st.fixed_dictionaries(
    {},
    optional={
        "userId": json_values | st.text(max_size=130),
        "email": json_values | st.sampled_from(["a@example.com", "bad", None]),
        "discordId": json_values | st.sampled_from(["123", "12a", None]),
        "walletAddress": json_values | st.sampled_from(["0x" + "ab" * 20, "0x12", None]),
        "platformUserId": json_values | st.sampled_from(["not-a-uuid", None]),
    },
)


def test_random_bodies_never_give_a_server_error(client, game, engine):
    signed = SignedClient(client, game)

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.one_of(
            json_values,
            st.fixed_dictionaries(
                {"gameId": st.just(game.game_id) | json_values},
                optional={
                    "events": st.lists(event_like | json_values, max_size=5) | json_values,
                    "identifiers": st.lists(identifier_like | json_values, max_size=5)
                    | json_values,
                },
            ),
        )
    )
    def check(payload):
        response = signed.post_raw("/v2/custom-events", json.dumps(payload).encode())
        assert response.status_code in {200, 207, 400, 403, 413, 422}, response.text
        body = response.json()
        assert body["statusCode"] == response.status_code
        if response.status_code >= 400:
            assert body["code"] and body["message"]

    check()


def test_binary_and_odd_bodies_are_400(signed):
    for raw in (b"\xff\xfe\x00", b"", b"[" * 5000 + b"]" * 5000, b'{"gameId": "x",}'):
        response = signed.post_raw("/v2/custom-events", raw)
        assert response.status_code in {400, 422}, raw[:20]
        assert response.json()["code"] in {"invalid_json", "validation_failed"}


def test_odd_signing_headers_are_invalid_signature(client, game):
    body = b"{}"
    for headers in (
        {"x-client-id": game.client_id, "x-timestamp": "١٢٣", "x-signature": "a" * 64},
        {"x-client-id": game.client_id, "x-timestamp": "1" * 40, "x-signature": "a" * 64},
        {"x-client-id": game.client_id, "x-timestamp": "1700000000000", "x-signature": "é" * 64},
        {"x-client-id": "x" * 500, "x-timestamp": "1700000000000", "x-signature": "a" * 64},
    ):
        response = client.post(
            "/v2/custom-events",
            content=body,
            headers={k: v.encode("utf-8") for k, v in headers.items()},
        )
        assert response.status_code == 401
        assert response.json()["code"] == "invalid_signature"


def _rejections(response) -> list[tuple[int, str, str | None]]:
    return [(r["index"], r["code"], r.get("field")) for r in response.json()["rejected"]]


def test_a_time_that_overflows_on_conversion_to_utc_is_an_invalid_item(signed):
    response = signed.events(
        {"userId": "u1", "event": "KILL", "time": "0001-01-01T00:00:00+14:00"},
        {"userId": "u1", "event": "KILL", "time": "9999-12-31T23:59:59-01:00"},
        {"userId": "u1", "event": "KILL", "time": iso_now()},
    )
    assert response.status_code == 207, response.text
    assert _rejections(response) == [(0, "invalid_time", "time"), (1, "invalid_time", "time")]


def test_an_overflowing_time_is_not_answered_before_the_signature(client, game):
    body = json.dumps(
        {
            "gameId": game.game_id,
            "events": [{"userId": "u1", "event": "KILL", "time": "0001-01-01T00:00:00+14:00"}],
        }
    ).encode()
    response = SignedClient(client, game).post_raw("/v2/custom-events", body, secret="wrong")
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"
