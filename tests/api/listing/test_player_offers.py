"""The offers API's filters and user scope, and GET /offerwall/users/{uid}/progress
(docs/publisher-integration.md#players-and-progress)."""

from __future__ import annotations

import pytest

from api.core.db import write_session
from api.publishers import offerwalls
from tests.api.steps import at, start
from tests.factories import make_mission, make_offerwall, make_quest, mission_data

KILLS_3 = {
    "event": "GAME_END",
    "conditions": [{"field": "traits.kills", "op": ">=", "value": 1}],
    "completion": {"kind": "count", "threshold": 3},
}


def offers(client, key, **params):
    return client.get("/offerwall/offers", params=params, headers={"x-api-key": key})


def listed(body) -> list[str]:
    return [o["id"] for o in body["data"]["missions"]] + [o["id"] for o in body["data"]["quests"]]


@pytest.fixture
def catalog(engine, game):
    """Four offers with different targeting, tags and payouts (newest last)."""
    return {
        "us_android": make_mission(
            engine,
            game.game_id,
            title="US Android",
            payout="2.00",
            operatingSystem=["Android"],
            geotargeting={"countriesInclude": ["US"], "countriesExclude": []},
            tags=["RPG", "casual"],
        ).id,
        "not_de": make_mission(
            engine,
            game.game_id,
            title="Anywhere but DE",
            payout="0.50",
            geotargeting={"countriesInclude": [], "countriesExclude": ["DE"]},
            tags=["puzzle"],
        ).id,
        "ios": make_mission(
            engine, game.game_id, title="iOS only", payout="5.00", operatingSystem=["iOS"]
        ).id,
        "quest": make_quest(
            engine,
            game.game_id,
            [mission_data(title="Q1", payout="1.00"), mission_data(title="Q2", payout="1.25")],
            tags=["rpg"],
        ).id,
    }


def test_filters_by_country_os_tag_payout_and_sorts(client, wall, catalog):
    _, key = wall
    everything = offers(client, key).json()
    assert everything["total"] == 4

    us = offers(client, key, country="us").json()
    assert set(listed(us)) == {
        catalog["us_android"],
        catalog["not_de"],
        catalog["ios"],
        catalog["quest"],
    }
    de = offers(client, key, country="DE").json()
    assert set(listed(de)) == {catalog["ios"], catalog["quest"]}
    assert de["total"] == 2

    android = offers(client, key, os="android").json()
    assert set(listed(android)) == {catalog["us_android"], catalog["not_de"], catalog["quest"]}
    both = offers(client, key, country="DE", os="Android").json()
    assert listed(both) == [catalog["quest"]]

    rpg = offers(client, key, tag="rpg").json()  # any case, any of the tags
    assert set(listed(rpg)) == {catalog["us_android"], catalog["quest"]}
    assert set(listed(offers(client, key, tag="puzzle, nothing").json())) == {catalog["not_de"]}

    # A quest's payout is its missions' together: 2.25.
    rich = offers(client, key, minPayout="2.25").json()
    assert set(listed(rich)) == {catalog["ios"], catalog["quest"]}

    by_payout = offers(client, key, sort="payout", limit="10").json()
    order = [catalog["ios"], catalog["quest"], catalog["us_android"], catalog["not_de"]]
    payouts = [o["payout"] for o in by_payout["data"]["missions"]]
    assert payouts == sorted(payouts, reverse=True)
    assert [o for o in order if o in listed(by_payout)] == order
    # Paging applies after the filters.
    page = offers(client, key, country="US", limit="1", offset="1").json()
    assert (page["total"], page["limit"], page["offset"], len(listed(page))) == (4, 1, 1, 1)


def test_min_payout_is_in_the_offerwalls_currency(client, engine, box, wall, catalog):
    assert offers(client, wall[1], minPayout="5").json()["total"] == 1  # USD: iOS only
    gem_wall, gem_key = make_offerwall(engine, box, name="GemWall")
    with write_session(engine) as session:
        offerwalls.set_currency(
            session=session,
            offerwall=offerwalls.get_offerwall(session=session, ref=gem_wall.id),
            name="Gems",
            code="GEM",
            exchange_rate=100,
            decimals=0,
        )
    assert offers(client, gem_key, minPayout="200").json()["total"] == 3  # 500, 225, 200


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("country", "USA"),
        ("country", "1A"),
        ("country", "D\x00"),
        ("os", "Symbian"),
        ("os", "x" * 100),
        ("tag", "a" * 65),
        ("tag", ",".join(["t"] * 21)),
        ("minPayout", "-1"),
        ("minPayout", "NaN"),
        ("minPayout", "Infinity"),
        ("minPayout", "1e999999"),
        ("minPayout", "ten"),
        ("sort", "oldest"),
        ("uid", "u" * 256),
        ("uid", "a\x00b"),
    ],
)
def test_bad_filters_are_400_naming_the_parameter(client, wall, name, value):
    answer = offers(client, wall[1], **{name: value})
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["code"] == "invalid_parameter"
    assert body["details"][0]["path"] == name


def test_uid_narrows_to_what_the_player_can_still_do_with_progress(
    client, signed, engine, game, wall
):
    owall, key = wall
    kills = make_mission(engine, game.game_id, title="Kill 3", rule=KILLS_3).id
    once = make_mission(engine, game.game_id, title="Win once").id
    untouched = make_mission(engine, game.game_id, title="Untouched").id
    start(client, signed, wall, kills, "p1", uid="alice")
    start(client, signed, wall, once, "p1", uid="alice")
    signed.events(
        {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 2}},
        {"userId": "p1", "event": "GAME_END", "time": at(2), "traits": {"kills": 12}},
    )
    body = offers(client, key, uid="alice").json()
    # "Win once" (kills >= 10, count 1) converted: no longer listed for alice.
    assert set(listed(body)) == {kills, untouched}
    assert body["total"] == 2
    by_id = {o["id"]: o for o in body["data"]["missions"]}
    progress = by_id[kills]["progress"]
    assert (progress["status"], progress["current"], progress["target"]) == ("started", 2, 3)
    assert (progress["event"], progress["percent"], progress["completions"]) == ("GAME_END", 66, 0)
    assert by_id[untouched]["progress"]["status"] == "new"
    assert by_id[kills]["trackingLink"].endswith(f"?owid={owall.owid}&uid=alice")
    # Another player sees everything, all new; without uid there is no progress.
    other = offers(client, key, uid="bob").json()
    assert other["total"] == 3
    assert {o["progress"]["status"] for o in other["data"]["missions"]} == {"new"}
    assert "progress" not in offers(client, key).json()["data"]["missions"][0]


def test_progress_endpoint_lists_what_the_player_opened(client, signed, engine, game, wall):
    _, key = wall
    kills = make_mission(engine, game.game_id, title="Kill 3", rule=KILLS_3).id
    once = make_mission(engine, game.game_id, title="Win once").id
    quest = make_quest(
        engine, game.game_id, [mission_data(title="Q1"), mission_data(title="Q2", rule=KILLS_3)]
    ).id
    start(client, signed, wall, kills, "p1", uid="alice")
    start(client, signed, wall, once, "p1", uid="alice")
    start(client, signed, wall, quest, "p1", kind="quest", uid="alice")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 12}})

    answer = client.get("/offerwall/users/alice/progress", headers={"x-api-key": key})
    assert answer.status_code == 200
    body = answer.json()
    assert body["uid"] == "alice"
    missions = {m["id"]: m for m in body["data"]["missions"]}
    assert missions[kills]["progress"]["current"] == 1
    assert missions[kills]["available"] is True
    assert missions[once]["progress"]["status"] == "completed"
    assert missions[once]["available"] is False
    (q,) = body["data"]["quests"]
    assert (q["id"], q["name"]) == (quest, "Season opener")
    assert (q["progress"]["missionsCompleted"], q["progress"]["missionsTotal"]) == (1, 2)
    assert q["progress"]["status"] == "started"
    assert body["counts"] == {"started": 2, "completed": 1, "expired": 0, "ended": 0}

    nobody = client.get("/offerwall/users/nobody/progress", headers={"x-api-key": key}).json()
    assert nobody["data"] == {"missions": [], "quests": []}
    assert client.get("/offerwall/users/alice/progress").status_code == 401
    long_uid = client.get("/offerwall/users/" + "u" * 300 + "/progress", headers={"x-api-key": key})
    assert long_uid.status_code == 400


def test_another_offerwalls_player_is_not_seen(client, signed, engine, box, game, wall):
    kills = make_mission(engine, game.game_id, title="Kill 3", rule=KILLS_3).id
    start(client, signed, wall, kills, "p1", uid="alice")
    _, other_key = make_offerwall(engine, box, name="Other")
    body = client.get("/offerwall/users/alice/progress", headers={"x-api-key": other_key}).json()
    assert body["data"]["missions"] == []
