"""POST /v2/platform-users/lookup (docs/contract.md#lookup)."""

from __future__ import annotations

from tests.factories import make_platform_user


def test_every_submitted_id_is_a_key(signed, game, engine):
    linked = make_platform_user(engine)
    signed.identifiers(
        {"userId": "a", "platformUserId": linked}, {"userId": "b", "email": "b@example.com"}
    )
    response = signed.send(
        {"gameId": game.game_id, "userIds": ["a", "b", "never-seen"]},
        path="/v2/platform-users/lookup",
    )
    assert response.status_code == 200
    assert response.json() == {
        "message": "OK",
        "statusCode": 200,
        "platformUserIds": {"a": linked, "b": None, "never-seen": None},
    }


def test_lookup_is_signed(signed, game):
    response = signed.send(
        {"gameId": game.game_id, "userIds": ["a"]},
        path="/v2/platform-users/lookup",
        secret="qw_cs_wrong",
    )
    assert response.status_code == 401 and response.json()["code"] == "invalid_signature"


def test_lookup_of_another_game_is_403(signed, engine, box):
    from tests.factories import make_game

    other = make_game(engine, box, name="Other")
    response = signed.send(
        {"gameId": other.game_id, "userIds": ["a"]}, path="/v2/platform-users/lookup"
    )
    assert response.status_code == 403 and response.json()["code"] == "game_mismatch"


def test_lookup_limits(signed, game):
    path = "/v2/platform-users/lookup"
    assert signed.send({"gameId": game.game_id, "userIds": []}, path=path).status_code == 422
    too_many = signed.send(
        {"gameId": game.game_id, "userIds": [str(i) for i in range(1001)]}, path=path
    )
    assert too_many.status_code == 422 and too_many.json()["details"][0]["path"] == "userIds"
    bad = signed.send({"gameId": game.game_id, "userIds": ["ok", 5, ""]}, path=path)
    assert [d["path"] for d in bad.json()["details"]] == ["userIds.1", "userIds.2"]
    assert signed.post_raw(path, b"nope").json()["code"] == "invalid_json"
    thousand = signed.send(
        {"gameId": game.game_id, "userIds": [str(i) for i in range(1000)]}, path=path
    )
    assert len(thousand.json()["platformUserIds"]) == 1000
