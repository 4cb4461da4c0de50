"""Ingestion benchmark (issue: foundation).

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
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.core.crypto import sign_request
from bench.common import (
    ROOT,
    bench_env,
    fire,
    free_port,
    questwall,
    start,
    stop,
    temp_dir,
    wait_until_up,
)

USERS = 50
EVENTS_PER_BATCH = 100


def make_batches(game: dict[str, str], count: int) -> list[tuple[bytes, dict[str, str]]]:
    """Pre-signed requests, so the client spends its CPU on sending, not signing."""
    base = datetime.now(UTC) - timedelta(minutes=30)
    batches = []
    for b in range(count):
        events = []
        for i in range(EVENTS_PER_BATCH):
            n = b * EVENTS_PER_BATCH + i
            events.append(
                {
                    "userId": f"player-{n % USERS}",
                    "event": "MATCH_END" if i % 2 else "KILL_PLAYER",
                    "time": (base + timedelta(milliseconds=n))
                    .isoformat(timespec="milliseconds")
                    .replace("+00:00", "Z"),
                    "value": n % 2000,
                    "groupId": f"match-{b}",
                    "traits": {"score": n % 2000, "isSurvivor": bool(n % 3), "weapon": "bow"},
                }
            )
        body = json.dumps(
            {"gameId": game["gameId"], "events": events, "identifiers": []}, separators=(",", ":")
        ).encode()
        ts = str(int(time.time() * 1000))
        headers = {
            "content-type": "application/json",
            "x-client-id": game["clientId"],
            "x-timestamp": ts,
            "x-signature": sign_request(game["clientSecret"], game["clientId"], ts, body),
        }
        batches.append((body, headers))
    return batches


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
    warmup = make_batches(game, 20)
    batches = make_batches(game, args.batches)

    # 1. The all-in-one server (portal + API, one process, SQLite).
    port = free_port()
    server = start(
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--host", "127.0.0.1"],
        env,
        data / "serve.log",
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/ping", server)
        url = f"http://127.0.0.1:{port}/v2/custom-events"
        fire(url, warmup, 4)
        full = fire(url, batches, args.concurrency)
    finally:
        stop(server)
    db = sqlite3.connect(data / "bench.db")
    stored = db.execute("SELECT count(*) FROM event").fetchone()[0] - len(warmup) * EVENTS_PER_BATCH

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
        url = f"http://127.0.0.1:{port}/v2/custom-events"
        fire(url, warmup, 4)
        parse = fire(url, batches, args.concurrency)
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
