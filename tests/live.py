"""A real Questwall API process on a loopback port, for tests that talk HTTP to it."""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]


# Each test worker (pytest-xdist's gw0, gw1, ...) takes its ports from a range of its own,
# below Linux's ephemeral range (32768 and up), where the kernel hands out no port itself:
# two workers never pick the same port, and no outgoing connection takes one meanwhile.
PORTS_PER_WORKER = 1000
FIRST_PORT = 20000


def worker_index() -> int:
    """This test worker's number: 0 for gw0 (and for a run without workers), 1 for gw1, ..."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name[2:]) if name[2:].isdigit() else 0


def free_port() -> int:
    """A loopback port nothing listens on, from this worker's range (it starts at a random
    place, as the kernel's choice would: a process and the one it starts pick apart)."""
    first = FIRST_PORT + worker_index() * PORTS_PER_WORKER
    offset = random.randrange(PORTS_PER_WORKER)
    for step in range(PORTS_PER_WORKER):
        port = first + (offset + step) % PORTS_PER_WORKER
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}..{first + PORTS_PER_WORKER - 1}")


def node() -> str:
    """The Node.js binary `make install` put under .tools, else the one on PATH."""
    local = ROOT / ".tools" / "node_modules" / ".bin" / "node"
    found = str(local) if local.exists() else shutil.which("node")
    assert found, "Node.js is missing: run `make install`"
    return found


def wait_until_up(
    url: str, proc: subprocess.Popen[Any], *, timeout: float = 300, log: Path | None = None
) -> None:
    """Poll `url` until it answers below 500; fail early if the process exits."""
    deadline = time.monotonic() + timeout
    # One client for every poll: each new one loads the certificate authorities again, 0.1 s
    # of CPU five times a second, taken from the server that is starting.
    with httpx.Client(timeout=1) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = log.read_text()[-3000:] if log and log.exists() else ""
                raise RuntimeError(f"the server exited with {proc.returncode}\n{tail}")
            try:
                if http.get(url).status_code < 500:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not come up in {timeout} s")


@dataclass
class LiveApi:
    url: str
    env: dict[str, str]
    game: dict[str, str]


def run_cli(
    env: dict[str, str], *args: str, input: str | None = None, **changes: str
) -> subprocess.CompletedProcess[str]:
    """Run the real `questwall` command with `env` (and `changes` to it); never raises."""
    return subprocess.run(
        [sys.executable, "-m", "api.cli", *args],
        cwd=ROOT,
        env={**env, **changes},
        capture_output=True,
        text=True,
        timeout=120,
        input=input,
    )


def cli(env: dict[str, str], *args: str, input: str | None = None) -> str:
    """Run the real `questwall` command; its output, or CalledProcessError."""
    result = run_cli(env, *args, input=input)
    result.check_returncode()
    return result.stdout


@contextmanager
def live_api(tmp_path: Path) -> Iterator[LiveApi]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'live.db'}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "live-test-master-key",
    }
    cli(env, "migrate")
    game = json.loads(cli(env, "game", "create", "Live"))
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "api.asgi:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/v2/openapi.json", proc, timeout=60)
        yield LiveApi(url, env, game)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@contextmanager
def serving_example(command: list[str], env: dict[str, str], port: int) -> Iterator[str]:
    """An example receiver's process on 127.0.0.1:`port`, once it answers; stopped after."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(timeout=0.5) as http:  # one client for every poll (wait_until_up)
            for _ in range(100):
                try:
                    http.get(url)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def forget_process_settings() -> None:
    """Forget the settings, master keys and engine this process read from its environment
    (disposing of the engine), as a new `questwall` process would start without them: for
    tests that run its commands in their own process."""
    from api.core.config import get_settings
    from api.core.crypto import get_secret_box
    from api.core.db import get_engine

    if get_engine.cache_info().currsize:
        get_engine().dispose()
    for cached in (get_settings, get_secret_box, get_engine):
        cached.cache_clear()
