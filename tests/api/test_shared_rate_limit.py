"""Two real API processes (api.asgi, as `questwall api` runs it) and one credential: with
REDIS_URL they share its allowance, without it each process has its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from api.core.crypto import SecretBox
from api.core.db import build_engine
from tests.api.live_server import post_signed
from tests.conftest import MASTER_KEY
from tests.factories import iso_now, make_game
from tests.live import ROOT, free_port, wait_until_up

BURST = 5  # at a rate of one request per 100 s: the burst is all a test of seconds gets


@contextmanager
def api_process(env: dict[str, str], log: Path) -> Iterator[str]:
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "uvicorn", "api.asgi:app"),
                *("--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"),
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url + "/v2/openapi.json", proc, timeout=60, log=log)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _statuses(tmp_path: Path, sqlite_template: Path, **redis: str) -> list[int]:
    """Six signed batches of one credential to each of two API processes, alternating."""
    db = tmp_path / "shared.db"
    shutil.copy(sqlite_template, db)
    engine = build_engine(f"sqlite:///{db}")
    credential = make_game(engine, SecretBox([MASTER_KEY]))
    engine.dispose()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": MASTER_KEY,
        "QUESTWALL_INGEST_RATE": "0.01",
        "QUESTWALL_INGEST_BURST": str(BURST),
        **redis,
    }
    with ExitStack() as stack:
        urls = [stack.enter_context(api_process(env, tmp_path / f"api{i}.log")) for i in (1, 2)]
        clients = [stack.enter_context(httpx.Client(base_url=url, timeout=30)) for url in urls]
        payload = {
            "gameId": credential.game_id,
            "events": [{"userId": "p1", "event": "GAME_OVER", "time": iso_now()}],
            "identifiers": [],
        }
        return [post_signed(clients[i % 2], credential, payload).status_code for i in range(12)]


def test_two_api_processes_with_redis_accept_one_allowance(
    tmp_path, sqlite_template, redis_url, redis_prefix
):
    statuses = _statuses(
        tmp_path, sqlite_template, REDIS_URL=redis_url, REDIS_KEY_PREFIX=redis_prefix
    )
    assert statuses.count(200) == BURST, statuses
    assert statuses.count(429) == 12 - BURST


def test_two_api_processes_without_redis_each_accept_their_own(tmp_path, sqlite_template):
    statuses = _statuses(tmp_path, sqlite_template)
    assert statuses.count(200) == 2 * BURST, statuses
    assert statuses.count(429) == 12 - 2 * BURST
