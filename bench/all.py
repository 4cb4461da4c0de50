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
    "wall": (["--requests", "4000"], ["--requests", "200"]),
    "screening": (["--clicks", "3000"], ["--clicks", "200", "--rounds", "1"]),
    "postbacks": (["--postbacks", "5000"], ["--postbacks", "300", "--conversions", "20"]),
    "soak": ([], ["--peak-batches", "40"]),
    "observability": (
        ["--requests", "4000", "--batches", "300"],
        ["--requests", "300", "--batches", "20", "--rounds", "1"],
    ),
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


def _of(results: dict[str, dict[Target, Figures]], script: str, t: Target) -> Figures:
    return results.get(script, {}).get(t, {})


def _percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.1f}%"


def _share_row(
    name: str, target: str, bound: float, values: list[tuple[float | None, bool]]
) -> tuple[str, str, list[str]]:
    """A row of shares: each cell the share and whether it meets `bound` (None: the
    setup is not part of this target)."""
    cells = []
    for share, counts in values:
        if not counts:
            cells.append("—" if share is None else f"{_percent(share)} (not a target)")
        else:
            cells.append(f"{_percent(share)} {_verdict(_at_least(share, bound))}")
    return name, target, cells


def summary(results: dict[str, dict[Target, Figures]], targets: list[Target]) -> None:
    """Every target of the hot-paths issue, per setup, with "met" or "NOT met"."""
    sqlite = targets[0]
    rows: list[tuple[str, str, list[str]]] = []

    def shares(script: str, part: str, whole: str) -> list[float | None]:
        return [
            _ratio(_value(_of(results, script, t), part), _value(_of(results, script, t), whole))
            for t in targets
        ]

    everywhere = [True] * len(targets)
    rows.append(
        _share_row(
            "offers page of 20 of 1,000",
            "≥ 50% of the bare route",
            0.5,
            list(zip(shares("offers", "offers", "bare_offers"), everywhere, strict=True)),
        )
    )
    rows.append(
        _share_row(
            "the same with uid",
            "≥ 30% of the bare route",
            0.3,
            list(zip(shares("offers", "offers_uid", "bare_offers"), everywhere, strict=True)),
        )
    )
    cells = []
    for t in targets:
        wall = _of(results, "wall", t).get("wall")
        if not wall:
            cells.append(_verdict(None))
            continue
        rate, p99 = float(wall["rate"]), float(wall["p99"])  # type: ignore[arg-type]
        cells.append(f"{rate:,.0f}/s p99 {p99:.0f} ms {_verdict(rate >= 1000 and p99 <= 30)}")
    rows.append(("hosted wall, 3 started of 1,000", "≥ 1,000 pages/s, p99 ≤ 30 ms", cells))
    cells = []
    for t in targets:
        engine = _of(results, "engine", t)
        share = _ratio(_value(engine, "clicks"), _value(engine, "bare_302"))
        p99 = _value(engine, "clicks", "p99")
        ok = None if share is None or p99 is None else share >= 0.35 and p99 <= 25
        cells.append(f"{_percent(share)} p99 {_cell(p99)} ms {_verdict(ok)}")
    rows.append(("tracking clicks, 16 connections", "≥ 35% of a bare 302, p99 ≤ 25 ms", cells))
    ingest = shares("ingest", "ingest", "parse_only")
    rows.append(
        _share_row(
            "signed 100-event batches",
            "SQLite ≥ 40% of parse-only",
            0.4,
            [(v, t == sqlite) for v, t in zip(ingest, targets, strict=True)],
        )
    )

    def cpu(t: Target) -> float | None:
        figures = _of(results, "ingest", t)
        server = _value(figures, "ingest", "server_cpu_ms_per_batch")
        db = _value(figures, "ingest", "db_cpu_ms_per_batch")
        return None if server is None else server + (db or 0.0)

    base = cpu(sqlite)
    cells = [f"{base:.2f} ms/batch (the base)" if base else "—"]
    for t in targets[1:]:
        ratio = _ratio(cpu(t), base)
        if ratio is None:
            cells.append(_verdict(None))
            continue
        cells.append(f"{cpu(t) or 0:.2f} ms, {ratio:.2f}× {_verdict(ratio <= 1.3)}")
    rows.append(("CPU per batch, API + database", "PostgreSQL ≤ 1.3× SQLite", cells))
    missions = shares("engine", "ingest_missions", "ingest_no_missions")
    rows.append(
        _share_row(
            "200 missions, every user started",
            "≥ 80% of no missions",
            0.8,
            [(v, True) for v in missions],
        )
    )
    ids = shares("ingest", "identifiers", "ingest")
    rows.append(
        _share_row("100-identifier batches", "≥ 50% of the events/s", 0.5, [(v, True) for v in ids])
    )
    cells = []
    for t in targets:
        postbacks = _of(results, "postbacks", t)
        one, two = _value(postbacks, "postbacks_1"), _value(postbacks, "postbacks_2")
        once = all(bool(postbacks.get(f"postbacks_{n}", {}).get("once_each", True)) for n in (1, 2))
        if one is None:
            cells.append(_verdict(None))
        elif two is None:
            cells.append(f"{one:,.0f}/s {_verdict(one >= 500 and once)}")
        else:
            speedup = two / one
            cells.append(
                f"{one:,.0f}/s, ×2: {speedup:.2f}× {_verdict(one >= 500 and speedup >= 1.6 and once)}"
            )
    rows.append(("postbacks, signed, one worker", "≥ 500/s; two workers ≥ 1.6×", cells))
    screening = [
        _value(_of(results, "screening", t), "clicks_screening_on", "ratio") for t in targets
    ]
    rows.append(
        _share_row(
            "click screening on / off",
            "PostgreSQL with Redis ≥ 95%",
            0.95,
            [(v, t is not sqlite) for v, t in zip(screening, targets, strict=True)],
        )
    )
    for workload, name in (("offers", "offers"), ("ingest", "ingestion")):
        cells = []
        for t in targets:
            figures = _of(results, "observability", t).get(f"observability_{workload}")
            if not figures:
                cells.append(_verdict(None))
                continue
            share = float(figures["wrappers_share"])  # type: ignore[arg-type]
            kept = float(figures["throughput_kept"])  # type: ignore[arg-type]
            cells.append(f"{share:.1%} (served: {kept:.0%}) {_verdict(share <= 0.03)}")
        rows.append((f"observability's own CPU, {name}", "≤ 3% of a request's CPU", cells))
    print("\n== Targets")
    print(f"{'workload':34}{'target':36}" + "".join(f"{t.label:>34}" for t in targets))
    for name, target, cells in rows:
        print(f"{name:34}{target:36}" + "".join(f"{c:>34}" for c in cells))


def report(
    results: dict[str, dict[Target, Figures]], targets: list[Target], ran: list[str], quick: bool
) -> None:
    if "ingest" in ran:
        ingest = results["ingest"]
        table(
            "Ingestion: signed 100-event batches (events/s)",
            [
                *rate_rows(
                    ingest,
                    targets,
                    [
                        ("stored", "ingest"),
                        ("parse-only ceiling", "parse_only"),
                        ("identifiers (100 a batch)", "identifiers"),
                    ],
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

    if "offers" in ran:
        offers = results["offers"]
        table(
            "Offers page of 20 of 1,000",
            rate_rows(
                offers,
                targets,
                [
                    ("offers, 16 connections", "offers"),
                    ("offers with uid, 16 connections", "offers_uid"),
                    ("bare route, same bytes", "bare_offers"),
                ],
            ),
            targets,
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
    if "wall" in ran:
        table(
            "Hosted wall, a player with 3 started of 1,000",
            rate_rows(results["wall"], targets, [("wall pages, 16 connections", "wall")]),
            targets,
        )
    if "screening" in ran:
        table(
            "Click screening (PostgreSQL with Redis counters)",
            rate_rows(
                results["screening"],
                targets,
                [
                    ("screening off", "clicks_screening_off"),
                    ("screening on", "clicks_screening_on"),
                ],
            ),
            targets,
        )
    summary(results, targets)
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
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="the Redis the screening's counters use on PostgreSQL",
    )
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
            if script == "screening" and target.api_workers:
                extra = [*extra, "--redis-url", args.redis_url]
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
