"""Shared benchmark helpers: a temporary Questwall, servers on loopback, a load client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

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
        "REFLEX_TELEMETRY_ENABLED": "false",
        "REFLEX_USE_SYSTEM_BUN": "true",
        "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{os.environ['PATH']}",
    }


def stop(proc: subprocess.Popen[bytes]) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


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

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return LoadResult(len(requests), time.perf_counter() - t0, latencies, statuses)


def fire_raw(port: int, requests: list[bytes], concurrency: int) -> LoadResult:
    return asyncio.run(_fire_raw(port, requests, concurrency))
