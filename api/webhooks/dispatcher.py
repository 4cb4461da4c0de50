"""Delivering webhooks: claimed messages go out one endpoint per lane, each lane in its own
thread, so a slow or hanging game never holds another back; within a lane, in order, and a
lane stops at its first failure (what follows waits for the retry, keeping each player's
order). Every request goes through the postback client's egress checks (no private
addresses, each connection to the address that was checked)."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime

import httpx
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session
from api.postbacks.transport import http_client, post
from api.webhooks import messages, signing
from api.webhooks.endpoints import signing_secrets
from models import WebhookEndpoint
from models.types import utcnow


class WebhookDispatcher:
    def __init__(
        self,
        *,
        engine: Engine,
        box: SecretBox,
        settings: Settings,
        threads: int = 8,
        batch: int = 64,
        lease_seconds: float = 60,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.engine, self.box, self.settings = engine, box, settings
        self.threads, self.batch, self.lease_seconds = threads, batch, lease_seconds
        self.clock = clock
        self.allow_private = settings.postback_allow_private
        self._busy: set[str] = set()
        self._lock = threading.Lock()
        self._running: list[Future[None]] = []

    def run_once(self, pool: ThreadPoolExecutor, client: httpx.Client) -> int:
        """Claim what is due for the endpoints without a running lane and start a lane for
        each; how many messages were claimed."""
        with self._lock:
            busy = frozenset(self._busy)
        claimed = messages.claim(
            self.engine,
            limit=self.batch,
            lease_seconds=self.lease_seconds,
            now=self.clock(),
            busy=busy,
        )
        lanes: dict[str, list[messages.Claimed]] = defaultdict(list)
        for message in claimed:
            lanes[message.endpoint_id].append(message)
        with self._lock:
            self._busy.update(lanes)
            self._running = [f for f in self._running if not f.done()]
            for endpoint_id, queued in lanes.items():
                self._running.append(pool.submit(self._lane, client, endpoint_id, queued))
        return len(claimed)

    def wait(self) -> None:
        """Wait for the running lanes (tests, and a clean stop)."""
        with self._lock:
            running = list(self._running)
        for future in running:
            future.result()

    def _lane(self, client: httpx.Client, endpoint_id: str, queued: list[messages.Claimed]) -> None:
        try:
            with new_session(self.engine) as session:
                endpoint = session.get(WebhookEndpoint, endpoint_id)
                if endpoint is None:
                    return
                url = endpoint.url
                secrets = signing_secrets(self.box, endpoint, self.clock())
            claimed_at = time.monotonic()
            for n, message in enumerate(queued):
                if time.monotonic() - claimed_at > self.lease_seconds / 2:
                    # A slow receiver: what is left goes back before the lease could end
                    # under it (another dispatcher would send it a second time).
                    messages.release(self.engine, [m.id for m in queued[n:]])
                    return
                now = self.clock()
                body = message.body.encode()
                headers = signing.headers(message.message_id, int(now.timestamp()), body, secrets)
                result = post(
                    client, url, body=body, headers=headers, allow_private=self.allow_private
                )
                messages.record(self.engine, message, result, self.clock())
                if not result.delivered:
                    messages.release(self.engine, [m.id for m in queued[n + 1 :]])
                    return
        finally:
            with self._lock:
                self._busy.discard(endpoint_id)

    def run(self, stop: threading.Event, *, poll_seconds: float = 0.5) -> None:
        """Deliver until `stop` is set."""
        with ThreadPoolExecutor(self.threads) as pool, http_client(self.settings) as client:
            while not stop.is_set():
                if self.run_once(pool, client) == 0:
                    stop.wait(poll_seconds)
            self.wait()
