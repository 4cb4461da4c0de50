"""Postback benchmarks.

1. Deliveries per second to a local receiver by one `questwall worker` process
   (target: at least 500/s).
2. In the all-in-one server (`questwall serve`, its built-in dispatcher), the time from a
   conversion to its postback's first attempt (target: p99 at most 1 s).

    .venv/bin/python bench/postbacks.py [--postbacks 5000]
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
from api.services import games, offers, offerwalls
from bench.common import bench_env, questwall, start, stop, temp_dir
from bench.ingest import all_in_one
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


def _delivered(url: str) -> int:
    engine = build_engine(url)
    with engine.connect() as conn:
        n = conn.execute(
            sa.text("SELECT count(*) FROM postback WHERE status = 'delivered'")
        ).scalar_one()
    engine.dispose()
    return int(n)


def worker_throughput(count: int) -> None:
    data = temp_dir()
    env = {**bench_env(data), "POSTBACK_ALLOW_PRIVATE": "true"}
    questwall(env, "migrate")
    with running_receiver() as receiver:
        ids = _setup(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), receiver.url)
        _seed_due(env["DATABASE_URL"], ids, count)
        worker = start(
            [sys.executable, "-m", "api.cli", "worker", "--threads", "32"], env, data / "worker.log"
        )
        try:
            t0 = time.perf_counter()
            first = None
            while time.perf_counter() - t0 < 300:
                done = _delivered(env["DATABASE_URL"])
                if done and first is None:
                    first = (time.perf_counter(), done)
                if done >= count:
                    break
                time.sleep(0.1)
            elapsed = time.perf_counter() - first[0] if first else float("nan")
        finally:
            stop(worker)
    delivered = len({parse_qs(urlsplit(r).query)["tx"][0] for r in receiver.requests})
    rate = (count - (first[1] if first else 0)) / elapsed if elapsed else 0
    print(
        f"one worker process: {delivered} of {count} postbacks delivered once each "
        f"({len(receiver.requests)} requests), {rate:,.0f} deliveries/s"
    )


def conversion_latency(conversions: int) -> None:
    data = temp_dir()
    env = {**bench_env(data), "POSTBACK_ALLOW_PRIVATE": "true"}
    questwall(env, "migrate")
    with running_receiver() as receiver:
        ids = _setup(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]), receiver.url)
        with all_in_one(env, data) as port:
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
        f"all-in-one server: {len(gaps)} conversions, conversion → first attempt "
        f"p50 {statistics.median(gaps):.0f} ms, p99 {p99:.0f} ms, max {gaps[-1]:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postbacks", type=int, default=5000)
    parser.add_argument("--conversions", type=int, default=300)
    args = parser.parse_args()
    worker_throughput(args.postbacks)
    conversion_latency(args.conversions)


if __name__ == "__main__":
    main()
