"""GET /offerwall/offers (docs/contract.md#offers-listing): envelope, fields, pagination, access."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from api.core.db import write_session
from api.publishers import offerwalls
from models import Mission, OfferwallStatus
from tests.factories import make_mission, make_offerwall, make_quest, mission_data

MISSION_FIELDS = {
    "id",
    "title",
    "description",
    "thumbnail",
    "expirationDate",
    "previewUrl",
    "trackingLink",
    "payout",
    "cap",
    "isActive",
    "operatingSystem",
    "geotargeting",
    "tags",
    "instructions",
    "requirements",
    "allowMultipleConversions",
    "currency",  # added to the original spec's fields: the code of `payout`'s currency
}
QUEST_FIELDS = {
    "id",
    "name",
    "description",
    "thumbnail",
    "expirationDate",
    "trackingLink",
    "previewUrl",
    "startCap",
    "isActive",
    "operatingSystem",
    "tags",
    "geotargeting",
    "instructions",
    "requirements",
    "missions",
}
QUEST_MISSION_FIELDS = {
    "id",
    "title",
    "description",
    "payout",
    "cap",
    "instructions",
    "requirements",
    "allowMultipleConversions",
    "currency",
}


def offers(client, key, **params):
    return client.get("/offerwall/offers", params=params, headers={"x-api-key": key} if key else {})


def test_envelope_and_every_field(client, game, engine, box, api_settings):
    wall, key = make_offerwall(engine, box, name="Gems")
    with write_session(engine) as session:
        offerwalls.set_currency(
            session=session,
            offerwall=offerwalls.get_offerwall(session=session, ref=wall.id),
            name="Gems",
            code="GEM",
            exchange_rate=250,
            decimals=0,
        )
    mission = make_mission(
        engine,
        game.game_id,
        description="Win big",
        thumbnail="https://cdn.example/k.png",
        previewUrl="https://game.example/preview",
        expirationDate="2030-01-01T00:00:00Z",
        cap=50,
        operatingSystem=["Android"],
        geotargeting={"countriesInclude": ["US"], "countriesExclude": ["CA"]},
        tags=["pvp"],
        instructions="Do it",
        requirements="New players",
        payout="1.234",
    )
    time.sleep(0.01)
    quest = make_quest(
        engine,
        game.game_id,
        [mission_data(title="Step 1", payout="0.5")],
        startCap=10,
        description="Three steps",
    )
    response = offers(client, key)
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("statusCode", "message", "total", "offset", "limit")} == {
        "statusCode": 200,
        "message": "OK",
        "total": 2,
        "offset": 0,
        "limit": 20,
    }
    [m] = body["data"]["missions"]
    [q] = body["data"]["quests"]
    assert set(m) == MISSION_FIELDS and set(q) == QUEST_FIELDS
    assert set(q["missions"][0]) == QUEST_MISSION_FIELDS
    base = api_settings.base_url
    assert m == {
        "id": mission.id,
        "title": "Kill 10 players in one game",
        "description": "Win big",
        "thumbnail": "https://cdn.example/k.png",
        "expirationDate": "2030-01-01T00:00:00.000Z",
        "previewUrl": "https://game.example/preview",
        "trackingLink": f"{base}/missions/{mission.id}?owid={wall.owid}",
        "payout": 309.0,  # 1.234 USD × 250, rounded to 0 decimals
        "cap": 50,
        "isActive": True,
        "operatingSystem": ["Android"],
        "geotargeting": {"countriesInclude": ["US"], "countriesExclude": ["CA"]},
        "tags": ["pvp"],
        "instructions": "Do it",
        "requirements": "New players",
        "allowMultipleConversions": False,
        "currency": "GEM",
    }
    assert q["trackingLink"] == f"{base}/quests/{quest.id}?owid={wall.owid}"
    assert (q["name"], q["startCap"], q["description"], q["expirationDate"]) == (
        "Season opener",
        10,
        "Three steps",
        None,
    )
    assert q["missions"][0]["payout"] == 125.0 and q["missions"][0]["title"] == "Step 1"
    assert q["missions"][0]["currency"] == "GEM"


def test_payout_rounds_to_the_currency_decimals(client, game, engine, box):
    wall, key = make_offerwall(engine, box)
    with write_session(engine) as session:
        offerwalls.set_currency(
            session=session,
            offerwall=offerwalls.get_offerwall(session=session, ref=wall.id),
            name="Coins",
            code="CNS",
            exchange_rate=0.9,
            decimals=2,
        )
    make_mission(engine, game.game_id, payout="1.005")
    assert offers(client, key).json()["data"]["missions"][0]["payout"] == 0.9  # 0.9045 → 0.90


def test_each_mission_record_names_its_currency_also_after_a_change_of_code(
    client, game, engine, box
):
    wall, key = make_offerwall(engine, box)
    make_mission(engine, game.game_id, payout="1.00")
    make_quest(engine, game.game_id, [mission_data(payout="0.5")])

    def currencies(**params: str) -> list[str | None]:
        data = offers(client, key, **params).json()["data"]
        inside = [m for q in data["quests"] for m in q["missions"]]
        return [m.get("currency") for m in data["missions"] + inside]

    assert currencies() == ["USD", "USD"]
    with write_session(engine) as session:
        offerwalls.set_currency(
            session=session,
            offerwall=offerwalls.get_offerwall(session=session, ref=wall.id),
            name="Euro",
            code="EUR",
            exchange_rate=1,  # the rate unchanged: only the code tells the pages apart
            decimals=2,
        )
    assert currencies() == ["EUR", "EUR"]
    assert currencies(uid="player-1") == ["EUR", "EUR"]


def test_newest_first_across_missions_and_quests_and_pages_cut_across(client, game, wall, engine):
    created = []
    for i in range(5):
        if i % 2:
            created.append(
                ("quest", make_quest(engine, game.game_id, [mission_data()], name=f"Q{i}").id)
            )
        else:
            created.append(("mission", make_mission(engine, game.game_id, title=f"M{i}").id))
        time.sleep(0.005)
    newest_first = list(reversed(created))
    seen = []
    for offset in (0, 2, 4):
        body = offers(client, wall[1], limit="2", offset=str(offset)).json()
        assert body["total"] == 5
        page = {o["id"] for o in body["data"]["missions"]} | {
            o["id"] for o in body["data"]["quests"]
        }
        seen.append(page)
    assert seen == [
        {i for _, i in newest_first[0:2]},
        {i for _, i in newest_first[2:4]},
        {newest_first[4][1]},
    ]


def test_missions_inside_a_quest_appear_only_inside_it(client, game, wall, engine):
    make_quest(engine, game.game_id, [mission_data(title="Inside")])
    body = offers(client, wall[1]).json()
    assert body["total"] == 1 and body["data"]["missions"] == []
    assert body["data"]["quests"][0]["missions"][0]["title"] == "Inside"


def test_only_active_unexpired_uncapped_offers(client, game, wall, engine):
    make_mission(engine, game.game_id, title="Shown")
    make_mission(engine, game.game_id, title="Inactive", isActive=False)
    make_mission(
        engine,
        game.game_id,
        title="Expired",
        expirationDate=(datetime.now(UTC) - timedelta(hours=1)).isoformat(),
    )
    capped = make_mission(engine, game.game_id, title="Capped", cap=1)
    with write_session(engine) as session:
        row = session.get(Mission, capped.id)
        row.conversions = 1
        session.add(row)
    make_quest(engine, game.game_id, [mission_data(isActive=False)], name="Quest with nothing open")
    body = offers(client, wall[1]).json()
    assert body["total"] == 1
    assert [m["title"] for m in body["data"]["missions"]] == ["Shown"]


@pytest.mark.parametrize(
    ("params", "status", "used"),
    [
        ({}, 200, (20, 0)),
        ({"limit": "0"}, 200, (0, 0)),
        ({"limit": "100"}, 200, (100, 0)),
        ({"limit": "101"}, 200, (100, 0)),
        ({"limit": "5000", "offset": "3"}, 200, (100, 3)),
        ({"offset": "999"}, 200, (20, 999)),
        ({"limit": "-1"}, 400, None),
        ({"offset": "-1"}, 400, None),
        ({"limit": "abc"}, 400, None),
        ({"limit": "1.5"}, 400, None),
    ],
)
def test_pagination_edges(client, game, wall, engine, params, status, used):
    make_mission(engine, game.game_id)
    response = offers(client, wall[1], **params)
    assert response.status_code == status
    body = response.json()
    if used is None:
        assert body["code"] == "invalid_parameter" and body["statusCode"] == 400
        return
    assert (body["limit"], body["offset"]) == used
    assert body["total"] == 1
    listed = len(body["data"]["missions"]) + len(body["data"]["quests"])
    assert listed == (0 if used[0] == 0 or used[1] >= 1 else 1)


def test_missing_or_unknown_key_is_401(client):
    for key in (None, "qw_ak_unknown"):
        response = offers(client, key)
        assert response.status_code == 401
        assert response.json()["code"] == "invalid_api_key"


@pytest.mark.parametrize("status", [OfferwallStatus.SUSPENDED, OfferwallStatus.REJECTED])
def test_suspended_or_rejected_offerwall_is_403(client, engine, box, status):
    wall, key = make_offerwall(engine, box)
    with write_session(engine) as session:
        ow = offerwalls.get_offerwall(session=session, ref=wall.id)
        if status == OfferwallStatus.REJECTED:
            ow.status = OfferwallStatus.REJECTED  # an approved key, rejected since
            session.add(ow)
        else:
            offerwalls.suspend(session=session, offerwall=ow)
    response = offers(client, key)
    assert response.status_code == 403 and response.json()["code"] == "offerwall_not_approved"


def test_pending_offerwall_has_no_key_and_a_rotated_key_replaces_the_old(client, engine, box):
    _pending, none = make_offerwall(engine, box, approve=False)
    assert none is None
    wall, old = make_offerwall(engine, box)
    with write_session(engine) as session:
        new = offerwalls.rotate_key(
            session=session,
            box=box,
            offerwall=offerwalls.get_offerwall(session=session, ref=wall.id),
        ).api_key
    assert offers(client, old).status_code == 401
    assert offers(client, new).status_code == 200


def _listed_ids(client, key) -> set[str]:
    data = offers(client, key).json()["data"]
    return {o["id"] for o in data["missions"]} | {o["id"] for o in data["quests"]}


def test_listing_follows_a_deactivation_at_once(client, game, wall, engine):
    from api.missions import offers as offer_service

    mission = make_mission(engine, game.game_id)
    assert _listed_ids(client, wall[1]) == {mission.id}
    with write_session(engine) as session:
        offer_service.set_active(session=session, kind="mission", offer_id=mission.id, active=False)
    assert _listed_ids(client, wall[1]) == set()


def test_listing_drops_a_mission_when_a_conversion_fills_its_cap(
    client, signed, game, wall, engine
):
    from tests.api.missions.test_missions import KILLS, at, start

    mission = make_mission(engine, game.game_id, **{**KILLS, "cap": 1})
    other = make_mission(engine, game.game_id, title="Other")
    start(client, signed, wall, mission.id, "p1")
    assert _listed_ids(client, wall[1]) == {mission.id, other.id}
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 12}})
    assert _listed_ids(client, wall[1]) == {other.id}


def test_listing_drops_a_quest_when_its_start_cap_fills(client, game, wall, engine):
    from tests.api.tracking_helpers import click

    quest = make_quest(engine, game.game_id, [mission_data()], startCap=1)
    assert _listed_ids(client, wall[1]) == {quest.id}
    assert click(client, "quest", quest.id, wall[0].owid, uid="first").status_code == 302
    assert _listed_ids(client, wall[1]) == set()


def test_listing_drops_an_offer_when_it_expires(client, game, wall, engine, time_machine):
    soon = datetime.now(UTC) + timedelta(minutes=5)
    mission = make_mission(engine, game.game_id, expirationDate=soon.isoformat())
    assert _listed_ids(client, wall[1]) == {mission.id}
    time_machine.move_to(soon - timedelta(seconds=1), tick=False)
    assert _listed_ids(client, wall[1]) == {mission.id}
    time_machine.move_to(soon + timedelta(seconds=1), tick=False)
    assert _listed_ids(client, wall[1]) == set()
