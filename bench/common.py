"""Shared benchmark helpers: a temporary Questwall, servers on loopback, a load client."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tests.live import cli as questwall
from tests.live import free_port, wait_until_up

__all__ = ["free_port", "questwall", "wait_until_up"]

ROOT = Path(__file__).resolve().parents[1]


def bench_env(data_dir: Path, database_url: str | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "QUESTWALL_DATA_DIR": str(data_dir),
        "DATABASE_URL": database_url or f"sqlite:///{data_dir / 'bench.db'}",
        "SECRET_KEY": "benchmark-master-key",
        "QUESTWALL_DRAIN_SECONDS": "0",  # a stopped server stops at once
        "REFLEX_TELEMETRY_ENABLED": "false",
        "REFLEX_USE_SYSTEM_BUN": "true",
        "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{os.environ['PATH']}",
    }


def bench_ip(i: int) -> str:
    """The i-th address of 198.18.0.0/15, the range set aside for benchmarks (RFC 2544)."""
    return f"198.{18 + (i >> 16) % 2}.{(i >> 8) % 256}.{i % 256}"


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except ProcessLookupError:
        pass  # already gone
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args,
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@dataclass
class LoadResult:
    requests: int
    seconds: float
    latencies_ms: list[float]
    statuses: dict[int, int]
    client_cpu: float = (
        0.0  # CPU seconds the load client spent: near `seconds` means it was the bottleneck
    )

    def pct(self, p: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms)


async def _fire(
    url: str, requests: list[tuple[bytes, dict[str, str]]], concurrency: int, method: str
) -> LoadResult:
    queue: asyncio.Queue[tuple[bytes, dict[str, str]]] = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def worker() -> None:
            while not queue.empty():
                body, headers = queue.get_nowait()
                t0 = time.perf_counter()
                r = await client.request(method, url, content=body or None, headers=headers)
                latencies.append((time.perf_counter() - t0) * 1000)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - t0
    return LoadResult(len(requests), elapsed, latencies, statuses)


def fire(
    url: str, requests: list[tuple[bytes, dict[str, str]]], concurrency: int, method: str = "POST"
) -> LoadResult:
    return asyncio.run(_fire(url, requests, concurrency, method))


def temp_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="questwall-bench-"))


def print_json(label: str, data: dict[str, object]) -> None:
    print(f"{label}: {json.dumps(data)}")


# --- a lean HTTP/1.1 load client -------------------------------------------------------
# Pre-built requests over keep-alive sockets: a few microseconds of client CPU per request,
# so the server, not the client, is what a benchmark measures on a 2-core machine.

_LENGTH = re.compile(rb"(?i)\r\ncontent-length: *(\d+)")


def http_request(
    method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes = b""
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def _fire_raw(port: int, requests: list[bytes], concurrency: int) -> LoadResult:
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for item in requests:
        queue.put_nowait(item)
    latencies: list[float] = []
    statuses: dict[int, int] = {}

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while not queue.empty():
                request = queue.get_nowait()
                t0 = time.perf_counter()
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = _LENGTH.search(head)
                if length:
                    await reader.readexactly(int(length.group(1)))
                latencies.append((time.perf_counter() - t0) * 1000)
                status = int(head[9:12])
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    t0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return LoadResult(len(requests), elapsed, latencies, statuses, cpu)


def fire_raw(port: int, requests: list[bytes], concurrency: int) -> LoadResult:
    return asyncio.run(_fire_raw(port, requests, concurrency))


# --- the database and the server a benchmark runs against ------------------------------

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
RESULT_PREFIX = "BENCH-RESULT "


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """`--database-url` and `--api-workers`, the same for every script."""
    parser.add_argument(
        "--database-url",
        default="",
        help="server to create a throwaway database on (PostgreSQL URL); empty: a temporary "
        "SQLite file",
    )
    parser.add_argument(
        "--api-workers",
        type=int,
        default=None,
        help="0: the all-in-one server (`questwall serve`); N: `questwall api --workers N` "
        "(default: 0 on SQLite, 1 on PostgreSQL)",
    )


def is_postgres(url: str) -> bool:
    return url.startswith("postgresql")


def api_workers(args: argparse.Namespace) -> int:
    if args.api_workers is not None:
        return int(args.api_workers)
    return 1 if is_postgres(args.database_url) else 0


def _exit_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every `finally` (dropping the database) runs."""

    def handler(*_: object) -> None:
        raise SystemExit(143)

    signal.signal(signal.SIGTERM, handler)


@contextmanager
def throwaway_database(server_url: str, data: Path) -> Iterator[str]:
    """A new, empty database, dropped at the end even on Ctrl-C or an error: on a
    PostgreSQL server a database of its own, else a SQLite file under `data`."""
    _exit_on_sigterm()
    if not is_postgres(server_url):
        yield f"sqlite:///{data / 'bench.db'}"
        return
    name = f"questwall_bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextmanager
def prepared(server_url: str, **extra: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary data directory and a migrated throwaway database: (data, env)."""
    data = temp_dir()
    try:
        with throwaway_database(server_url, data) as url:
            env = {**bench_env(data, url), **extra}
            questwall(env, "migrate")
            yield data, env
    finally:
        shutil.rmtree(data, ignore_errors=True)


@contextmanager
def serving(env: dict[str, str], data: Path, workers: int) -> Iterator[int]:
    """The server under test on a free port: `questwall serve` (portal and API in one
    process) when `workers` is 0, else `questwall api --workers N`. Stopped on exit."""
    with served_process(env, data, workers) as (port, _):
        yield port


@contextmanager
def served_process(
    env: dict[str, str], data: Path, workers: int
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`serving`, with the process too (its group holds every server process)."""
    port = free_port()
    if workers == 0:
        args = ["serve", "--port", str(port), "--host", "127.0.0.1"]
    else:
        args = ["api", "--port", str(port), "--host", "127.0.0.1", "--workers", str(workers)]
    log = data / f"server-{port}.log"
    server = start([sys.executable, "-m", "api.cli", *args], env, log)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/v2/openapi.json", server, log=log)
        yield port, server
    finally:
        stop(server)


@contextmanager
def reference(app: str, env: dict[str, str], data: Path, workers: int) -> Iterator[int]:
    """A bare app (`module:app`) served the way `serving` serves Questwall: granian with
    one worker like `questwall serve`, or uvicorn with N workers like `questwall api`."""
    with reference_process(app, env, data, workers) as (port, _):
        yield port


@contextmanager
def reference_process(
    app: str, env: dict[str, str], data: Path, workers: int
) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`reference`, with the process too (its group holds every server process)."""
    port = free_port()
    if workers == 0:
        args = [str(ROOT / ".venv/bin/granian"), "--interface", "asgi", "--workers", "1"]
        args += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", app]
    else:
        args = [sys.executable, "-m", "uvicorn", app, "--workers", str(workers)]
        args += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    log = data / f"reference-{port}.log"
    server = start(args, env, log)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/docs", server, log=log)
        yield port, server
    finally:
        stop(server)


def cpu_seconds(pgid: int, database: str | None) -> tuple[float, float]:
    """CPU seconds (user + system) used so far by the live processes of the server's group
    `pgid`, and by the PostgreSQL backends serving `database` when the server runs on this
    machine (their process titles name the database; 0 on SQLite). Read before and after a
    load, the difference is what the load cost each side."""
    tick = os.sysconf("SC_CLK_TCK")
    server = db = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            title = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            in_group = os.getpgid(int(entry)) == pgid
        except (OSError, ProcessLookupError, UnicodeDecodeError):
            continue
        used = (int(stat[11]) + int(stat[12])) / tick
        if in_group:
            server += used
        elif database and title.startswith("postgres:") and f" {database} " in title:
            db += used
    return server, db


def count_rows(url: str, sql: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(sql)).scalar_one())
    finally:
        engine.dispose()


def target_label(args: argparse.Namespace) -> str:
    workers = api_workers(args)
    database = "PostgreSQL" if is_postgres(args.database_url) else "SQLite"
    server = "all-in-one" if workers == 0 else f"api --workers {workers}"
    return f"{database}, {server}"


def emit(workload: str, figures: dict[str, object]) -> None:
    """One machine-readable line per workload, read by bench/all.py."""
    print(RESULT_PREFIX + json.dumps({"workload": workload, **figures}), flush=True)


def load_figures(result: LoadResult, events_per_request: int = 1) -> dict[str, object]:
    return {
        "rate": result.requests * events_per_request / result.seconds,
        "p50": result.p50,
        "p99": result.pct(99),
        "statuses": {str(k): v for k, v in sorted(result.statuses.items())},
        "client_cpu_share": result.client_cpu / result.seconds,
    }


# A player on an Android phone in the US (in the bundled country table), as the wall and
# the offers benchmarks click.
PHONE = {
    "user-agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0 Mobile Safari/537.36",
    "x-forwarded-for": "8.8.8.8",  # a US address in the bundled country table
    "accept-language": "en-US,en;q=0.9",
}
