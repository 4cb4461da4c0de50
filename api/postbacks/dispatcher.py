"""The postback dispatcher (docs/architecture.md#postbacks): threads that claim
due postbacks from the outbox (`api/postbacks/outbox.py`), send them
(`api/postbacks/transport.py`) and record each attempt, until stopped.

Run by `questwall serve` (api/worker.py) and by every `questwall worker`. The process that
builds a dispatcher may hand it a `periodic` task, run between claims at most once every
`periodic_every` seconds: the worker's approves the held conversions whose review time is
up (docs/fraud.md#the-review-queue), whose postbacks then join the outbox it reads. The
dispatcher itself knows nothing of conversions.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import httpx
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.ops import delivering
from api.postbacks import endpoint as endpoints
from api.postbacks.outbox import claim, record, release_leases, renew_leases, urls_for
from api.postbacks.transport import (
    AttemptResult,
    Target,
    count_result,
    http_client,
    log_result,
    not_sent,
    send,
)
from models.types import utcnow

log = logging.getLogger("questwall.postbacks")

# Seconds between two runs of the periodic task (the first runs at once).
PERIODIC_EVERY = 60.0


@dataclass(frozen=True)
class _Finished:
    """An attempt that ended and waits to be recorded."""

    postback_id: int
    url: str | None
    started_at: datetime
    result: AttemptResult


# Claimed postbacks one offerwall may hold per allowed request (waiting for a free
# request of that offerwall), so its requests follow each other without a claim between:
# enough that its lanes keep sending while the loop records the attempts that ended and
# claims again (a round trip each). With 4, an offerwall's lanes ran dry at every claim
# (one worker on PostgreSQL, one offerwall: 383 deliveries/s; with 16, 1,009-1,122/s).
HELD_PER_REQUEST = 16


class Dispatcher:
    """Claims due postbacks and delivers them with a pool of threads, until stopped.

    Each offerwall's claimed postbacks wait in a queue of their own, sent by at most
    POSTBACK_PER_OFFERWALL threads ("lanes") at a time: a receiver that hangs holds only its
    own lanes, and the other offerwalls' postbacks keep flowing. Each attempt is recorded as
    soon as it ends (those that ended together in one transaction) and the dispatcher claims
    again. Leases of held postbacks are renewed until their attempt is recorded. Between
    claims, `periodic` (if given) runs every `periodic_every` seconds."""

    def __init__(
        self,
        *,
        engine: Engine,
        box: SecretBox,
        settings: Settings,
        threads: int = 16,
        batch: int | None = None,
        idle_wait: float = 0.2,
        on_attempt: Callable[[int, AttemptResult], None] | None = None,
        periodic: Callable[[], object] | None = None,
        periodic_every: float = PERIODIC_EVERY,
    ):
        self.engine, self.box, self.settings = engine, box, settings
        # At most `batch` postbacks are held (claimed, not yet recorded) at once.
        self.threads, self.batch, self.idle_wait = threads, batch or 4 * threads, idle_wait
        # One offerwall never has every thread, nor every held postback: a hanging one
        # must leave room for the others even with few threads.
        self.per_offerwall = max(1, min(settings.postback_per_offerwall, threads - 1))
        self.held_per_offerwall = min(
            self.per_offerwall * HELD_PER_REQUEST, max(self.per_offerwall, self.batch // 2)
        )
        self.on_attempt = on_attempt
        self.stop_event = threading.Event()
        self.held: dict[int, str] = {}  # postback id → offerwall id (the loop's own)
        self.finished: queue.Queue[_Finished] = queue.Queue()
        # Shared with the lanes, under the lock: queued postbacks and open lanes by offerwall.
        self.lock = threading.Lock()
        self.waiting: dict[str, deque[tuple[int, Target]]] = {}
        self.lanes: Counter[str] = Counter()
        self._renewed_at = time.monotonic()
        self.periodic, self.periodic_every = periodic, periodic_every
        self._periodic_at: float | None = None

    def start_due(self, pool: ThreadPoolExecutor, client: httpx.Client) -> int:
        """Claim what the batch and the per-offerwall limits allow, queue them by offerwall
        and open lanes; returns how many were claimed."""
        free = self.batch - len(self.held)
        claimed = {}
        if free > 0:
            claimed = claim(
                self.engine,
                limit=free,
                lease_seconds=self.settings.postback_lease_seconds,
                per_offerwall=self.held_per_offerwall,
                busy=Counter(self.held.values()),
            )
        if claimed:
            urls = urls_for(self.engine, self.box, list(claimed))
            with self.lock:
                for postback_id, offerwall_id in claimed.items():
                    missing = Target(None, "the postback's conversion is missing")
                    target = urls.get(postback_id, missing)
                    self.held[postback_id] = offerwall_id
                    self.waiting.setdefault(offerwall_id, deque()).append((postback_id, target))
        self._open_lanes(pool, client)
        return len(claimed)

    def _open_lanes(self, pool: ThreadPoolExecutor, client: httpx.Client) -> None:
        """A lane per waiting postback, up to the offerwall's limit and the free threads;
        offerwalls with the fewest lanes first."""
        with self.lock:
            by_lanes = sorted(self.waiting.items(), key=lambda item: self.lanes[item[0]])
            for offerwall_id, waiting in by_lanes:
                new = min(self.per_offerwall - self.lanes[offerwall_id], len(waiting))
                new = min(new, self.threads - self.lanes.total())
                for _ in range(max(new, 0)):
                    self.lanes[offerwall_id] += 1
                    pool.submit(self._lane, client, offerwall_id)

    def _lane(self, client: httpx.Client, offerwall_id: str) -> None:
        """Send the offerwall's waiting postbacks one after the other, until none is left
        (or the dispatcher stops)."""
        while True:
            with self.lock:
                waiting = self.waiting.get(offerwall_id)
                if not waiting or self.stop_event.is_set():
                    self._close_lane(offerwall_id)
                    return
                postback_id, target = waiting.popleft()
            self._attempt(client, postback_id, target)

    def _close_lane(self, offerwall_id: str) -> None:
        """(Under the lock.) The last lane of an offerwall drops its empty queue."""
        self.lanes[offerwall_id] -= 1
        if self.lanes[offerwall_id] <= 0:
            del self.lanes[offerwall_id]
            if not self.waiting.get(offerwall_id):
                self.waiting.pop(offerwall_id, None)

    def _attempt(self, client: httpx.Client, postback_id: int, target: Target) -> None:
        """Send one postback, under the id and trace of the request that made it."""
        with delivering("postback", target.request_id, target.traceparent):
            started_at = utcnow()
            url = target.url
            try:
                if url is None:
                    result = not_sent(target.problem)
                else:
                    result = send(
                        client,
                        url,
                        allow_private=self.settings.postback_allow_private,
                        secrets=target.secrets,
                    )
            except Exception as exc:  # a bug must not keep the lane's postbacks for ever
                log.exception("sending postback %s failed", postback_id)
                # Not known to have reached the target: shown as not sent.
                result = not_sent(f"{type(exc).__name__}: {exc}")
            log_result(log, "postback", postback_id, result)
        self.finished.put(_Finished(postback_id, url, started_at, result))

    def record_finished(self, *, wait: float) -> int:
        """Record every attempt that ended (waiting up to `wait` s for a first one) in one
        transaction; returns how many."""
        try:
            done = [self.finished.get(timeout=wait) if wait > 0 else self.finished.get_nowait()]
        except queue.Empty:
            return 0
        while True:
            try:
                done.append(self.finished.get_nowait())
            except queue.Empty:
                break
        for item in done:
            self.held.pop(item.postback_id, None)
        # Should this fail, the leases expire and the postbacks are sent again (at least once).
        notices = record(
            self.engine,
            [(d.postback_id, d.url, d.started_at, d.result) for d in done],
            self.settings,
        )
        endpoints.announce(notices)
        for item in done:
            count_result("postback", item.result)
        if self.on_attempt:
            for item in done:
                self.on_attempt(item.postback_id, item.result)
        return len(done)

    def renew_leases(self) -> None:
        """Every third of a lease, extend the leases of the postbacks still held."""
        lease = self.settings.postback_lease_seconds
        if time.monotonic() - self._renewed_at < lease / 3:
            return
        self._renewed_at = time.monotonic()
        renew_leases(self.engine, list(self.held), lease_seconds=lease)

    def run_once(self, pool: ThreadPoolExecutor, client: httpx.Client) -> int:
        """Claim once and wait until those attempts are recorded; returns how many."""
        started = self.start_due(pool, client)
        while self.held:
            self.record_finished(wait=self.idle_wait)
            self.renew_leases()
            self._open_lanes(pool, client)
        return started

    def run_periodic(self) -> None:
        """Run the periodic task, if any, when `periodic_every` seconds have passed since
        it last started (the first time at once). One that fails waits its turn again."""
        if self.periodic is None:
            return
        now = time.monotonic()
        if self._periodic_at is not None and now - self._periodic_at < self.periodic_every:
            return
        self._periodic_at = now
        self.periodic()

    def run(self) -> None:
        with (
            ThreadPoolExecutor(self.threads, thread_name_prefix="postback") as pool,
            http_client(self.settings, pool=self.threads) as client,
        ):
            while not self.stop_event.is_set():
                try:
                    self.run_periodic()
                    started = self.start_due(pool, client)
                    # Wake at the first attempt that ends, or after idle_wait to claim again.
                    self.record_finished(wait=0 if started else self.idle_wait)
                    self.renew_leases()
                except Exception:
                    log.exception("claiming or recording postbacks failed; retrying")
                    self.stop_event.wait(self.idle_wait)
            pool.shutdown(wait=True)  # running requests end; lanes take no more
            self._finish()

    def _finish(self) -> None:
        """Keep the last attempts and hand the postbacks never sent back to the outbox."""
        try:
            self.record_finished(wait=0)
            release_leases(self.engine, list(self.held))
        except Exception:
            log.exception("recording the last postback attempts failed")

    def stop(self) -> None:
        self.stop_event.set()
