"""Two real API processes (api.asgi, as `questwall api` runs it) and one credential: with
REDIS_URL they share its allowance, without it each process has its own."""

from __future__ import annotations

import shutil
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from api.core.crypto import SecretBox
from api.core.db import build_engine
from tests.api.live_server import post_signed, serve_api
from tests.conftest import MASTER_KEY
from tests.factories import iso_now, make_game

BURST = 5  # at a rate of one request per 100 s: the burst is all a test of seconds gets


def _statuses(
    tmp_path: Path, sqlite_template: Path, monkeypatch: pytest.MonkeyPatch, **redis: str
) -> list[int]:
    """Six signed batches of one credential to each of two API processes, alternating."""
    db = tmp_path / "shared.db"
    shutil.copy(sqlite_template, db)
    engine = build_engine(f"sqlite:///{db}")
    credential = make_game(engine, SecretBox([MASTER_KEY]))
    engine.dispose()
    # The processes' environment: `serve_api` starts them with this one's.
    for name, value in {
        "QUESTWALL_INGEST_RATE": "0.01",
        "QUESTWALL_INGEST_BURST": str(BURST),
        **redis,
    }.items():
        monkeypatch.setenv(name, value)
    with ExitStack() as stack:
        urls = []
        for name in ("api1", "api2"):
            (tmp_path / name).mkdir()
            urls.append(stack.enter_context(serve_api(f"sqlite:///{db}", tmp_path / name)))
        clients = [stack.enter_context(httpx.Client(base_url=url, timeout=30)) for url in urls]
        payload = {
            "gameId": credential.game_id,
            "events": [{"userId": "p1", "event": "GAME_OVER", "time": iso_now()}],
            "identifiers": [],
        }
        return [post_signed(clients[i % 2], credential, payload).status_code for i in range(12)]


def test_two_api_processes_with_redis_accept_one_allowance(
    tmp_path, sqlite_template, monkeypatch, redis_url, redis_prefix
):
    statuses = _statuses(
        tmp_path, sqlite_template, monkeypatch, REDIS_URL=redis_url, REDIS_KEY_PREFIX=redis_prefix
    )
    assert statuses.count(200) == BURST, statuses
    assert statuses.count(429) == 12 - BURST


def test_two_api_processes_without_redis_each_accept_their_own(
    tmp_path, sqlite_template, monkeypatch
):
    statuses = _statuses(tmp_path, sqlite_template, monkeypatch)
    assert statuses.count(200) == 2 * BURST, statuses
    assert statuses.count(429) == 12 - 2 * BURST
