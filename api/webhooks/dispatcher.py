"""Delivering webhooks: claimed messages go out one endpoint per lane, each lane in a thread
of its own, so a slow or hanging game holds back only its own messages (as long as fewer
endpoints hang than there are threads: a claim takes no more lanes than threads are free).
Within a lane messages go in order, and a lane stops at its first failure (what follows
waits for the retry, keeping each player's order). Every request goes through the
postback client's egress checks (no private addresses, each connection to the address
that was checked).

A claim leases its messages for three total timeouts at least; a lane gives back what is
left once half the lease has passed since the claim, and every write is fenced by the
lease (api/webhooks/messages.py), so a message is never sent by two dispatchers."""

from __future__ import annotations

import logging
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
from api.ops import delivering
from api.postbacks.transport import count_result, http_client, log_result, post
from api.webhooks import messages, signing
from api.webhooks.endpoints import signing_secrets
from models import EndpointStatus, WebhookEndpoint
from models.types import utcnow

log = logging.getLogger("questwall.webhooks")


class WebhookDispatcher:
    def __init__(
        self,
        *,
        engine: Engine,
        box: SecretBox,
        settings: Settings,
        threads: int = 8,
        batch: int = 64,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.engine, self.box, self.settings = engine, box, settings
        self.threads, self.batch = threads, batch
        self.lease_seconds = max(60.0, 3 * settings.postback_total_timeout)
        self.clock = clock
        self.allow_private = settings.postback_allow_private
        self._busy: set[str] = set()
        self._lock = threading.Lock()
        self._running: list[Future[None]] = []

    def run_once(self, pool: ThreadPoolExecutor, client: httpx.Client) -> int:
        """Claim what is due for endpoints without a running lane, as many lanes as threads
        are free, and start a lane for each; how many messages were claimed."""
        with self._lock:
            busy = frozenset(self._busy)
            free = self.threads - len(busy)
        if free <= 0:
            return 0
        claimed = messages.claim(
            self.engine,
            limit=self.batch,
            lease_seconds=self.lease_seconds,
            now=self.clock(),
            busy=busy,
        )
        claimed_at = time.monotonic()
        lanes: dict[str, list[messages.Claimed]] = defaultdict(list)
        for message in claimed:
            lanes[message.endpoint_id].append(message)
        kept = dict(list(lanes.items())[:free])
        messages.release(self.engine, [m for e, ms in lanes.items() if e not in kept for m in ms])
        with self._lock:
            self._busy.update(kept)
            self._running = [f for f in self._running if not f.done()]
            for endpoint_id, queued in kept.items():
                lane = pool.submit(self._lane, client, endpoint_id, queued, claimed_at)
                lane.add_done_callback(_log_failure)
                self._running.append(lane)
        return sum(len(queued) for queued in kept.values())

    def wait(self) -> None:
        """Wait for the running lanes (tests, and a clean stop)."""
        with self._lock:
            running = list(self._running)
        for future in running:
            future.exception()

    def _lane(
        self,
        client: httpx.Client,
        endpoint_id: str,
        queued: list[messages.Claimed],
        claimed_at: float,
    ) -> None:
        try:
            with new_session(self.engine) as session:
                endpoint = session.get(WebhookEndpoint, endpoint_id)
                if endpoint is None or endpoint.status != EndpointStatus.ACTIVE:
                    messages.release(self.engine, queued)  # disabled since the claim
                    return
                url = endpoint.url
                secrets = signing_secrets(self.box, endpoint, self.clock())
            for n, message in enumerate(queued):
                if time.monotonic() - claimed_at > self.lease_seconds / 2:
                    # A slow receiver: what is left goes back well before the lease ends.
                    messages.release(self.engine, queued[n:])
                    return
                with delivering("webhook", message.request_id, message.traceparent):
                    now = self.clock()
                    body = message.body.encode()
                    headers = signing.headers(
                        message.message_id, int(now.timestamp()), body, secrets
                    )
                    result = post(
                        client, url, body=body, headers=headers, allow_private=self.allow_private
                    )
                    log_result(log, "webhook", message.message_id, result)
                    messages.record(self.engine, message, result, self.clock())
                count_result("webhook", result)
                if not result.delivered:
                    messages.release(self.engine, queued[n + 1 :])
                    return
        finally:
            with self._lock:
                self._busy.discard(endpoint_id)

    def run(self, stop: threading.Event, *, poll_seconds: float = 0.5) -> None:
        """Deliver until `stop` is set; a failed claim (the database away for a moment) is
        logged and tried again at the next poll."""
        with ThreadPoolExecutor(self.threads) as pool, http_client(self.settings) as client:
            while not stop.is_set():
                try:
                    claimed = self.run_once(pool, client)
                except Exception:
                    log.exception("webhook claim failed; trying again")
                    claimed = 0
                if claimed == 0:
                    stop.wait(poll_seconds)
            self.wait()


def _log_failure(lane: Future[None]) -> None:
    error = lane.exception()
    if error is not None:
        log.error("a webhook lane failed: %r", error)
