"""Reports over a large database: 1,000,000 events, 200,000 clicks, 20,000 conversions.

Seeds a throwaway database (a temporary SQLite file, or a database of its own on the
PostgreSQL server of `--database-url`, dropped at the end) with bulk inserts, then
times every report the portal offers (30 days, per day / offer / offerwall / country) for
staff and for one studio's designer. Prints figures; asserts nothing.

    .venv/bin/python -m bench.reports [--events 1000000] [--clicks 200000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api.accounts import Account
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, new_session, write_connection, write_session
from api.publishers.offerwalls import approve, create_offerwall
from api.reports import figures as reports
from api.reports import ranges
from api.studios import create_game
from bench.common import add_target_arguments, emit, temp_dir, throwaway_database
from models import Click, Mission, PlatformUser, Studio, tables

COUNTRIES = ["US", "DE", "GB", "FR", "BR", "IN", "JP", None]
CHUNK = 20_000


def seed(url: str, *, events: int, clicks: int, conversions: int) -> tuple[Account, Account]:
    engine = build_engine(url)
    box = SecretBox(["bench-reports-key"])
    rng = random.Random(7)
    now = datetime.now(UTC)
    with write_session(engine) as session:
        studio = Studio(name="Bench Studio")
        session.add(studio)
        session.flush()
        game_ids = [
            create_game(
                session=session, box=box, name=f"G{i}", studio_id=studio.id if i < 5 else None
            ).game_id
            for i in range(10)
        ]
        missions = []
        for n in range(200):
            mission = Mission(
                game_id=game_ids[n % 10],
                title=f"Mission {n}",
                destination_url="https://g.example/",
                payout_micros=rng.randint(1, 50) * 100_000,
                rule_event="WIN",
            )
            session.add(mission)
            missions.append(mission)
        walls = [create_offerwall(session=session, name=f"Wall {i}") for i in range(20)]
        for wall in walls:
            approve(session=session, box=box, offerwall=wall)
        session.flush()
        mission_rows = [(m.id, m.payout_micros) for m in missions]
        wall_ids = [w.id for w in walls]
        users = [PlatformUser(offerwall_id=wall_ids[i % 20], uid=f"u{i}") for i in range(20011)]
        session.add_all(users)
        session.flush()
        user_ids = [u.id for u in users]
        studio_id = studio.id

    def moment() -> datetime:
        return now - timedelta(seconds=rng.randint(0, 30 * 86400))

    started = time.perf_counter()
    for offset in range(0, events, CHUNK):
        rows = [
            {
                "game_id": game_ids[i % 10],
                "user_id": f"p{i % 50000}",
                "name": "WIN",
                "time": moment(),
                "value": float(i % 3000),
                "received_at": moment(),
            }
            for i in range(offset, min(events, offset + CHUNK))
        ]
        with write_connection(engine) as conn:
            conn.execute(tables.event.insert(), rows)
    for offset in range(0, clicks, CHUNK):
        rows = []
        for i in range(offset, min(clicks, offset + CHUNK)):
            mission_id, _ = mission_rows[i % 200]
            rows.append(
                {
                    "offerwall_id": wall_ids[i % 20],
                    "mission_id": mission_id,
                    "platform_user_id": user_ids[i % 20011],
                    "ip": "203.0.113.1",
                    "user_agent": "",
                    "country": rng.choice(COUNTRIES),
                    "os": "Android",
                    "started": i % 3 != 0,
                    "created_at": moment(),
                }
            )
        with write_connection(engine) as conn:
            conn.execute(tables.click.insert(), rows)
    with new_session(engine) as session:
        click_ids = list(
            session.execute(
                sa.select(
                    Click.id,
                    Click.mission_id,
                    Click.offerwall_id,  # type: ignore[call-overload]
                    Click.platform_user_id,
                    Click.created_at,
                ).limit(conversions)
            )
        )
    payout = dict(mission_rows)
    with write_connection(engine) as conn:
        conn.execute(
            tables.progress.insert(),
            [
                {
                    "id": n + 1,
                    "mission_id": m,
                    "platform_user_id": u,
                    "offerwall_id": w,
                    "click_id": c,
                    "status": "completed",
                    "started_at": at,
                }
                for n, (c, m, w, u, at) in enumerate(click_ids)
            ],
        )
        conn.execute(
            tables.conversion.insert(),
            [
                {
                    "transaction_id": f"t{n}",
                    "progress_id": n + 1,
                    "sequence": 1,
                    "mission_id": m,
                    "platform_user_id": u,
                    "offerwall_id": w,
                    "click_id": c,
                    "payout_micros": payout[m],
                    "created_at": (at + timedelta(minutes=5)),
                }
                for n, (c, m, w, u, at) in enumerate(click_ids)
            ],
        )
    print(
        f"seeded {events:,} events, {clicks:,} clicks, {len(click_ids):,} conversions "
        f"in {time.perf_counter() - started:.0f} s"
    )
    staff = Account("s", "staff@example.com", "", "staff", None, None)
    designer = Account("d", "designer@example.com", "", "designer", studio_id, None)
    return staff, designer


def measure(url: str, staff: Account, designer: Account, runs: int) -> None:
    engine = build_engine(url)
    first, last = ranges.parse_range("", "")
    for who, account in (("staff", staff), ("designer", designer)):
        for dimension in reports.DIMENSIONS:
            times = []
            for _ in range(runs):
                began = time.perf_counter()
                with new_session(engine) as session:
                    report = reports.build_report(
                        session=session,
                        account=account,
                        dimension=dimension,
                        first=first,
                        last=last,
                    )
                times.append((time.perf_counter() - began) * 1000)
            print(
                f"{who:9} per {dimension:10} {len(report.rows):4} rows, {report.totals.clicks:7,} clicks: "
                f"median {statistics.median(times):6.0f} ms, max {max(times):6.0f} ms"
            )
            emit(
                f"report_{who}_{dimension}", {"median": statistics.median(times), "max": max(times)}
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--clicks", type=int, default=200_000)
    parser.add_argument("--conversions", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    add_target_arguments(parser)  # --api-workers is accepted; reports run in-process
    args = parser.parse_args()
    data = temp_dir()
    try:
        with throwaway_database(args.database_url, data) as url:
            _run(url, args)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _run(url: str, args: argparse.Namespace) -> None:
    migrate(url)
    staff, designer = seed(
        url, events=args.events, clicks=args.clicks, conversions=args.conversions
    )
    measure(url, staff, designer, args.runs)


if __name__ == "__main__":
    main()
