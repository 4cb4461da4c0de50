"""The backtest over a large history: 1,000,000 stored events of 10,000 players.

Seeds a throwaway database (a temporary SQLite file, or a database of its own on the
PostgreSQL server of `--database-url`, dropped at the end) with a month of events of one
game (kills, matches with a map and a score, logins, in groups), then times
`run_backtest` over them with missions of several kinds, and prints events per second
and the peak memory the pass added. Prints figures; asserts nothing.

    .venv/bin/python -m bench.backtest [--events 1000000] [--players 10000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, write_connection, write_session
from api.missions.backtest import run_backtest
from api.studios import create_game
from bench.common import add_target_arguments, emit, temp_dir, throwaway_database
from models import tables
from models.offer_schemas import MissionIn

CHUNK = 20_000
DAYS = 30
MAPS = ["desert", "jungle", "city", "harbor", "arctic", "canyon"]


def _mission(title: str, rule: dict, **more: object) -> MissionIn:
    return MissionIn.model_validate(
        {"title": title, "payout": "0.25", "destinationUrl": "https://g.example/", "rule": rule}
        | more
    )


MISSIONS = [
    _mission(
        "10 kills in one match",
        {"event": "KILL", "per": "groupId", "completion": {"threshold": 10}},
        allowMultipleConversions=True,
        maxEventsPerMinute=30,
    ),
    _mission(
        "Score 1000+ in 3 matches in a row",
        {
            "event": "MATCH_END",
            "conditions": [{"field": "traits.score", "op": ">=", "value": 1000}],
            "completion": {"kind": "consecutive", "threshold": 3},
        },
    ),
    _mission(
        "Play 5 different maps",
        {
            "event": "MATCH_END",
            "completion": {"kind": "distinct", "threshold": 5, "field": "traits.map"},
        },
    ),
    _mission(
        "A 7-day login streak",
        {
            "event": "LOGIN",
            "completion": {"kind": "streak", "threshold": 7, "timeZone": "Europe/Berlin"},
        },
        cap=500,
    ),
    _mission(
        "Desert or jungle, 20 kills within an hour",
        {
            "anyOf": [
                {
                    "event": "KILL",
                    "conditions": [
                        {"field": "traits.map", "op": "in", "value": ["desert", "jungle"]}
                    ],
                },
                {"event": "BOSS_KILL"},
            ],
            "window": {"seconds": 3600},
            "completion": {"threshold": 20},
        },
    ),
    _mission(
        "Login, then win within a day",
        {
            "steps": [
                {"event": "LOGIN"},
                {
                    "event": "MATCH_END",
                    "conditions": [{"field": "traits.won", "op": "==", "value": True}],
                },
            ],
            "within": {"seconds": 86400},
        },
    ),
]


def _player_events(rng: random.Random, player: int, count: int, now: datetime):
    """One player's `count` events: play sessions on random days of the month, each a
    login then matches of a few minutes (kills, a match end with map, score and result)
    under one groupId; one player in five also logs in every day."""
    made = 0
    if player % 5 == 0:  # one player in five logs in every day of the month
        for day in range(1, DAYS):
            yield "LOGIN", now - timedelta(days=day, seconds=rng.randint(0, 3600)), None, None, None
            made += 1
    while made < count:
        moment = now - timedelta(seconds=rng.randint(3600, DAYS * 86400 - 1))
        yield "LOGIN", moment, None, None, None
        made += 1
        for match in range(rng.randint(1, 4)):
            group, where = f"p{player}-{moment.timestamp():.0f}-{match}", rng.choice(MAPS)
            for _ in range(rng.randint(2, 14)):
                moment += timedelta(seconds=rng.randint(5, 60))
                name = "BOSS_KILL" if rng.random() < 0.02 else "KILL"
                yield (
                    name,
                    moment,
                    None,
                    {"map": where, "weapon": rng.choice(["bow", "axe"])},
                    group,
                )
                made += 1
            score = rng.randint(0, 2000)
            traits = {"map": where, "score": score, "won": rng.random() < 0.4}
            yield "MATCH_END", moment, float(score), traits, group
            made += 1
            if made >= count:
                return


def seed(url: str, *, events: int, players: int, now: datetime) -> str:
    engine = build_engine(url)
    rng = random.Random(7)
    with write_session(engine) as session:
        game_id = create_game(session=session, box=SecretBox(["bench-backtest"]), name="G").game_id
    started = time.perf_counter()
    rows: list[dict] = []
    for player in range(players):
        count = events // players + (1 if player < events % players else 0)
        for n, (name, moment, value, traits, group) in enumerate(
            _player_events(rng, player, count, now)
        ):
            if n >= count or moment > now:
                break
            rows.append(
                {
                    "game_id": game_id,
                    "user_id": f"player-{player:05d}",
                    "name": name,
                    "time": moment,
                    "value": value,
                    "traits": traits,
                    "group_id": group,
                    "received_at": moment,
                }
            )
            if len(rows) >= CHUNK:
                with write_connection(engine) as conn:
                    conn.execute(tables.event.insert(), rows)
                rows = []
    if rows:
        with write_connection(engine) as conn:
            conn.execute(tables.event.insert(), rows)
    print(
        f"seeded {events:,} events of {players:,} players in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return game_id


def measure(url: str, game_id: str, now: datetime, runs: int, label: str) -> None:
    engine = build_engine(url)
    # The peak memory a pass adds, traced on its own (tracing slows it several times over).
    tracemalloc.start()
    with engine.connect() as conn:
        run_backtest(conn, game_id=game_id, missions=MISSIONS, days=DAYS, now=now)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak memory a pass adds (traced run, not timed): {peak / 2**20:.1f} MiB", flush=True)
    rates = []
    for run in range(runs):
        began = time.perf_counter()
        with engine.connect() as conn:
            result = run_backtest(conn, game_id=game_id, missions=MISSIONS, days=DAYS, now=now)
        seconds = time.perf_counter() - began
        rates.append(result.events / seconds)
        print(
            f"run {run + 1}: {result.events:,} events, {result.players:,} players in "
            f"{seconds:.1f} s: {result.events / seconds:,.0f} events/s",
            flush=True,
        )
    for mission in result.as_json()["missions"]:
        print(
            f"  {mission['mission']:45} reached {mission['reached']:6,} "
            f"completions {mission['completions']:7,} median {mission['medianSecondsToComplete']} s "
            f"cost ${mission['costUsd']} set aside {mission['eventsSetAside']}"
        )
    best = max(rates)
    print(
        f"{label}: best of {runs} runs {best:,.0f} events/s (all: {', '.join(f'{r:,.0f}' for r in rates)})"
    )
    emit(f"backtest_{label}", {"rate": best, "rates": rates})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    add_target_arguments(parser)  # --api-workers is accepted; the backtest runs in-process
    args = parser.parse_args()
    data = temp_dir()
    try:
        with throwaway_database(args.database_url, data) as url:
            migrate(url)
            now = datetime.now(UTC)
            game_id = seed(url, events=args.events, players=args.players, now=now)
            label = "postgresql" if url.startswith("postgresql") else "sqlite"
            measure(url, game_id, now, args.runs, label)
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
