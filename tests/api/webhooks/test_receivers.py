"""The game guide's webhook receivers (docs/examples/webhook_receiver.py and .mjs), run as
real processes with the `standardwebhooks` libraries of PyPI and npm: they accept real
deliveries, also signed by a rotated secret's overlap, and refuse a tampered body, another
secret and an old timestamp (docs/game-integration.md#webhooks)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime

import httpx
import pytest
import sqlalchemy as sa

from api import webhooks
from api.core.db import new_session, write_session
from api.postbacks.transport import http_client
from api.webhooks import signing
from models import WebhookEndpoint
from models.tables import webhook_attempt as _attempt
from tests.live import ROOT, free_port, node, serving_example

EXAMPLES = ROOT / "docs" / "examples"
pytestmark = pytest.mark.slow  # real processes


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"postback_allow_private": True})


@contextmanager
def running(kind: str, secret: str, tmp_path) -> Iterator[str]:
    port = free_port()
    if kind == "python":
        command = [sys.executable, str(EXAMPLES / "webhook_receiver.py")]
    else:  # beside the npm package, as `npm install standardwebhooks` puts it
        shutil.copy(EXAMPLES / "webhook_receiver.mjs", tmp_path / "webhook_receiver.mjs")
        (tmp_path / "node_modules").symlink_to(ROOT / ".tools" / "node_modules")
        command = [node(), str(tmp_path / "webhook_receiver.mjs")]
    env = {**os.environ, "WEBHOOK_SECRET": secret, "PORT": str(port)}
    with serving_example(command, env, port) as url:
        yield url


@pytest.mark.parametrize("kind", ["python", "node"])
def test_the_receivers_take_real_deliveries_and_refuse_forgeries(
    kind, engine, box, game, api_settings, tmp_path
):
    with write_session(engine) as session:
        added = webhooks.add_endpoint(
            session=session,
            box=box,
            game_id=game.game_id,
            url="http://127.0.0.1:1/x",
            allow_private=True,
        )
        endpoint_id, secret = added.endpoint.id, added.secret
    with running(kind, secret, tmp_path) as url:
        with write_session(engine) as session:
            endpoint = session.get(WebhookEndpoint, endpoint_id)
            endpoint.url = url + "/questwall"
            # The secret rotates: the old one (the receiver's) signs beside the new.
            webhooks.rotate_secret(
                session=session, box=box, endpoint=endpoint, overlap="24h", now=datetime.now(UTC)
            )
            for n in range(3):
                webhooks.emit(
                    session,
                    game_id=game.game_id,
                    player="p1",
                    items=[("mission.completed", {"userId": f"u{n}", "mission": {"title": "Win"}})],
                    now=datetime.now(UTC),
                )
        dispatcher = webhooks.WebhookDispatcher(engine=engine, box=box, settings=api_settings)
        with ThreadPoolExecutor(2) as pool, http_client(api_settings) as client:
            for _ in range(5):
                if not dispatcher.run_once(pool, client):
                    break
                dispatcher.wait()
        with new_session(engine) as session:
            answers = session.execute(sa.select(_attempt.c.status_code)).scalars().all()
        assert answers == [204, 204, 204]

        body = b'{"type":"conversion.approved","timestamp":"2026-11-28T12:00:00.000Z","data":{}}'
        now = int(time.time())
        good = signing.headers("msg_direct", now, body, [secret])
        assert httpx.post(url, content=body, headers=good).status_code == 204
        forged = [
            (body.replace(b"approved", b"reversed"), good),
            (body, signing.headers("msg_other", now, body, [signing.new_secret()])),
            (body, signing.headers("msg_old", now - 3600, body, [secret])),
            (body, {"content-type": "application/json"}),
        ]
        for content, headers in forged:
            assert httpx.post(url, content=content, headers=headers).status_code == 400
