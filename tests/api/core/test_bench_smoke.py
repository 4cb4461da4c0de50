"""Every benchmark script runs end to end on tiny sizes, on SQLite and on PostgreSQL, so the
scripts do not rot. Figures are not checked (no timing assertion); what is checked is that
each script finishes, reports every workload it measures, and that no request failed.

The scripts that start a server use `questwall api --workers 1` on SQLite here: the
all-in-one server builds the portal first, which belongs to the browser tests, not to a
smoke test of a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from bench.common import DEFAULT_POSTGRES, RESULT_PREFIX, throwaway_database

ROOT = Path(__file__).resolve().parents[3]
PG_SERVER = os.environ.get("TEST_POSTGRES_URL", DEFAULT_POSTGRES)

# script -> (tiny size arguments, the workloads it must report)
SCRIPTS: dict[str, tuple[list[str], set[str]]] = {
    "ingest": (["--batches", "3"], {"ingest", "parse_only"}),
    "parse_only": (["--batches", "3"], {"parse_only"}),
    "engine": (
        ["--batches", "2", "--clicks", "20", "--lookups", "2"],
        {"ingest_no_missions", "ingest_missions", "clicks", "clicks_light", "bare_302", "lookup"},
    ),
    "offers": (["--requests", "20"], {"offers", "offers_light", "bare_offers"}),
    "postbacks": (
        ["--postbacks", "20", "--conversions", "10", "--workers", "1,2"],
        {"postbacks_1", "postbacks_2", "conversion_latency"},
    ),
    "reports": (
        ["--events", "200", "--clicks", "100", "--conversions", "10", "--runs", "1"],
        {"report_staff_day", "report_designer_country"},
    ),
    "soak": (["--soak-seconds", "2", "--peak-batches", "5"], {"soak"}),
    "screening": (
        ["--clicks", "40", "--rounds", "1"],
        {"clicks_screening_off", "clicks_screening_on"},
    ),
    "conversions": (
        ["--players", "20", "--popular", "200"],
        {"conversions_quiet", "conversions_popular"},
    ),
    "observability": (
        ["--requests", "20", "--batches", "3", "--rounds", "1", "--own-runs", "1"],
        {"observability_offers", "observability_ingest"},
    ),
    "audit": (["--actions", "3", "--held", "10", "--rounds", "1"], {"audit"}),
}


def run_bench(script: str, database_url: str) -> dict[str, dict[str, object]]:
    extra, _ = SCRIPTS[script]
    target = ["--database-url", database_url, "--api-workers", "1"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), *extra, *target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith(RESULT_PREFIX):
            record = json.loads(line[len(RESULT_PREFIX) :])
            results[record.pop("workload")] = record
    return results


def check(script: str, results: dict[str, dict[str, object]]) -> None:
    assert SCRIPTS[script][1] <= results.keys()
    for workload, figures in results.items():
        statuses = figures.get("statuses", {})
        assert isinstance(statuses, dict)
        assert all(str(code)[0] in "23" for code in statuses), (workload, statuses)
    for n in (1, 2):
        if f"postbacks_{n}" in results:
            assert results[f"postbacks_{n}"]["once_each"] is True
    for label in ("quiet", "popular"):  # every completing event made its conversion
        if f"conversions_{label}" in results:
            assert results[f"conversions_{label}"]["conversions"] == 20
    if "audit" in results:  # each conversion approved while recording is one event
        assert results["audit"]["approved_events"] == results["audit"]["held"]
    if "soak" in results:
        assert results["soak"]["errors"] == 0
    if "ingest" in results:  # what a batch cost the server and the database, in CPU
        for key in ("server_cpu_ms_per_batch", "db_cpu_ms_per_batch"):
            assert float(results["ingest"][key]) >= 0  # type: ignore[arg-type]


@pytest.mark.parametrize("script", SCRIPTS)
def test_bench_runs_on_sqlite(script: str) -> None:
    check(script, run_bench(script, ""))


# The scripts whose own code takes another path on PostgreSQL (moving a sequence, the
# database's CPU per batch). Every other script's code is the same on both databases and runs
# above on SQLite; the PostgreSQL plumbing they share (a throwaway database, migrated, the
# server on it) runs here and in `test_throwaway_database_is_dropped_even_on_error`.
ON_POSTGRES = ["engine", "ingest"]


@pytest.mark.postgres
@pytest.mark.parametrize("script", ON_POSTGRES)
def test_bench_runs_on_postgres(script: str, postgres_server_url: str) -> None:
    check(script, run_bench(script, PG_SERVER))


def _databases(server: str) -> set[str]:
    admin = sa.create_engine(server)
    try:
        with admin.connect() as conn:
            return set(conn.execute(sa.text("SELECT datname FROM pg_database")).scalars())
    finally:
        admin.dispose()


@pytest.mark.postgres
def test_throwaway_database_is_dropped_even_on_error(
    postgres_server_url: str, tmp_path: Path
) -> None:
    marker = uuid.uuid4().hex
    name = None
    with pytest.raises(RuntimeError, match=marker), throwaway_database(PG_SERVER, tmp_path) as url:
        name = sa.engine.make_url(url).database
        assert name in _databases(PG_SERVER)
        raise RuntimeError(marker)
    assert name
    assert name not in _databases(PG_SERVER)


def test_throwaway_sqlite_database_is_a_file_in_the_data_directory(tmp_path: Path) -> None:
    with throwaway_database("", tmp_path) as url:
        assert url == f"sqlite:///{tmp_path / 'bench.db'}"
