"""Click screening benchmark: tracking-link clicks with the screening off and on (target:
on within 15% of off in clicks/s).

Seeds the offers benchmark's catalog and offerwall, then serves the same database twice
per round, once with `QUESTWALL_CLICKS_PER_IP=0` and `QUESTWALL_CLICKS_PER_UID=0` (off)
and once with the defaults (on), and sends each a run of clicks on one mission: every
click a new player from an address of its own (198.18.0.0/15 through X-Forwarded-For)
with a User-Agent of its own, so the screening counts and parses every click and refuses
none. Rounds alternate off and on, so
the database's growth weighs on both alike; the best round of each is compared.

    .venv/bin/python bench/screening.py [--clicks 3000] [--rounds 2] [--redis-url URL]
        [--database-url URL] [--api-workers N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from api.core.crypto import SecretBox
from api.core.db import build_engine
from bench.common import (
    LoadResult,
    add_target_arguments,
    api_workers,
    bench_ip,
    emit,
    fire_raw,
    http_request,
    load_figures,
    prepared,
    serving,
    target_label,
)
from bench.offers import seed
from bench.wall import PHONE, owid_of, started_offers
from models import tables

OFF = {"QUESTWALL_CLICKS_PER_IP": "0", "QUESTWALL_CLICKS_PER_UID": "0"}


def phone(i: int) -> str:
    """An Android phone's User-Agent, a build of its own per player: the screening parses
    each one it has not seen (as the country and OS lookups do)."""
    return PHONE["user-agent"].replace("Chrome/120.0", f"Chrome/120.0.{i}")


def open_to_everyone(url: str, mission_id: str) -> None:
    """Drop the mission's country targeting: the benchmark addresses have no country."""
    engine = build_engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.update(tables.mission)
            .where(tables.mission.c.id == mission_id)
            .values(countries_include=[], countries_exclude=[])
        )
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clicks", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--redis-url", default="", help="share the screening's counters through this Redis"
    )
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = api_workers(args)
    extra = {"TRUSTED_PROXIES": "127.0.0.1", "REDIS_URL": args.redis_url}
    with prepared(args.database_url, **extra) as (data, env):
        url = env["DATABASE_URL"]
        seed(url, SecretBox([env["SECRET_KEY"]]))
        owid, [mission_id] = owid_of(url), started_offers(url, 1)
        open_to_everyone(url, mission_id)
        sent = 0

        def clicks(n: int) -> list[bytes]:
            nonlocal sent
            start, sent = sent, sent + n
            return [
                http_request(
                    "GET",
                    f"/missions/{mission_id}?owid={owid}&uid=bench-{i}&clickid=c{i}",
                    headers={**PHONE, "user-agent": phone(i), "x-forwarded-for": bench_ip(i)},
                )
                for i in range(start, start + n)
            ]

        results: dict[str, list[LoadResult]] = {"off": [], "on": []}
        for _ in range(args.rounds):
            for label, settings in (("off", OFF), ("on", {})):
                with serving({**env, **settings}, data, workers) as port:
                    fire_raw(port, clicks(200), 4)
                    results[label].append(fire_raw(port, clicks(args.clicks), args.concurrency))

    def best(label: str) -> LoadResult:
        return max(results[label], key=lambda r: r.requests / r.seconds)

    print(f"server: {target_label(args)}; screening counters in {args.redis_url or 'memory'}")
    for label in ("off", "on"):
        for r in results[label]:
            print(
                f"screening {label}, {args.concurrency} connections: {r.statuses}, "
                f"{r.requests / r.seconds:,.0f} clicks/s, p50 {r.p50:.1f} ms, "
                f"p99 {r.pct(99):.1f} ms"
            )
    off, on = best("off"), best("on")
    ratio = (on.requests / on.seconds) / (off.requests / off.seconds)

    def mean(label: str) -> float:
        return sum(r.requests / r.seconds for r in results[label]) / len(results[label])

    print(f"  best on / best off: {ratio:.0%} (target: at least 85%)")
    print(f"  mean on / mean off: {mean('on') / mean('off'):.0%}")
    emit("clicks_screening_off", load_figures(off))
    emit("clicks_screening_on", {**load_figures(on), "ratio": round(ratio, 3)})


if __name__ == "__main__":
    main()
