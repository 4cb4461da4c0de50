"""The backtest (docs/missions.md#backtest) over a small history computed by hand, and
`questwall offers backtest` on a real database."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta

import yaml

from api.core.db import write_session
from api.missions.backtest import run_backtest
from models.offer_schemas import MissionIn
from models.tables import event as _event
from tests.factories import make_game, mission_data
from tests.live import cli, run_cli

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def store(engine, game_id: str, rows: list[tuple]) -> None:
    with write_session(engine) as session:
        session.execute(
            _event.insert(),
            [
                {
                    "game_id": game_id,
                    "user_id": user,
                    "name": name,
                    "time": time,
                    "value": value,
                    "traits": None,
                    "received_at": time,
                }
                for user, name, time, value in rows
            ],
        )


# Three kills, repeatable, up to 2 paid, and a kill worth more than 100 does not count.
KILLS = mission_data(
    title="Three kills",
    payout="0.50",
    cap=2,
    allowMultipleConversions=True,
    maxEventValue=100,
    rule={"event": "KILL", "completion": {"kind": "count", "threshold": 3}},
)
# Two Berlin days in a row with a login.
LOGINS = mission_data(
    title="Two days in a row",
    payout="1.00",
    rule={
        "event": "LOGIN",
        "completion": {"kind": "streak", "threshold": 2, "timeZone": "Europe/Berlin"},
    },
)
HISTORY = [
    # Before the 7 days: not read, carol is no player for it.
    *(("carol", "KILL", at(10, 9, m), None) for m in (0, 1, 2)),
    # alice: three kills 20 minutes after her first event, three more the next day; logins
    # on the 15th and at 23:30 UTC on the 16th, which is the 17th in Berlin: no streak.
    ("alice", "LOGIN", at(15, 10), None),
    *(("alice", "KILL", at(15, 10, m), None) for m in (5, 10, 20)),
    *(("alice", "KILL", at(16, 9, m), None) for m in (0, 1, 2)),
    ("alice", "LOGIN", at(16, 23, 30), None),
    # bob: two kills and one worth 500 (set aside).
    ("bob", "KILL", at(17, 8), 1.0),
    ("bob", "KILL", at(17, 8, 30), 1.0),
    ("bob", "KILL", at(17, 9), 500.0),
    # carol: three kills an hour after her first event; a login at 23:30 UTC, the next
    # day in Berlin, makes her streak 12.5 hours after it.
    ("carol", "LOGIN", at(19, 11), None),
    *(("carol", "KILL", at(19, h, m), None) for h, m in ((11, 30), (11, 40), (12, 0))),
    ("carol", "LOGIN", at(19, 23, 30), None),
    # After now: not read.
    ("dave", "KILL", at(20, 13), None),
]


def test_a_backtest_matches_the_history_counted_by_hand(engine, box):
    game = make_game(engine, box)
    store(engine, game.game_id, HISTORY)
    seen: list[tuple[int, int]] = []
    with engine.connect() as conn:
        result = run_backtest(
            conn,
            game_id=game.game_id,
            missions=[MissionIn.model_validate(KILLS), MissionIn.model_validate(LOGINS)],
            days=7,
            now=NOW,
            on_progress=lambda done, total: seen.append((done, total)),
        )
    body = result.as_json()
    assert (body["events"], body["players"]) == (16, 3)
    assert seen[-1] == (16, 16)
    kills, logins = body["missions"]
    assert kills == {
        "mission": "Three kills",
        "reached": 2,
        "completions": 3,
        "completionsPerDay": {"2026-11-15": 1, "2026-11-16": 1, "2026-11-19": 1},
        "medianSecondsToComplete": 2400,  # 1,200 s and 3,600 s
        "p90SecondsToComplete": 3600,
        "costUsd": "1",  # 3 completions, 2 paid under the cap, at 0.50
        "cap": 2,
        "eventsSetAside": 1,
    }
    assert logins == {
        "mission": "Two days in a row",
        "reached": 1,
        "completions": 1,
        "completionsPerDay": {"2026-11-19": 1},
        "medianSecondsToComplete": 45000,
        "p90SecondsToComplete": 45000,
        "costUsd": "1",
        "cap": None,
        "eventsSetAside": 0,
    }


def test_a_backtest_of_no_history_reaches_no_one(engine, box):
    game = make_game(engine, box)
    with engine.connect() as conn:
        result = run_backtest(
            conn, game_id=game.game_id, missions=[MissionIn.model_validate(KILLS)], days=30, now=NOW
        )
    assert result.as_json()["missions"][0]["reached"] == 0
    assert result.as_json()["missions"][0]["medianSecondsToComplete"] is None


def test_the_command_backtests_an_import_file(engine, box, db_url, tmp_path):
    game = make_game(engine, box)
    now = datetime.now(UTC)
    store(
        engine,
        game.game_id,
        [("erin", "KILL", now - timedelta(hours=h), None) for h in (5, 4, 3)],
    )
    path = tmp_path / "draft.yaml"
    quest = {"name": "Q", "destinationUrl": "https://game.example/q", "missions": [LOGINS]}
    path.write_text(
        yaml.safe_dump({"gameId": game.game_id, "missions": [KILLS], "quests": [quest]})
    )
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": "test-master-key-not-for-production",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
    }
    result = run_cli(env, "offers", "backtest", str(path), "--days", "1")
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert [m["mission"] for m in body["missions"]] == ["Three kills", "Two days in a row"]
    assert (body["players"], body["missions"][0]["completions"]) == (1, 1)
    assert "3 of 3 events read" in result.stderr
    # Nothing was saved.
    assert json.loads(cli(env, "offers", "list"))["missions"] == []
    # A file the engine refuses, and an unknown game, are said plainly.
    path.write_text(yaml.safe_dump({"gameId": "nope", "missions": [KILLS]}))
    refused = run_cli(env, "offers", "backtest", str(path))
    assert refused.returncode == 1 and "no game with id nope" in refused.stderr


def test_a_recurring_mission_counts_each_day_from_zero_and_a_ladder_costs_its_stages(engine, box):
    game = make_game(engine, box).game_id
    # Two wins a day (New York days): dave wins twice on the 15th, once late on the 16th
    # and once early on the 17th (in New York, two different days), twice on the 18th.
    store(
        engine,
        game,
        [
            ("dave", "WIN", at(15, 14), None),
            ("dave", "WIN", at(15, 15), None),
            ("dave", "WIN", at(17, 3), None),  # 22:00 on the 16th in New York
            ("dave", "WIN", at(17, 6), None),  # 01:00 on the 17th
            ("dave", "WIN", at(18, 14), None),
            ("dave", "WIN", at(18, 15), None),
            *(("erin", "KILL", at(16, 10, m), None) for m in range(6)),
        ],
    )
    daily = MissionIn.model_validate(
        mission_data(
            title="Two wins a day",
            payout="0.25",
            recurrence={"every": "day", "timeZone": "America/New_York"},
            rule={"event": "WIN", "completion": {"threshold": 2}},
        )
    )
    ladder = MissionIn.model_validate(
        {
            **mission_data(title="Kill ladder", rule={"event": "KILL"}),
            "payout": None,
            "stages": [{"threshold": 1, "payout": "0.10"}, {"threshold": 5, "payout": "0.40"}],
        }
    )
    with engine.connect() as conn:
        result = run_backtest(conn, game_id=game, missions=[daily, ladder], days=7, now=NOW)
    outcome = {m["mission"]: m for m in result.as_json()["missions"]}
    assert outcome["Two wins a day"]["completionsPerDay"] == {"2026-11-15": 1, "2026-11-18": 1}
    assert outcome["Two wins a day"]["costUsd"] == "0.5"
    assert (outcome["Kill ladder"]["completions"], outcome["Kill ladder"]["costUsd"]) == (2, "0.5")
