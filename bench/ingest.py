"""Ingestion benchmark.

Signed 100-event batches from 50 users, then 100-identifier batches (each a new user
with a Steam id and an e-mail address), sent concurrently to the server under test (the
all-in-one `questwall serve` on SQLite, or `questwall api --workers N` on a throwaway
PostgreSQL database). Prints events stored per second, p50/p99 latency and the status
codes, and in the same run the throughput of a parse-only ceiling (bench/parse_only.py)
served the same way: it checks the signature and validates with the project's models,
and stores nothing.

    .venv/bin/python bench/ingest.py [--batches 600] [--concurrency 16]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test] [--api-workers 2]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy.engine import make_url

from api.core.crypto import signed_headers
from bench.common import (
    add_target_arguments,
    api_workers,
    count_rows,
    cpu_seconds,
    emit,
    fire_raw,
    http_request,
    is_postgres,
    load_figures,
    prepared,
    questwall,
    reference,
    served_process,
    target_label,
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


def make_identifier_batches(game: dict[str, str], count: int) -> list[bytes]:
    """Pre-signed 100-identifier batches: each item a user new to the game with a Steam id
    and an e-mail address (the heavier case: every item is a new row)."""
    requests = []
    for b in range(count):
        items = [
            {
                "userId": f"linked-{b}-{i}",
                "steamId": f"7656{b:06d}{i:03d}",
                "email": f"u{b}.{i}@example.com",
            }
            for i in range(EVENTS_PER_BATCH)
        ]
        body = json.dumps(
            {"gameId": game["gameId"], "events": [], "identifiers": items}, separators=(",", ":")
        ).encode()
        headers = signed_headers(game["clientId"], game["clientSecret"], body)
        requests.append(http_request("POST", "/v2/custom-events", headers=headers, body=body))
    return requests


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=16)
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)

    with prepared(args.database_url) as (data, env):
        game = json.loads(questwall(env, "game", "create", "Benchmark"))
        # One stream, warm-up first: each user's event times keep increasing, as a game's do.
        stream = make_batches(game, 20 + args.batches)
        warmup, batches = stream[:20], stream[20:]
        linked = make_identifier_batches(game, 10 + args.batches // 2)

        # 1. The server under test.
        url = env["DATABASE_URL"]
        database = make_url(url).database if is_postgres(url) else None
        with served_process(env, data, workers) as (port, server):
            fire_raw(port, warmup, 4)
            before = cpu_seconds(server.pid, database)
            full = fire_raw(port, batches, args.concurrency)
            after = cpu_seconds(server.pid, database)
            fire_raw(port, linked[:10], 4)
            identified = fire_raw(port, linked[10:], args.concurrency)
        # What one batch cost the server's processes and, on PostgreSQL, the database.
        server_ms, db_ms = (
            1000 * (b - a) / len(batches) for a, b in zip(before, after, strict=True)
        )
        stored = count_rows(env["DATABASE_URL"], "SELECT count(*) FROM event")
        stored -= len(warmup) * EVENTS_PER_BATCH

        # 2. The parse-only ceiling, served the same way (same server, same workers).
        ceiling_env = {
            **env,
            "BENCH_CLIENT_ID": game["clientId"],
            "BENCH_CLIENT_SECRET": game["clientSecret"],
        }
        with reference("bench.parse_only:app", ceiling_env, data, workers) as port:
            fire_raw(port, warmup, 4)
            parse = fire_raw(port, batches, args.concurrency)

    stored_rate = stored / full.seconds
    parse_rate = parse.requests * EVENTS_PER_BATCH / parse.seconds
    label = target_label(args)
    print(
        f"batches: {args.batches} x {EVENTS_PER_BATCH} events from {USERS} users, concurrency {args.concurrency}"
    )
    print(f"{label}: statuses {full.statuses}, events stored {stored}")
    print(f"  events stored per second: {stored_rate:,.0f}")
    print(f"  request latency p50 {full.p50:.1f} ms, p99 {full.pct(99):.1f} ms")
    print(f"parse-only ceiling: statuses {parse.statuses}")
    print(f"  events parsed per second: {parse_rate:,.0f}")
    print(f"  request latency p50 {parse.p50:.1f} ms, p99 {parse.pct(99):.1f} ms")
    print(f"stored / parse-only: {stored_rate / parse_rate:.0%}")
    print(f"CPU per batch: server {server_ms:.2f} ms, PostgreSQL {db_ms:.2f} ms")
    identifier_rate = identified.statuses.get(200, 0) * EVENTS_PER_BATCH / identified.seconds
    print(
        f"100-identifier batches: statuses {identified.statuses}, "
        f"{identifier_rate:,.0f} identifiers/s ({identifier_rate / stored_rate:.0%} of the events), "
        f"p50 {identified.p50:.1f} ms, p99 {identified.pct(99):.1f} ms"
    )
    emit(
        "ingest",
        {
            **load_figures(full),
            "rate": stored_rate,
            "stored": stored,
            "server_cpu_ms_per_batch": server_ms,
            "db_cpu_ms_per_batch": db_ms,
        },
    )
    emit("parse_only", load_figures(parse, EVENTS_PER_BATCH))
    emit("identifiers", {**load_figures(identified, EVENTS_PER_BATCH), "rate": identifier_rate})


if __name__ == "__main__":
    main()
