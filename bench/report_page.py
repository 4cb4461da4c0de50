"""The portal's reports page per sub1 when sub1 has 100,000 values: the time to open it.

Seeds a throwaway database (a temporary SQLite file, or a database of its own on the
PostgreSQL server of `--database-url`, dropped at the end) with one offerwall's clicks of
today, each with its own sub1, inserted in bulk. Then times what the page asks for when it
opens and pages (`figures.paged_report`: a page of 50, the totals of every row) and, beside
it, the whole report the page used to build. Prints figures; asserts nothing.

    .venv/bin/python bench/report_page.py [--values 100000] [--database-url URL]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.accounts import Account
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, new_session, write_connection, write_session
from api.publishers.offerwalls import approve, create_offerwall
from api.reports import figures as reports
from api.reports import ranges
from api.studios import create_game
from bench.common import add_target_arguments, emit, temp_dir, throwaway_database
from models import Mission, PlatformUser, tables
from models.types import utcnow

CHUNK = 20_000
STAFF = Account("s", "staff@example.com", "", "staff", None, None)


def seed(url: str, values: int) -> None:
    engine = build_engine(url)
    with write_session(engine) as session:
        game = create_game(session=session, box=SecretBox(["bench-key"]), name="Game").game_id
        mission = Mission(
            game_id=game,
            title="Mission",
            destination_url="https://g.example/",
            payout_micros=1_000_000,
            rule_event="WIN",
        )
        wall = create_offerwall(session=session, name="Wall")
        approve(session=session, box=SecretBox(["bench-key"]), offerwall=wall)
        player = PlatformUser(offerwall_id=wall.id, uid="crowd")
        session.add_all([mission, player])
        session.flush()
        ids = (wall.id, mission.id, player.id)
    now = utcnow()
    for offset in range(0, values, CHUNK):
        rows = [
            {
                "offerwall_id": ids[0],
                "mission_id": ids[1],
                "platform_user_id": ids[2],
                "sub1": f"s{i:06d}",
                "ip": "203.0.113.1",
                "user_agent": "",
                "created_at": now,
            }
            for i in range(offset, min(values, offset + CHUNK))
        ]
        with write_connection(engine) as conn:
            conn.execute(tables.click.insert(), rows)
    # The planner's statistics, as autovacuum keeps them on a server that has run a while.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE"))
    engine.dispose()


def timed(url: str, runs: int, build) -> tuple[float, float, object]:
    engine = build_engine(url)
    times, result = [], None
    for _ in range(runs):
        began = time.perf_counter()
        with new_session(engine) as session:
            result = build(session)
        times.append((time.perf_counter() - began) * 1000)
    engine.dispose()
    return statistics.median(times), max(times), result


def measure(url: str, runs: int) -> None:
    first, last = ranges.parse_range("", "")

    def page(number: int):
        return lambda session: reports.paged_report(
            session=session,
            account=STAFF,
            dimension="sub1",
            first=first,
            last=last,
            page=number,
        )

    for label, number in (("first page", 1), ("page 1,000", 1000)):
        median, worst, found = timed(url, runs, page(number))
        assert isinstance(found, reports.ReportPage)
        print(
            f"reports page per sub1, {label}: {len(found.report.rows)} rows of "
            f"{found.report.count:,}: median {median:.0f} ms, max {worst:.0f} ms"
        )
        emit(f"report_page_{number}", {"median": median, "max": worst})
    median, worst, whole = timed(
        url,
        1,
        lambda session: reports.build_report(
            session=session, account=STAFF, dimension="sub1", first=first, last=last
        ),
    )
    assert isinstance(whole, reports.Report)
    print(
        f"the whole report ({len(whole.rows):,} rows), as the page built it before: {median:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--values", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    add_target_arguments(parser)  # --api-workers is accepted; the report runs in-process
    args = parser.parse_args()
    data = temp_dir()
    try:
        with throwaway_database(args.database_url, data) as url:
            migrate(url)
            seed(url, args.values)
            measure(url, args.runs)
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
