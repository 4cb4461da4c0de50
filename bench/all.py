"""Every benchmark, in one run, on SQLite (the all-in-one server) and on PostgreSQL with
1 and 2 API worker processes, printed side by side with the issue's targets.

Each script runs as its own process (`--database-url`, `--api-workers`) and prints one
`BENCH-RESULT {json}` line per workload; this script collects them into one table per
workload, with each target and whether this run met it. The benchmarks measure; nothing
here asserts. Full output of every script goes to the log directory it names.

    .venv/bin/python bench/all.py [--quick] [--soak-seconds 300]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/test]

The PostgreSQL server comes from `--database-url`, else BENCH_POSTGRES_URL, else the local
server; each script creates a throwaway database on it and drops it at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import DEFAULT_POSTGRES, RESULT_PREFIX, ROOT, temp_dir

Figures = dict[str, dict[str, object]]  # workload -> its figures


@dataclass(frozen=True)
class Target:
    """A server setup: the database and the API worker processes (0: all-in-one)."""

    label: str
    database_url: str
    api_workers: int


SIZES = {  # script -> its size arguments: full run, --quick
    "ingest": (["--batches", "600"], ["--batches", "30"]),
    "engine": (
        ["--batches", "600", "--clicks", "6000"],
        ["--batches", "20", "--clicks", "300", "--lookups", "10"],
    ),
    "offers": (["--requests", "6000"], ["--requests", "300"]),
    "postbacks": (["--postbacks", "5000"], ["--postbacks", "300", "--conversions", "20"]),
    "soak": ([], ["--peak-batches", "40"]),
}


def run(script: str, target: Target, extra: list[str], logs: Path) -> Figures:
    """One script against one target; its BENCH-RESULT lines by workload ({} if it failed)."""
    args = [sys.executable, str(ROOT / "bench" / f"{script}.py"), *extra]
    args += ["--database-url", target.database_url, "--api-workers", str(target.api_workers)]
    log = logs / f"{script}-{target.label.replace(' ', '-').replace('/', '')}.log"
    began = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    log.write_text(done.stdout + done.stderr)
    status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode}, see {log})"
    print(
        f"  {script:9} {target.label:22} {time.perf_counter() - began:6.0f} s  {status}", flush=True
    )
    figures: Figures = {}
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            record = json.loads(line[len(RESULT_PREFIX) :])
            figures[record.pop("workload")] = record
    return figures


def _value(figures: Figures, workload: str, key: str = "rate") -> float | None:
    value = figures.get(workload, {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def _cell(value: float | None, unit: str = "") -> str:
    return "—" if value is None else f"{value:,.0f}{unit}"


def _growth(mib: float | None) -> str:
    return "—" if mib is None else f"{mib:+.1f}"


def _verdict(ok: bool | None) -> str:
    return "n/a (not measured)" if ok is None else ("met" if ok else "NOT met")


def _at_least(value: float | None, bound: float) -> bool | None:
    return None if value is None else value >= bound


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def _no_5xx(figures: dict[str, object]) -> bool:
    statuses = figures.get("statuses", {})
    return isinstance(statuses, dict) and not any(str(k).startswith("5") for k in statuses)


def table(title: str, rows: list[tuple[str, list[str]]], targets: list[Target]) -> None:
    print(f"\n== {title}")
    print(f"{'':34}" + "".join(f"{t.label:>26}" for t in targets))
    for name, cells in rows:
        print(f"{name:34}" + "".join(f"{c:>26}" for c in cells))


def rate_rows(
    results: dict[Target, Figures], targets: list[Target], workloads: list[tuple[str, str]]
) -> list[tuple[str, list[str]]]:
    rows = []
    for name, workload in workloads:
        cells = []
        for t in targets:
            f = results[t].get(workload)
            cells.append(
                "—" if not f else f"{float(f['rate']):,.0f}/s p99 {float(f['p99']):.0f} ms"  # type: ignore[arg-type]
            )
        rows.append((name, cells))
        rows.append(
            (
                "  load client CPU",
                [
                    _cell(100 * float(results[t][workload]["client_cpu_share"]), "%")  # type: ignore[arg-type]
                    if workload in results[t]
                    else "—"
                    for t in targets
                ],
            )
        )
        rows.append(
            (
                "  statuses",
                [
                    json.dumps(results[t][workload]["statuses"]) if workload in results[t] else "—"
                    for t in targets
                ],
            )
        )
    return rows


def report(
    results: dict[str, dict[Target, Figures]], targets: list[Target], ran: list[str], quick: bool
) -> None:
    sqlite, pg2 = targets[0], targets[-1]
    if "ingest" in ran:
        ingest = results["ingest"]
        table(
            "Ingestion: signed 100-event batches (events/s)",
            [
                *rate_rows(
                    ingest, targets, [("stored", "ingest"), ("parse-only ceiling", "parse_only")]
                ),
                (
                    "  CPU per batch: server / db (ms)",
                    [
                        " / ".join(
                            "—" if v is None else f"{v:.2f}"
                            for v in (
                                _value(ingest[t], "ingest", "server_cpu_ms_per_batch"),
                                _value(ingest[t], "ingest", "db_cpu_ms_per_batch"),
                            )
                        )
                        for t in targets
                    ],
                ),
                (
                    "stored / parse-only",
                    [
                        _cell(
                            (
                                r := _ratio(
                                    _value(ingest[t], "ingest"), _value(ingest[t], "parse_only")
                                )
                            )
                            and r * 100,
                            "%",
                        )
                        for t in targets
                    ],
                ),
            ],
            targets,
        )
        sqlite_rate = _value(ingest[sqlite], "ingest")
        share = _ratio(sqlite_rate, _value(ingest[sqlite], "parse_only"))
        pg_rate = _value(ingest[pg2], "ingest")
        print(
            f"target: SQLite all-in-one ≥ 40% of the parse-only ceiling: {_verdict(_at_least(share, 0.4))}"
        )
        pg_ok = None
        if pg_rate is not None and sqlite_rate is not None:
            pg_ok = pg_rate >= sqlite_rate and _no_5xx(ingest[pg2].get("ingest", {}))
        print(f"target: {pg2.label} ≥ the SQLite figure, no 5xx: {_verdict(pg_ok)}")

    if "engine" in ran:
        engine = results["engine"]
        table(
            "Missions, tracking links, lookup",
            [
                *rate_rows(
                    engine,
                    targets,
                    [
                        ("ingest, no missions (events/s)", "ingest_no_missions"),
                        ("ingest, 200 missions (events/s)", "ingest_missions"),
                        ("clicks, 16 connections", "clicks"),
                        ("bare FastAPI 302, 16 connections", "bare_302"),
                        ("lookup of 1,000 ids (p50 below)", "lookup"),
                    ],
                ),
                ("  lookup p50 (ms)", [_cell(_value(engine[t], "lookup", "p50")) for t in targets]),
            ],
            targets,
        )
        for t in targets:
            missions = _ratio(
                _value(engine[t], "ingest_missions"), _value(engine[t], "ingest_no_missions")
            )
            clicks = _ratio(_value(engine[t], "clicks"), _value(engine[t], "bare_302"))
            p99 = _value(engine[t], "clicks", "p99")
            print(
                f"target ({t.label}): with 200 missions ≥ 80% of without: "
                f"{_cell(missions and missions * 100, '%')} {_verdict(_at_least(missions, 0.8))}; "
                f"clicks ≥ 50% of bare 302: {_cell(clicks and clicks * 100, '%')} "
                f"{_verdict(_at_least(clicks, 0.5))}; click p99 ≤ 25 ms: {_verdict(None if p99 is None else p99 <= 25)}"
            )

    if "offers" in ran:
        offers = results["offers"]
        table(
            "Offers page of 20 of 1,000",
            rate_rows(
                offers,
                targets,
                [("offers, 16 connections", "offers"), ("bare route, same bytes", "bare_offers")],
            ),
            targets,
        )
        for t in targets:
            share = _ratio(_value(offers[t], "offers"), _value(offers[t], "bare_offers"))
            print(
                f"target ({t.label}): ≥ 70% of the bare route: {_cell(share and share * 100, '%')} {_verdict(_at_least(share, 0.7))}"
            )

    if "postbacks" in ran:
        postbacks = results["postbacks"]
        table(
            "Postbacks (deliveries/s at a local receiver)",
            [
                (
                    f"{n} worker process(es)",
                    [
                        "—"
                        if (f := postbacks[t].get(f"postbacks_{n}")) is None
                        else f"{float(f['rate']):,.0f}/s once each: {f['once_each']}"  # type: ignore[arg-type]
                        for t in targets
                    ],
                )
                for n in (1, 2)
            ]
            + [
                (
                    "conversion → attempt p99 (ms)",
                    [_cell(_value(postbacks[t], "conversion_latency", "p99")) for t in targets],
                )
            ],
            targets,
        )
        one, two = (postbacks[pg2].get(f"postbacks_{n}", {}) for n in (1, 2))
        speedup = _ratio(
            _value(postbacks[pg2], "postbacks_2"), _value(postbacks[pg2], "postbacks_1")
        )
        once = bool(one.get("once_each")) and bool(two.get("once_each"))
        print(
            f"target: two workers on PostgreSQL ≥ 1.6× one, each delivered once: "
            f"{speedup and f'{speedup:.2f}×'} {_verdict(None if speedup is None else speedup >= 1.6 and once)}"
        )

    if "soak" in ran:
        soak = results["soak"]
        table(
            "Soak at half of peak",
            [
                ("peak (events/s)", [_cell(_value(soak[t], "soak", "peak_rate")) for t in targets]),
                ("batches sent", [_cell(_value(soak[t], "soak", "sent")) for t in targets]),
                ("errors", [_cell(_value(soak[t], "soak", "errors")) for t in targets]),
                (
                    "RSS after warm-up (MiB)",
                    [_growth(_value(soak[t], "soak", "rss_growth_mib")) for t in targets],
                ),
                (
                    "anonymous after warm-up (MiB)",
                    [_growth(_value(soak[t], "soak", "anon_growth_mib")) for t in targets],
                ),
            ],
            targets,
        )
        for t in targets:
            errors = _value(soak[t], "soak", "errors")
            print(
                f"target ({t.label}): 0 errors: {_verdict(None if errors is None else errors == 0)}; memory flat: see the growth above"
            )
    if quick:
        print("\n(--quick: tiny sizes, to check that everything runs; the figures mean little)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_POSTGRES_URL", DEFAULT_POSTGRES),
        help="the PostgreSQL server to create throwaway databases on",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check everything runs")
    parser.add_argument("--soak-seconds", type=float, default=300)
    parser.add_argument("--only", default="", help="comma-separated scripts to run (default: all)")
    args = parser.parse_args()
    targets = [
        Target("SQLite all-in-one", "", 0),
        Target("PostgreSQL api x1", args.database_url, 1),
        Target("PostgreSQL api x2", args.database_url, 2),
    ]
    logs = temp_dir()
    print(f"logs: {logs}")
    scripts = [s for s in SIZES if not args.only or s in args.only.split(",")]
    results: dict[str, dict[Target, Figures]] = {s: {t: {} for t in targets} for s in SIZES}
    for script in scripts:
        extra = SIZES[script][1 if args.quick else 0]
        for target in targets:
            if script == "postbacks":
                # Worker processes, not API workers, are what this one compares: 1 and 2 on
                # PostgreSQL (once, with one API worker for the conversion latency), 1 on SQLite.
                if target.api_workers == 2:
                    continue
                workers = ["--workers", "1,2" if target.api_workers else "1"]
                results[script][target] = run(script, target, extra + workers, logs)
                if target.api_workers:
                    results[script][targets[2]] = results[script][target]
                continue
            if script == "soak":
                if target.api_workers == 1:
                    continue
                extra = [
                    *SIZES[script][1 if args.quick else 0],
                    "--soak-seconds",
                    str(args.soak_seconds),
                ]
            results[script][target] = run(script, target, extra, logs)
    report(results, targets, scripts, args.quick)
    print("\nMeasured on this machine as it was: read the figures as ranges (see bench/README.md).")


if __name__ == "__main__":
    main()
