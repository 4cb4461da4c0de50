"""Postback benchmarks.

1. Deliveries per second to a local receiver by 1 and by 2 `questwall worker` processes
   (`--workers 1,2`), each run on a fresh database; the receiver counts what arrives, so
   each postback is checked to be delivered exactly once (target: two workers on
   PostgreSQL at least 1.6x one worker).
2. In the server under test (the all-in-one `questwall serve` with its built-in
   dispatcher, or `questwall api --workers N` plus one `questwall worker`), the time from a
   conversion to its postback's first attempt (target: p99 at most 1 s).

    .venv/bin/python bench/postbacks.py [--postbacks 5000] [--workers 1,2]
        [--database-url URL] [--api-workers N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import sqlalchemy as sa

from api.core.crypto import SecretBox, signed_headers
from api.core.db import build_engine, write_session
from api.missions import offers
from api.publishers import offerwalls
from api.studios import games
from bench.common import (
    add_target_arguments,
    api_workers,
    emit,
    prepared,
    serving,
    start,
    stop,
    target_label,
)
from models import Click, Conversion, PlatformUser, Postback, Progress
from models.offer_schemas import MissionIn
from models.types import new_uuid
from tests.receiver import running_receiver

TEMPLATE = "/pb?tx={transaction_id}&uid={uid}&payout={payout}&h={hash_key}"


def _setup(url: str, box: SecretBox, receiver_url: str) -> dict[str, str]:
    engine = build_engine(url)
    with write_session(engine) as session:
        game = games.create_game(session=session, box=box, name="Postback bench")
        wall = offerwalls.create_offerwall(session=session, name="Bench wall")
        owid = offerwalls.approve(session=session, box=box, offerwall=wall).owid
        offerwalls.set_postback_url(session=session, offerwall=wall, url=receiver_url + TEMPLATE)
        mission = offers.save_mission(
            session=session,
            game_id=game.game_id,
            data=MissionIn.model_validate(
                {
                    "title": "Win",
                    "payout": 1,
                    "destinationUrl": "https://game.example/",
                    "allowMultipleConversions": True,
                    "rule": {"event": "WIN"},
                }
            ),
        )
    engine.dispose()
    return {
        "gameId": game.game_id,
        "clientId": game.client_id,
        "clientSecret": game.client_secret,
        "owid": owid or "",
        "offerwallId": wall.id,
        "missionId": mission.id,
    }


def _seed_due(url: str, ids: dict[str, str], count: int) -> None:
    """`count` conversions of one player, each with a due postback."""
    engine = build_engine(url)
    now = datetime.now(UTC)
    with write_session(engine) as session:
        player = new_uuid()
        session.execute(
            sa.insert(PlatformUser.__table__),
            [{"id": player, "offerwall_id": ids["offerwallId"], "uid": "p", "created_at": now}],
        )  # type: ignore[attr-defined]
        click_id = session.execute(
            sa.insert(Click.__table__).returning(Click.__table__.c.id),
            [
                {  # type: ignore[attr-defined]
                    "offerwall_id": ids["offerwallId"],
                    "platform_user_id": player,
                    "uid": "p",
                    "ip": "127.0.0.1",
                    "user_agent": "",
                    "started": True,
                    "created_at": now,
                }
            ],
        ).scalar_one()
        progress_id = session.execute(
            sa.insert(Progress.__table__).returning(Progress.__table__.c.id),
            [
                {  # type: ignore[attr-defined]
                    "mission_id": ids["missionId"],
                    "platform_user_id": player,
                    "offerwall_id": ids["offerwallId"],
                    "click_id": click_id,
                    "status": "started",
                    "started_at": now,
                    "count": 0,
                    "run": 0,
                    "total": 0.0,
                    "completions": count,
                    "updated_at": now,
                }
            ],
        ).scalar_one()
        conversion_ids = (
            session.execute(
                sa.insert(Conversion.__table__).returning(Conversion.__table__.c.id),
                [
                    {  # type: ignore[attr-defined]
                        "transaction_id": new_uuid(),
                        "progress_id": progress_id,
                        "sequence": i + 1,
                        "mission_id": ids["missionId"],
                        "platform_user_id": player,
                        "offerwall_id": ids["offerwallId"],
                        "click_id": click_id,
                        "payout_micros": 1_000_000,
                        "created_at": now,
                    }
                    for i in range(count)
                ],
            )
            .scalars()
            .all()
        )
        session.execute(
            sa.insert(Postback.__table__),
            [
                {  # type: ignore[attr-defined]
                    "conversion_id": c,
                    "offerwall_id": ids["offerwallId"],
                    "status": "pending",
                    "attempts": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                }
                for c in conversion_ids
            ],
        )
    engine.dispose()


def worker_throughput(server_url: str, workers: int, count: int) -> dict[str, object]:
    """`count` due postbacks, `workers` `questwall worker` processes, a local receiver that
    counts what arrives: deliveries per second, and whether each arrived exactly once."""
    with (
        prepared(server_url, POSTBACK_ALLOW_PRIVATE="true") as (data, env),
        running_receiver() as receiver,
    ):
        ids = _setup(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), receiver.url)
        _seed_due(env["DATABASE_URL"], ids, count)
        procs = [
            start(
                [sys.executable, "-m", "api.cli", "worker", "--threads", "32"],
                env,
                data / f"worker-{n}.log",
            )
            for n in range(workers)
        ]
        try:
            deadline = time.monotonic() + 300
            first: tuple[float, int] | None = None
            while len(receiver.requests) < count and time.monotonic() < deadline:
                done = len(receiver.requests)
                if done and first is None:
                    first = (time.perf_counter(), done)
                time.sleep(0.02)
            finished = time.perf_counter()
            time.sleep(0.5)  # a duplicate would arrive now
        finally:
            for proc in procs:
                stop(proc)
    received = list(receiver.requests)
    unique = len({parse_qs(urlsplit(r).query)["tx"][0] for r in received})
    start_time, start_count = first or (finished, 0)
    elapsed = finished - start_time
    rate = (unique - start_count) / elapsed if elapsed > 0 else 0.0
    print(
        f"{workers} worker process(es): {unique} of {count} postbacks delivered "
        f"({len(received)} requests, {len(received) - unique} duplicates), {rate:,.0f} deliveries/s"
    )
    return {
        "workers": workers,
        "rate": rate,
        "delivered": unique,
        "requests": len(received),
        "expected": count,
        "once_each": unique == count == len(received),
    }


def conversion_latency(server_url: str, api: int, conversions: int) -> dict[str, object]:
    """Signed events that convert, sent to the server under test; with `questwall api`
    (no dispatcher of its own) one `questwall worker` delivers."""
    with (
        prepared(server_url, POSTBACK_ALLOW_PRIVATE="true") as (data, env),
        running_receiver() as receiver,
    ):
        ids = _setup(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), receiver.url)
        worker = (
            start([sys.executable, "-m", "api.cli", "worker"], env, data / "worker.log")
            if api
            else None
        )
        with serving(env, data, api) as port:
            base = f"http://127.0.0.1:{port}"
            click = httpx.get(
                f"{base}/missions/{ids['missionId']}", params={"owid": ids["owid"], "uid": "lat"}
            )
            player = parse_qs(urlsplit(click.headers["location"]).query)["platformid"][0]

            def post(payload: dict) -> None:
                body = json.dumps(payload).encode()
                headers = signed_headers(ids["clientId"], ids["clientSecret"], body)
                assert (
                    httpx.post(
                        f"{base}/v2/custom-events", content=body, headers=headers
                    ).status_code
                    == 200
                )

            post(
                {
                    "gameId": ids["gameId"],
                    "identifiers": [{"userId": "g", "platformUserId": player}],
                }
            )
            per_request = 10
            for _ in range(conversions // per_request):
                when = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
                post(
                    {
                        "gameId": ids["gameId"],
                        "events": [{"userId": "g", "event": "WIN", "time": when}] * per_request,
                    }
                )
                time.sleep(0.05)
            deadline = time.monotonic() + 60
            while len(receiver.requests) < conversions and time.monotonic() < deadline:
                time.sleep(0.1)
        if worker:
            stop(worker)
        engine = build_engine(env["DATABASE_URL"])
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT c.created_at, min(a.started_at) FROM conversion c JOIN postback p ON p.conversion_id = c.id "
                    "JOIN postback_attempt a ON a.postback_id = p.id GROUP BY c.id, c.created_at"
                )
            ).all()
        engine.dispose()
    gaps = sorted(
        (datetime.fromisoformat(str(b)) - datetime.fromisoformat(str(a))).total_seconds() * 1000
        for a, b in rows
    )
    p99 = gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))]
    print(
        f"{'all-in-one server' if not api else f'api --workers {api} + 1 worker'}: "
        f"{len(gaps)} conversions, conversion → first attempt "
        f"p50 {statistics.median(gaps):.0f} ms, p99 {p99:.0f} ms, max {gaps[-1]:.0f} ms"
    )
    return {"conversions": len(gaps), "p50": statistics.median(gaps), "p99": p99}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postbacks", type=int, default=5000)
    parser.add_argument("--conversions", type=int, default=300)
    parser.add_argument(
        "--workers",
        default="1,2",
        help="worker process counts to measure, comma-separated (default: 1,2)",
    )
    add_target_arguments(parser)
    args = parser.parse_args()
    print(f"server: {target_label(args)}")
    for workers in [int(n) for n in args.workers.split(",") if n]:
        emit(f"postbacks_{workers}", worker_throughput(args.database_url, workers, args.postbacks))
    if args.conversions:
        latency = conversion_latency(args.database_url, api_workers(args), args.conversions)
        emit("conversion_latency", latency)


if __name__ == "__main__":
    main()
