"""What observability costs the hot paths: the API as served (`api.asgi:app`, with the
probes and the request metrics around it) against the same API without them
(bench/unmeasured.py), both served the same way (`uvicorn --workers N`) on the same
database, in alternating rounds. Target: the measured API keeps at least 97% of the
unmeasured one's throughput, and its p99 is at most 3% above, on the offers route and on
ingestion.

    .venv/bin/python bench/observability.py [--requests 4000] [--batches 300] [--rounds 3]
        [--own-runs 15] [--database-url URL] [--api-workers N]

It also measures the wrappers' own CPU per request in process (the least of `--own-runs`
runs through them to an app that answers at once, less the app alone), the figure the
machine's noise cannot inflate, and gives it as a share of the least CPU a request costs
the unmeasured server.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from api.core.crypto import SecretBox
from bench.common import (
    LoadResult,
    add_target_arguments,
    api_workers,
    cpu_seconds,
    emit,
    fire_raw,
    http_request,
    prepared,
    questwall,
    reference_process,
    target_label,
)
from bench.ingest import EVENTS_PER_BATCH, make_batches
from bench.offers import seed

APPS = {"measured": "api.asgi:app", "unmeasured": "bench.unmeasured:app"}


def under_load(server: subprocess.Popen[bytes], port: int, requests: list[bytes]) -> Run:
    """The load's figures and the server's CPU per request (the load client shares the
    machine, so throughput alone moves with it; the CPU a request costs does not)."""
    before = cpu_seconds(server.pid, None)[0]
    load = fire_raw(port, requests, 16)
    used = cpu_seconds(server.pid, None)[0] - before
    return Run(load, 1e6 * used / load.requests)


@dataclass
class Run:
    load: LoadResult
    cpu_us_per_request: float


def wrappers_cost(runs: int = 15, requests: int = 20_000) -> float:
    """The wrappers' own CPU per request (probes, request id, tally, request line), in
    microseconds: a request through them to an app that answers at once, less the same
    request to that app alone; the least of `runs` runs (what noise cannot lower). The
    request lines go to /dev/null, as to any file."""
    import asyncio
    import os

    from api.ops import Readiness, configure_logging, with_metrics, with_probes

    configure_logging("json", "INFO", stream=open(os.devnull, "w"))  # noqa: SIM115

    async def answer(scope: dict, receive: object, send: object) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"[]"})  # type: ignore[operator]

    async def sent(message: dict) -> None:
        pass

    async def received() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/offerwall/offers",
        "headers": [(b"x-api-key", b"qw_ak_x")],
        "client": ("127.0.0.1", 50000),
    }
    observed = with_probes(
        with_metrics(answer, routes=None, allow="127.0.0.1/32"),
        Readiness(None),  # type: ignore[arg-type]
    )

    async def per_request(app: object) -> float:
        started = time.process_time()
        for _ in range(requests):
            await app(scope, received, sent)  # type: ignore[operator]
        return (time.process_time() - started) / requests * 1e6

    async def least() -> float:
        bare = min([await per_request(answer) for _ in range(runs)])
        wrapped = min([await per_request(observed) for _ in range(runs)])
        return wrapped - bare

    return asyncio.run(least())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--own-runs", type=int, default=15, help="runs of the in-process wrappers' cost"
    )
    add_target_arguments(parser)
    args = parser.parse_args()
    workers = max(api_workers(args), 1)
    results: dict[str, dict[str, list[LoadResult]]] = {
        name: {"offers": [], "ingest": []} for name in APPS
    }
    with prepared(args.database_url) as (data, env):
        key = seed(env["DATABASE_URL"], SecretBox([env["SECRET_KEY"]]))
        game = json.loads(questwall(env, "game", "create", "Observability"))
        rng = random.Random(7)
        offers = [
            http_request(
                "GET",
                f"/offerwall/offers?limit=20&offset={20 * rng.randrange(0, 50)}",
                headers={"x-api-key": key},
            )
            for _ in range(args.requests + 200)
        ]
        # Each round and app gets batches of its own: a user's event times only increase.
        stream = make_batches(game, len(APPS) * args.rounds * (20 + args.batches))
        chunks = iter(
            stream[i : i + 20 + args.batches] for i in range(0, len(stream), 20 + args.batches)
        )
        for _ in range(args.rounds):
            for name, app in APPS.items():
                with reference_process(app, env, data, workers) as (port, server):
                    fire_raw(port, offers[:200], 16)
                    results[name]["offers"].append(under_load(server, port, offers[200:]))
                    batches = next(chunks)
                    fire_raw(port, batches[:20], 4)
                    results[name]["ingest"].append(under_load(server, port, batches[20:]))
    print(f"server: {target_label(args)}, uvicorn --workers {workers}, {args.rounds} rounds")
    own = wrappers_cost(runs=args.own_runs, requests=20_000 if args.own_runs > 1 else 500)
    print(f"the wrappers' own CPU per request: {own:.1f} us (least of 15 runs in process)")
    for workload, per in (("offers", 1), ("ingest", EVENTS_PER_BATCH)):
        figures = {}
        for name in APPS:
            runs = results[name][workload]
            figures[name] = {
                "rate": statistics.median(r.load.requests * per / r.load.seconds for r in runs),
                "p99": statistics.median(r.load.pct(99) for r in runs),
                "cpu": statistics.median(r.cpu_us_per_request for r in runs),
                "statuses": sorted({s for r in runs for s in r.load.statuses}),
            }
        measured, bare = figures["measured"], figures["unmeasured"]
        rate_share = measured["rate"] / bare["rate"]
        p99_change = measured["p99"] / bare["p99"] - 1
        # A tiny load (the smoke test's) may use less CPU than the clock's tick can show.
        cpu_change = measured["cpu"] / bare["cpu"] - 1 if bare["cpu"] else 0.0
        unit = "requests" if workload == "offers" else "events"
        print(
            f"{workload}: measured {measured['rate']:,.0f} {unit}/s, p99 {measured['p99']:.1f} ms; "
            f"unmeasured {bare['rate']:,.0f} {unit}/s, p99 {bare['p99']:.1f} ms "
            f"(statuses {measured['statuses']} / {bare['statuses']})"
        )
        least = min(r.cpu_us_per_request for r in results["unmeasured"][workload])
        share = own / least if least else 0.0  # a tiny load may show no CPU tick at all
        print(
            f"  the wrappers' own CPU against the least CPU per request unmeasured "
            f"({least:.0f} us): {share:.1%} (target <= 3%)"
        )
        print(
            f"  throughput kept: {rate_share:.1%} (target >= 97%); "
            f"p99 change: {p99_change:+.1%} (target <= +3%); server CPU per request: "
            f"{measured['cpu']:.0f} us against {bare['cpu']:.0f} us ({cpu_change:+.1%})"
        )
        emit(
            f"observability_{workload}",
            {
                "rate": measured["rate"],
                "rate_unmeasured": bare["rate"],
                "throughput_kept": rate_share,
                "p99": measured["p99"],
                "p99_unmeasured": bare["p99"],
                "p99_change": p99_change,
                "cpu_us_per_request": measured["cpu"],
                "cpu_change": cpu_change,
                "wrappers_us": own,
                "wrappers_share": share,
                "statuses": {str(s): 1 for s in measured["statuses"]},
            },
        )


if __name__ == "__main__":
    main()
