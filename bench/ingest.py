"""Ingestion benchmark.

Signed 100-event batches from 50 users, sent concurrently to the running all-in-one
server (`questwall serve`, SQLite). Prints events stored per second and p50/p99 latency,
and in the same run the throughput of a parse-only ceiling (bench/parse_only.py) served
by granian the same way: it checks the signature and validates with the project's models,
and stores nothing.

    .venv/bin/python bench/ingest.py [--batches 600] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.core.crypto import signed_headers
from bench.common import (
    ROOT,
    bench_env,
    fire_raw,
    free_port,
    http_request,
    questwall,
    start,
    stop,
    temp_dir,
    wait_until_up,
)

USERS = 50
EVENTS_PER_BATCH = 100
DEFAULT_NAMES = ("KILL_PLAYER", "MATCH_END")


def make_batches(
    game: dict[str, str],
    count: int,
    *,
    users: Sequence[str] | None = None,
    names: Sequence[str] = DEFAULT_NAMES,
) -> list[bytes]:
    """Pre-signed requests, so the client spends its CPU on sending, not signing."""
    users = users or [f"player-{i}" for i in range(USERS)]
    base = datetime.now(UTC) + timedelta(seconds=1)
    requests = []
    for b in range(count):
        batch_users = [users[(b * USERS + i) % len(users)] for i in range(USERS)]
        events = []
        for i in range(EVENTS_PER_BATCH):
            n = b * EVENTS_PER_BATCH + i
            moment = base + timedelta(microseconds=n * 10)
            events.append(
                {
                    "userId": batch_users[i % USERS],
                    "event": names[n % len(names)],
                    "time": moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                    "value": n % 2000,
                    "groupId": f"match-{b}",
                    "traits": {
                        "score": n % 2000,
                        "isSurvivor": bool(n % 3),
                        "weapon": "bow",
                        "kills": n % 13,
                    },
                }
            )
        body = json.dumps(
            {"gameId": game["gameId"], "events": events, "identifiers": []}, separators=(",", ":")
        ).encode()
        headers = signed_headers(game["clientId"], game["clientSecret"], body)
        requests.append(http_request("POST", "/v2/custom-events", headers=headers, body=body))
    return requests


@contextmanager
def all_in_one(env: dict[str, str], data: Path) -> Iterator[int]:
    """`questwall serve` on a free port, stopped on exit."""
    port = free_port()
    server = start(
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--host", "127.0.0.1"],
        env,
        data / f"serve-{port}.log",
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/ping", server)
        yield port
    finally:
        stop(server)


def stored_events(data: Path) -> int:
    return sqlite3.connect(data / "bench.db").execute("SELECT count(*) FROM event").fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    data = temp_dir()
    env = bench_env(data)
    questwall(env, "migrate")
    game = json.loads(questwall(env, "game", "create", "Benchmark"))
    # One stream, warm-up first: each user's event times keep increasing, as a game's do.
    stream = make_batches(game, 20 + args.batches)
    warmup, batches = stream[:20], stream[20:]

    # 1. The all-in-one server (portal + API, one process, SQLite).
    with all_in_one(env, data) as port:
        fire_raw(port, warmup, 4)
        full = fire_raw(port, batches, args.concurrency)
    stored = stored_events(data) - len(warmup) * EVENTS_PER_BATCH

    # 2. The parse-only ceiling, served by granian with one worker like the server above.
    port = free_port()
    ceiling_env = {
        **env,
        "BENCH_CLIENT_ID": game["clientId"],
        "BENCH_CLIENT_SECRET": game["clientSecret"],
    }
    ceiling = start(
        [
            str(ROOT / ".venv/bin/granian"),
            "--interface",
            "asgi",
            "--workers",
            "1",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "bench.parse_only:app",
        ],
        ceiling_env,
        data / "ceiling.log",
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/docs", ceiling)
        fire_raw(port, warmup, 4)
        parse = fire_raw(port, batches, args.concurrency)
    finally:
        stop(ceiling)

    stored_rate = stored / full.seconds
    parse_rate = parse.requests * EVENTS_PER_BATCH / parse.seconds
    print(
        f"batches: {args.batches} x {EVENTS_PER_BATCH} events from {USERS} users, concurrency {args.concurrency}"
    )
    print(f"all-in-one server (SQLite): statuses {full.statuses}, events stored {stored}")
    print(f"  events stored per second: {stored_rate:,.0f}")
    print(f"  request latency p50 {full.p50:.1f} ms, p99 {full.pct(99):.1f} ms")
    print(f"parse-only ceiling: statuses {parse.statuses}")
    print(f"  events parsed per second: {parse_rate:,.0f}")
    print(f"  request latency p50 {parse.p50:.1f} ms, p99 {parse.pct(99):.1f} ms")
    print(f"stored / parse-only: {stored_rate / parse_rate:.0%}")


if __name__ == "__main__":
    main()
