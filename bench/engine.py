"""Benchmarks of the mission engine, tracking links and the lookup endpoint.

1. Ingestion with 200 active missions over 10 games and 10,000 started players (each
   started on STARTED_PER_PLAYER missions of their game), against the same load on a
   database without missions (target: at least 80% of it).
2. Tracking links: clicks per second with p99 latency, next to a bare FastAPI 302 route
   (bench/bare.py) served the same way in the same run (target: at least 50% of it, p99
   at most 25 ms at 16 connections).
3. Lookup of 1,000 user ids per request: p50 latency (target: <= 20 ms).

Against the server under test on 127.0.0.1 (`--database-url`, `--api-workers`: see
bench/common.py): the all-in-one `questwall serve` on SQLite by default.

    .venv/bin/python bench/engine.py [--batches 600] [--clicks 6000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api.core.crypto import SecretBox, signed_headers
from api.core.db import build_engine, write_session
from api.missions import offers
from api.publishers import offerwalls
from api.studios import games
from bench.common import (
    add_target_arguments,
    api_workers,
    bench_ip,
    emit,
    fire_raw,
    http_request,
    load_figures,
    prepared,
    questwall,
    reference,
    serving,
    target_label,
)
from bench.ingest import EVENTS_PER_BATCH, make_batches
from models import Click, GameUser, PlatformUser, Progress
from models.offer_schemas import MissionIn
from models.types import new_uuid

GAMES = 10
MISSIONS_PER_GAME = 20
PLAYERS = 10_000
NAMES = [f"EVENT_{i}" for i in range(10)]  # each name is the rule of 2 missions per game
STARTED_PER_PLAYER = 3  # offers a player has clicked; --all-missions starts every one
ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36"
)


def seed(
    url: str, box: SecretBox, per_player: int = STARTED_PER_PLAYER
) -> tuple[dict[str, str], list[str], str, str]:
    """10 games × 20 missions, an approved offerwall, 10,000 players each started on
    every mission of their game and linked to a game user. Returns the first game's
    credential, its game users, a click-target mission id and the owid."""
    engine = build_engine(url)
    rng = random.Random(7)
    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name="Bench wall")
        owid = offerwalls.approve(session=session, box=box, offerwall=wall).owid
        credentials, mission_ids = [], {}
        for g in range(GAMES):
            issued = games.create_game(session=session, box=box, name=f"Game {g}")
            credentials.append(issued)
            mission_ids[issued.game_id] = []
            for m in range(MISSIONS_PER_GAME):
                kind = ("count", "consecutive", "sum")[m % 3]
                rule = {
                    "event": NAMES[m % len(NAMES)],
                    "conditions": [
                        {"field": "traits.score", "op": ">=", "value": rng.randint(500, 1900)}
                    ],
                    "completion": {
                        "kind": kind,
                        "threshold": 1_000_000,
                        "field": "traits.score" if kind == "sum" else None,
                    },
                }
                data = MissionIn.model_validate(
                    {
                        "title": f"G{g} M{m}",
                        "payout": 1,
                        "destinationUrl": "https://game.example/",
                        "rule": rule,
                        "allowMultipleConversions": m % 2 == 0,
                    }
                )
                mission_ids[issued.game_id].append(
                    offers.save_mission(session=session, game_id=issued.game_id, data=data).id
                )
        now = datetime.now(UTC)
        players, users, clicks, progress = [], [], [], []
        for p in range(PLAYERS):
            game = credentials[p % GAMES]
            player = new_uuid()
            players.append(
                {"id": player, "offerwall_id": wall.id, "uid": f"pub-{p}", "created_at": now}
            )
            users.append(
                {
                    "game_id": game.game_id,
                    "user_id": f"user-{p}",
                    "platform_user_id": player,
                    "created_at": now,
                    "updated_at": now,
                }
            )
            clicks.append(
                {
                    "id": p + 1,
                    "offerwall_id": wall.id,
                    "platform_user_id": player,
                    "uid": f"pub-{p}",
                    "ip": "127.0.0.1",
                    "user_agent": ANDROID,
                    "started": True,
                    "created_at": now,
                }
            )
            for mission_id in rng.sample(mission_ids[game.game_id], per_player):
                progress.append(
                    {
                        "mission_id": mission_id,
                        "platform_user_id": player,
                        "offerwall_id": wall.id,
                        "click_id": p + 1,
                        "status": "started",
                        "started_at": now,
                        "count": 0,
                        "run": 0,
                        "total": 0.0,
                        "completions": 0,
                        "updated_at": now,
                    }
                )
        for model, rows in (
            (PlatformUser, players),
            (GameUser, users),
            (Click, clicks),
            (Progress, progress),
        ):
            session.execute(sa.insert(model.__table__), rows)  # type: ignore[attr-defined]
        if session.get_bind().dialect.name == "postgresql":  # ids given above: move the sequence
            session.execute(
                sa.text("SELECT setval(pg_get_serial_sequence('click', 'id'), :n)"), {"n": PLAYERS}
            )
        first = credentials[0]
        click_target = mission_ids[credentials[1].game_id][0]
    engine.dispose()
    game = {
        "gameId": first.game_id,
        "clientId": first.client_id,
        "clientSecret": first.client_secret,
    }
    return game, [f"user-{p}" for p in range(0, PLAYERS, GAMES)], click_target, owid


def lookup_requests(game: dict[str, str], users: list[str], count: int) -> list[bytes]:
    requests = []
    for i in range(count):
        ids = users[:500] + [f"unknown-{i}-{j}" for j in range(500)]
        body = json.dumps({"gameId": game["gameId"], "userIds": ids}).encode()
        headers = signed_headers(game["clientId"], game["clientSecret"], body)
        requests.append(
            http_request("POST", "/v2/platform-users/lookup", headers=headers, body=body)
        )
    return requests


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--clicks", type=int, default=6000)
    parser.add_argument("--lookups", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--all-missions",
        action="store_true",
        help="start every player on all 20 missions of their game",
    )
    parser.add_argument(
        "--started-share",
        type=float,
        default=1.0,
        help="share of the batches' users who started offers (1.0: every user, the worst case)",
    )
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)
    per_player = MISSIONS_PER_GAME if args.all_missions else STARTED_PER_PLAYER
    # Users who never clicked an offer play too: mixed in at the requested share.
    started_users = [f"user-{p}" for p in range(0, PLAYERS, GAMES)]
    casual = round(len(started_users) * (1 / args.started_share - 1))
    population = started_users + [f"casual-{i}" for i in range(casual)]
    random.Random(3).shuffle(population)

    # Baseline: the same batches (same users, same event names) on a database without missions.
    with prepared(args.database_url) as (base_dir, base_env):
        base_game = json.loads(questwall(base_env, "game", "create", "Baseline"))
        stream = make_batches(base_game, 20 + args.batches, users=population, names=NAMES)
        with serving(base_env, base_dir, workers) as port:
            fire_raw(port, stream[:20], 4)
            baseline = fire_raw(port, stream[20:], args.concurrency)

    with prepared(args.database_url, TRUSTED_PROXIES="127.0.0.1") as (data, env):
        t0 = time.perf_counter()
        game, users, click_target, owid = seed(
            env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), per_player
        )
        print(
            f"seeded {GAMES} games, {GAMES * MISSIONS_PER_GAME} missions, {PLAYERS} players, "
            f"{PLAYERS * per_player} progress rows in {time.perf_counter() - t0:.1f} s"
        )
        stream = make_batches(game, 20 + args.batches, users=population, names=NAMES)
        clicks = [
            http_request(
                "GET",
                f"/missions/{click_target}?owid={owid}&uid=bench-{i}&clickid=c{i}&platform_sub1=s",
                # Each player from an address of their own, as behind a proxy: the click
                # screening's per-IP limit (docs/fraud.md) is for farms, not this load.
                headers={"User-Agent": ANDROID, "X-Forwarded-For": bench_ip(i)},
            )
            for i in range(args.clicks + 200)
        ]
        lookups = lookup_requests(game, users, args.lookups + 20)
        half = 200 + args.clicks // 2
        with serving(env, data, workers) as port:
            fire_raw(port, stream[:20], 4)
            with_missions = fire_raw(port, stream[20:], args.concurrency)
            fire_raw(port, clicks[:200], 4)
            tracked = fire_raw(port, clicks[200:half], args.concurrency)
            tracked_light = fire_raw(port, clicks[half:], 4)
            fire_raw(port, lookups[:20], 1)
            looked = fire_raw(port, lookups[20:], 1)  # one at a time: latency, not throughput
        # The reference: a bare FastAPI 302 route, served the same way, same requests.
        with reference("bench.bare:app", env, data, workers) as port:
            fire_raw(port, clicks[:200], 4)
            bare = fire_raw(port, clicks[200:half], args.concurrency)

    rate0 = args.batches * EVENTS_PER_BATCH / baseline.seconds
    rate1 = args.batches * EVENTS_PER_BATCH / with_missions.seconds
    print(f"server: {target_label(args)}")
    print(
        f"ingestion without missions: {baseline.statuses}, {rate0:,.0f} events/s, p50 {baseline.p50:.1f} ms, p99 {baseline.pct(99):.1f} ms"
    )
    print(
        f"ingestion with {GAMES * MISSIONS_PER_GAME} missions / {PLAYERS} started players: {with_missions.statuses}, "
        f"{rate1:,.0f} events/s, p50 {with_missions.p50:.1f} ms, p99 {with_missions.pct(99):.1f} ms"
    )
    print(
        f"  with missions / without: {rate1 / rate0:.0%} (share of batch users with started offers: {args.started_share:.0%})"
    )
    for label, result in (
        (f"tracking links, {args.concurrency} connections", tracked),
        ("tracking links, 4 connections", tracked_light),
        (f"bare FastAPI 302, {args.concurrency} connections", bare),
    ):
        print(
            f"{label}: {result.statuses}, {result.requests / result.seconds:,.0f} clicks/s, "
            f"p50 {result.p50:.1f} ms, p99 {result.pct(99):.1f} ms"
        )
    click_rate, bare_rate = tracked.requests / tracked.seconds, bare.requests / bare.seconds
    print(f"  tracking links / bare 302: {click_rate / bare_rate:.0%}")
    print(
        f"lookup of 1,000 ids: {looked.statuses}, p50 {looked.p50:.1f} ms, p99 {looked.pct(99):.1f} ms"
    )
    emit("ingest_no_missions", load_figures(baseline, EVENTS_PER_BATCH))
    emit("ingest_missions", load_figures(with_missions, EVENTS_PER_BATCH))
    emit("clicks", load_figures(tracked))
    emit("clicks_light", load_figures(tracked_light))
    emit("bare_302", load_figures(bare))
    emit("lookup", load_figures(looked))


if __name__ == "__main__":
    main()
