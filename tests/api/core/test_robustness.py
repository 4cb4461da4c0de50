"""Bad input never yields a 500, and never stores anything it should not."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import tables
from models.schemas import IDENTIFIER_KINDS
from tests.api.tracking_helpers import click, platform_id
from tests.factories import SignedClient, iso_now, make_mission

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


NUL = "\u0000"


def test_a_nul_character_in_any_event_string_is_an_invalid_item(signed):
    now = iso_now()
    base = {"userId": "u1", "event": "KILL", "time": now}
    response = signed.events(
        {**base, "userId": "u" + NUL},
        {**base, "event": "KI" + NUL + "LL"},
        {**base, "groupId": "g" + NUL},
        {**base, "traits": {"weapon": "ax" + NUL}},
        {**base, "traits": {"loadout": [{"slots": ["a", {"b": NUL}]}]}},
        {**base, "traits": {"na" + NUL + "me": 1}},
        {**base, "time": now[:-1] + NUL},
        {**base, "note" + NUL: 1},
        base,
    )
    assert response.status_code == 207, response.text
    assert _rejections(response) == [
        (0, "invalid_user_id", "userId"),
        (1, "invalid_event_name", "event"),
        (2, "invalid_group_id", "groupId"),
        (3, "invalid_traits", "traits"),
        (4, "invalid_traits", "traits"),
        (5, "invalid_traits", "traits"),
        (6, "invalid_time", "time"),
        (7, "unknown_field", "note\\u0000"),
    ]
    assert response.json()["accepted"] == {"identifiers": 0, "events": 1}


def test_a_player_ip_that_is_no_address_is_an_invalid_item(signed):
    base = {"userId": "u1", "event": "KILL", "time": iso_now()}
    response = signed.events(
        *(
            {**base, "playerIp": bad}
            for bad in ("", "1.2.3", "203.0.113.300", "fe80::1%eth0", "a" * 5000, "1.2.3.4" + NUL)
        ),
        {**base, "playerIp": 203},
        {**base, "playerIp": "2001:db8::7"},
        {**base, "playerIp": None},
    )
    assert response.status_code == 207, response.text
    assert _rejections(response) == [
        *((i, "invalid_player_ip", "playerIp") for i in range(6)),
        (6, "invalid_type", "playerIp"),
    ]
    assert response.json()["accepted"] == {"identifiers": 0, "events": 2}


def test_a_nul_character_in_any_identifier_is_an_invalid_item(signed):
    items = [
        {"userId": "u" + NUL, "email": "a@example.com"},
        *({"userId": f"p{i}", kind: "1" + NUL} for i, kind in enumerate(IDENTIFIER_KINDS)),
        {"userId": "ok", "steamId": "steam-1"},
    ]
    response = signed.identifiers(*items)
    assert response.status_code == 207, response.text
    assert _rejections(response) == [
        (0, "invalid_user_id", "userId"),
        (1, "invalid_identifier", "discordId"),
        (2, "invalid_identifier", "twitterId"),
        (3, "invalid_identifier", "appleId"),
        (4, "invalid_identifier", "steamId"),
        (5, "invalid_email", "email"),
        (6, "invalid_identifier", "epicGamesId"),
        (7, "invalid_identifier", "telegramId"),
        (8, "invalid_wallet_address", "walletAddress"),
        (9, "invalid_platform_user_id", "platformUserId"),
    ]


def test_a_nul_character_in_a_lookup_id_is_validation_failed(signed, game):
    response = signed.send(
        {"gameId": game.game_id, "userIds": ["ok", "u" + NUL]}, path="/v2/platform-users/lookup"
    )
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == "validation_failed"
    assert [d["path"] for d in body["details"]] == ["userIds.1"]


def test_a_nul_character_in_the_game_id_is_not_a_server_error(signed, game):
    events = signed.send({"gameId": game.game_id + NUL, "events": []})
    lookup = signed.send(
        {"gameId": game.game_id + NUL, "userIds": ["u1"]}, path="/v2/platform-users/lookup"
    )
    for response in (events, lookup):
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "game_mismatch"


def test_a_nul_character_in_the_client_id_is_invalid_signature(client):
    response = client.post(
        "/v2/custom-events",
        content=b"{}",
        headers={"x-client-id": "qw_ci_" + NUL, "x-timestamp": "1", "x-signature": "a" * 64},
    )
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_signature"


@pytest.mark.parametrize(
    "param", ["owid", "uid", "clickid", "platform_sub1", "platform_sub2", "platform_sub3"]
)
def test_a_nul_character_in_a_tracking_link_parameter_is_a_400_page(
    client, game, wall, engine, param
):
    mission = make_mission(engine, game.game_id)
    params = {"owid": wall[0].owid, "uid": "player-1", param: "x" + NUL}
    response = click(client, "mission", mission.id, **params)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/html")
    assert "Invalid link" in response.text
    assert click(client, "mission", mission.id, wall[0].owid, uid="player-1").status_code == 302


@pytest.mark.parametrize("kind", ["mission", "quest"])
def test_a_nul_character_in_the_offer_id_of_a_tracking_link_is_a_400_page(client, wall, kind):
    response = click(client, kind, "%00", wall[0].owid, uid="player-1")
    assert response.status_code == 400
    assert "Invalid link" in response.text


def _nested(levels: int) -> dict:
    """Traits `levels` objects deep: {"a": {"a": … {}}}."""
    traits: dict = {}
    for _ in range(levels - 1):
        traits = {"a": traits}
    return traits


def _nested_list(levels: int) -> list:
    value: list = [1]
    for _ in range(levels - 1):
        value = [value]
    return value


def test_traits_nest_at_most_32_levels(signed, engine):
    base = {"userId": "u1", "event": "KILL", "time": iso_now()}
    response = signed.events(
        {**base, "traits": _nested(32)},
        {**base, "traits": _nested(33)},
        {**base, "traits": {"list": _nested_list(32)}},
        {**base, "traits": _nested(300)},
    )
    assert response.status_code == 207, response.text
    assert _rejections(response) == [
        (1, "invalid_traits", "traits"),
        (2, "invalid_traits", "traits"),
        (3, "invalid_traits", "traits"),
    ]
    with engine.connect() as conn:
        stored = conn.execute(sa.select(tables.event.c.traits)).scalar_one()
    assert stored == _nested(32)


def test_a_body_nested_beyond_what_the_json_parser_takes_is_invalid_json(signed, game):
    deep = '{"a":' * 2000 + "1" + "}" * 2000
    body = (
        f'{{"gameId":"{game.game_id}","events":[{{"userId":"u1","event":"KILL",'
        f'"time":"{iso_now()}","traits":{deep}}}]}}'
    ).encode()
    response = signed.post_raw("/v2/custom-events", body)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_json"


@pytest.mark.parametrize(
    ("params", "used"),
    [
        ({"offset": "2147483647"}, (20, 2147483647)),
        ({"limit": "9" * 5000}, (100, 0)),
        ({"limit": "00000000000000000000000000000007"}, (7, 0)),
    ],
)
def test_offer_paging_clamps_limit_and_takes_offsets_up_to_the_maximum(client, wall, params, used):
    response = client.get("/offerwall/offers", params=params, headers={"x-api-key": wall[1]})
    assert response.status_code == 200, response.text
    assert (response.json()["limit"], response.json()["offset"]) == used


@pytest.mark.parametrize("offset", ["2147483648", "99999999999999999999", "9" * 5000])
def test_an_offer_offset_out_of_range_is_400(client, wall, offset):
    response = client.get(
        "/offerwall/offers", params={"offset": offset}, headers={"x-api-key": wall[1]}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_parameter" and body["statusCode"] == 400
    assert set(body) == {"statusCode", "error", "message", "code", "details"}
    assert body["details"][0]["path"] == "offset"


def test_extreme_finite_values_are_stored_as_sent(signed, engine):
    now = iso_now()
    values = [1e308, -1e308, 2.0**63 + 2048, 5e-324, -0.0]
    response = signed.events(
        *({"userId": "u1", "event": "SCORE", "time": now, "value": v} for v in values)
    )
    assert response.status_code == 200, response.text
    with engine.connect() as conn:
        stored = conn.execute(sa.select(tables.event.c.value).order_by(tables.event.c.id)).scalars()
        assert list(stored) == values


def test_sums_of_extreme_values_store_and_convert_on_both_databases(client, signed, wall, engine):
    mission = make_mission(
        engine,
        signed.credential.game_id,
        rule={
            "event": "SCORE",
            "completion": {"kind": "sum", "threshold": 1e300, "field": "value"},
        },
    )
    player = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="pub-1"))
    assert signed.identifiers({"userId": "u1", "platformUserId": player}).status_code == 200
    at = iso_now(1)
    huge = [{"userId": "u1", "event": "SCORE", "time": at, "value": v} for v in (1e308, 1e308)]
    response = signed.events(
        *huge, {"userId": "u1", "event": "SCORE", "time": at, "traits": {"n": 2**64 - 1}}
    )
    assert response.status_code == 200, response.text
    with engine.connect() as conn:
        made = conn.execute(sa.select(sa.func.count()).select_from(tables.conversion)).scalar_one()
    assert made == 1


def test_a_declared_content_length_of_thousands_of_digits_is_413(client):
    # Python refuses to convert over 4,300 digits: such a header must not reach int().
    response = client.post(
        "/v2/custom-events", content=b"{}", headers={"content-length": "9" * 5000}
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


def test_a_nul_character_in_the_idempotency_key_or_api_key_is_refused(signed, client):
    response = signed.events(
        {"userId": "u1", "event": "KILL", "time": iso_now()},
        extra_headers={"Idempotency-Key": "key" + NUL},
    )
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_idempotency_key"
    listing = client.get("/offerwall/offers", headers={"x-api-key": "qw_ak_" + NUL})
    assert listing.status_code == 401
    assert listing.json()["code"] == "invalid_api_key"
