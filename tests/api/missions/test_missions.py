"""Missions end to end: click → identifiers → events → conversion (docs/contract.md#progress-and-conversions)."""

from __future__ import annotations

import json
import threading

import pytest
from sqlmodel import select

from api.core.db import new_session, write_session
from api.ingest import SignedMessage, parse_batch, store_batch
from api.missions import offers
from models import Conversion, Mission, Progress, Quest
from tests.api.steps import KILLS, at, start
from tests.api.tracking_helpers import click, platform_id
from tests.databases import also_pgbouncer
from tests.factories import SignedClient, make_mission, make_quest, mission_data, now_ms


def conversions(engine) -> list[Conversion]:
    with new_session(engine) as session:
        return list(session.exec(select(Conversion).order_by(Conversion.id)))


def progress_of(engine, mission_id: str) -> list[Progress]:
    with new_session(engine) as session:
        return list(session.exec(select(Progress).where(Progress.mission_id == mission_id)))


SCORES = mission_data(
    title="Score 1000+ in 3 matches in a row",
    rule={
        "event": "MATCH_END",
        "conditions": [{"field": "traits.score", "op": ">=", "value": 1000}],
        "completion": {"kind": "consecutive", "threshold": 3},
    },
)


def test_kills_mission_converts_on_a_game_with_10_kills(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **KILLS)
    player = start(client, signed, wall, mission.id, "p1")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 9}})
    assert conversions(engine) == []
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(2), "traits": {"kills": 10}})
    [conversion] = conversions(engine)
    assert (conversion.mission_id, conversion.platform_user_id) == (mission.id, player)
    assert conversion.offerwall_id == wall[0].id and conversion.payout_micros == 1_500_000
    assert len(conversion.transaction_id) == 36
    [progress] = progress_of(engine, mission.id)
    assert progress.status == "completed"
    # Completed, not repeatable: more kills convert nothing more.
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(3), "traits": {"kills": 20}})
    assert len(conversions(engine)) == 1


def test_three_consecutive_scores_with_a_reset_in_between(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **SCORES)
    start(client, signed, wall, mission.id, "p1")

    def match(score: int, second: int) -> dict:
        return {
            "userId": "p1",
            "event": "MATCH_END",
            "time": at(second),
            "traits": {"score": score},
        }

    signed.events(
        match(1500, 1), match(1200, 2), {"userId": "p1", "event": "KILL_PLAYER", "time": at(3)}
    )
    signed.events(match(400, 4))  # the failing match resets the run
    signed.events(match(1000, 5), match(1100, 6))
    assert conversions(engine) == []
    [progress] = progress_of(engine, mission.id)
    assert (progress.count, progress.run) == (4, 2)
    signed.events(match(2000, 7))
    assert len(conversions(engine)) == 1


def test_events_before_the_start_do_not_count(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **KILLS)
    start(client, signed, wall, mission.id, "p1")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(-60), "traits": {"kills": 30}})
    assert conversions(engine) == []


def test_events_of_players_who_did_not_start_convert_nothing(client, signed, game, wall, engine):
    make_mission(engine, game.game_id, **KILLS)
    signed.identifiers({"userId": "p1", "email": "p1@example.com"})
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 30}})
    assert conversions(engine) == []


def test_repeatable_mission_converts_each_completion(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **{**KILLS, "allowMultipleConversions": True})
    start(client, signed, wall, mission.id, "p1")
    games = [
        {"userId": "p1", "event": "GAME_END", "time": at(i), "traits": {"kills": 12}}
        for i in range(1, 4)
    ]
    signed.events(*games)
    made = conversions(engine)
    assert [c.sequence for c in made] == [1, 2, 3]
    assert len({c.transaction_id for c in made}) == 3


def test_time_limit_expires_the_progress(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **{**KILLS, "timeLimitSeconds": 60})
    start(client, signed, wall, mission.id, "p1")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(90), "traits": {"kills": 12}})
    assert conversions(engine) == []
    assert progress_of(engine, mission.id)[0].status == "expired"


def test_inactive_mission_converts_no_one(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **KILLS)
    start(client, signed, wall, mission.id, "p1")
    with write_session(engine) as session:
        offers.set_active(session=session, kind="mission", offer_id=mission.id, active=False)
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 12}})
    assert conversions(engine) == []


def test_quest_of_three_missions_from_click_to_three_conversions(
    client, signed, game, wall, engine
):
    quest = make_quest(
        engine,
        game.game_id,
        [
            mission_data(title="Play", payout="0.10", rule={"event": "START_GAME"}),
            KILLS,
            mission_data(
                title="Spend",
                payout="2",
                rule={
                    "event": "PURCHASE",
                    "completion": {"kind": "sum", "threshold": 5, "field": "traits.usd"},
                },
            ),
        ],
    )
    player = start(client, signed, wall, quest.id, "p1", kind="quest")
    signed.events(
        {"userId": "p1", "event": "START_GAME", "time": at(1)},
        {"userId": "p1", "event": "GAME_END", "time": at(2), "traits": {"kills": 11}},
        {"userId": "p1", "event": "PURCHASE", "time": at(3), "traits": {"usd": 2.5}},
    )
    assert len(conversions(engine)) == 2
    signed.events({"userId": "p1", "event": "PURCHASE", "time": at(4), "traits": {"usd": 2.5}})
    made = conversions(engine)
    assert len(made) == 3
    assert {c.quest_id for c in made} == {quest.id}
    assert {c.platform_user_id for c in made} == {player}
    assert sorted(c.payout_micros for c in made) == [100_000, 1_500_000, 2_000_000]
    with new_session(engine) as session:
        assert session.get(Quest, quest.id).starts == 1


def test_identifiers_after_events_give_the_same_conversions(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **SCORES)
    late = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="late"))
    early = start(client, signed, wall, mission.id, "early")
    matches = lambda user: [  # noqa: E731
        {"userId": user, "event": "MATCH_END", "time": at(i), "traits": {"score": s}}
        for i, s in enumerate((1200, 300, 1500, 1600, 1700), start=1)
    ]
    signed.events(*matches("early"), *matches("late"))
    assert [c.platform_user_id for c in conversions(engine)] == [early]
    # The late player's game user is linked only now: the stored events count then.
    signed.identifiers({"userId": "late", "platformUserId": late})
    assert sorted(c.platform_user_id for c in conversions(engine)) == sorted([early, late])
    [a, b] = sorted(progress_of(engine, mission.id), key=lambda p: p.platform_user_id)
    assert (a.count, a.run, a.status) == (b.count, b.run, b.status)


def test_linking_by_a_verified_identifier_replays_stored_events(client, signed, game, wall, engine):
    from models import PlatformUserIdentifier

    mission = make_mission(engine, game.game_id, **KILLS)
    player = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="u"))
    with write_session(engine) as session:
        session.add(
            PlatformUserIdentifier(
                platform_user_id=player, kind="email", value_normalized="ada@example.com"
            )
        )
    signed.events({"userId": "g-ada", "event": "GAME_END", "time": at(1), "traits": {"kills": 10}})
    assert conversions(engine) == []
    signed.identifiers({"userId": "g-ada", "email": "ada@example.com"})
    assert [c.platform_user_id for c in conversions(engine)] == [player]


def test_relinking_does_not_pay_twice(client, signed, game, wall, engine):
    mission = make_mission(engine, game.game_id, **{**KILLS, "allowMultipleConversions": True})
    player = start(client, signed, wall, mission.id, "p1")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 12}})
    signed.identifiers({"userId": "p1", "platformUserId": None})
    signed.identifiers({"userId": "p1", "platformUserId": player})
    assert len(conversions(engine)) == 1


@also_pgbouncer
def test_cap_holds_under_parallel_completions(client, game, wall, engine, box, settings):
    mission = make_mission(engine, game.game_id, **{**KILLS, "cap": 5})
    signed = SignedClient(client, game)
    for i in range(20):
        start(client, signed, wall, mission.id, f"p{i}")
    requests = []
    for i in range(20):
        body = json.dumps(
            {
                "gameId": game.game_id,
                "events": [
                    {"userId": f"p{i}", "event": "GAME_END", "time": at(1), "traits": {"kills": 15}}
                ],
            }
        ).encode()
        headers = signed.headers(body, timestamp=now_ms() + i)
        requests.append(
            SignedMessage(
                headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
            )
        )
    barrier = threading.Barrier(20)
    statuses: list[int] = []

    def send(request: SignedMessage) -> None:
        barrier.wait()
        parsed = parse_batch(body=request.body, settings=settings)
        outcome = store_batch(
            engine=engine, box=box, settings=settings, request=request, parsed=parsed
        )
        statuses.append(outcome.status)

    threads = [threading.Thread(target=send, args=(r,)) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert statuses == [200] * 20
    assert len(conversions(engine)) == 5
    with new_session(engine) as session:
        assert session.get(Mission, mission.id).conversions == 5
        states = [p.status for p in session.exec(select(Progress))]
    assert states.count("completed") == 5 and states.count("capped") == 15


@pytest.mark.parametrize("order", ["identifiers first", "events first"])
def test_outcome_does_not_depend_on_arrival_order(client, signed, game, wall, engine, order):
    mission = make_mission(engine, game.game_id, **SCORES)
    player = platform_id(click(client, "mission", mission.id, wall[0].owid, uid="x"))
    events = [
        {"userId": "g", "event": "MATCH_END", "time": at(i), "traits": {"score": 1000 + i}}
        for i in range(1, 4)
    ]
    if order == "identifiers first":
        signed.identifiers({"userId": "g", "platformUserId": player})
        signed.events(*events)
    else:
        signed.events(*events)
        signed.identifiers({"userId": "g", "platformUserId": player})
    assert [c.platform_user_id for c in conversions(engine)] == [player]
