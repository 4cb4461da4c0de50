"""A real API process (api.asgi, as `questwall api` runs it) on a test's own database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from api.core.crypto import signed_headers
from api.studios.games import IssuedCredential
from tests.conftest import MASTER_KEY
from tests.live import ROOT, free_port, wait_until_up
from tests.pgbouncer import pooler_settings


def server_env(db_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of a server or worker process the tests start on `db_url`."""
    return {
        **os.environ,
        "DATABASE_URL": db_url,
        **pooler_settings(db_url),
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": MASTER_KEY,
        # The tests' players all click from 127.0.0.1, as many players behind one NAT do.
        "QUESTWALL_CLICKS_PER_IP": "1000",
        "QUESTWALL_PLAYERS_PER_IP": "0",
        "QUESTWALL_FRAUD_DEFAULTS": "multi_offerwall=allow",
    }


@contextmanager
def serve_api(db_url: str, tmp_path: Path, *, workers: int = 1) -> Iterator[str]:
    """The API alone on the test's database: api.asgi in one process, as `questwall api`
    runs it, or `questwall api --workers N` itself for several."""
    port = free_port()
    address = ("--host", "127.0.0.1", "--port", str(port))
    if workers == 1:
        command = [sys.executable, "-m", "uvicorn", "api.asgi:app", *address]
        command += ["--log-level", "warning"]
    else:
        command = [sys.executable, "-m", "api.cli", "api", *address, "--workers", str(workers)]
    log = tmp_path / "api.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=server_env(db_url, tmp_path),
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


def post_signed(
    http: httpx.Client, game: IssuedCredential, payload: dict[str, Any]
) -> httpx.Response:
    """POST /v2/custom-events, signed as the official clients sign it."""
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = signed_headers(game.client_id, game.client_secret, body)
    return http.post("/v2/custom-events", content=body, headers=headers)


def run_clients(
    url: str, game: IssuedCredential, plans: list[list[dict[str, Any]]]
) -> list[tuple[int, Any, int]]:
    """Each plan is one client sending its batches in order; the clients run at once.
    Returns (status, body, identifiers sent) per batch; status 0 when the connection broke."""

    def client(plan: list[dict[str, Any]]) -> list[tuple[int, Any, int]]:
        with httpx.Client(base_url=url, timeout=30) as http:
            answers = []
            for payload in plan:
                sent = len(payload["identifiers"])
                try:
                    response = post_signed(http, game, payload)
                except httpx.HTTPError as exc:  # the server dropped the connection
                    answers.append((0, repr(exc), sent))
                    continue
                is_json = response.headers.get("content-type", "").startswith("application/json")
                body = response.json() if is_json else response.text
                answers.append((response.status_code, body, sent))
            return answers

    with ThreadPoolExecutor(len(plans)) as pool:
        return [answer for answers in pool.map(client, plans) for answer in answers]
