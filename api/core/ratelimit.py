"""Per-credential rate limiting of signed requests, in this process or shared through Redis.

A client over its rate gets 429 `rate_limited` with `Retry-After` of at most 60 s: a client
that waited longer would resend a timestamp outside the signature window (docs/contract.md#limits).

- Without `REDIS_URL`: a token bucket per client id in this process's memory. With several
  API processes each keeps its own buckets, so the effective limit is N × the rate.
- With `REDIS_URL`: one sliding-window counter per client id in Redis, through the `limits`
  library, so every process shares it and the limit is the configured rate whatever N.
- Redis unreachable: the request is let through (fail open) and a warning is logged at most
  once a minute. Refusing every signed request because a counter is down would turn an
  outage of Redis into an outage of ingestion; the signature and the database checks still
  apply. After a failure Redis is left alone for `REDIS_RETRY_SECONDS`, so a Redis that
  hangs costs one timeout every few seconds, not one per request.

`limit_storage` builds the `limits` storage that every shared limit uses (this one, the
publishers' reporting API's and the sign-in throttle in `throttle.py`). `reports_limiter`
is the same limiter per offerwall for `GET /offerwall/reports`, with a rate of its own.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import cast

from limits import RateLimitItemPerSecond
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from redis.exceptions import RedisError

from api.core.config import Settings
from api.core.errors import ApiError

MAX_RETRY_AFTER = 60
REDIS_PREFIX = "questwall"
# One Redis call may take this long before the limit is skipped for that request.
REDIS_TIMEOUT_SECONDS = 0.5
# After a Redis failure, checks fail open without calling Redis for this long.
REDIS_RETRY_SECONDS = 5.0
WARNING_INTERVAL_SECONDS = 60.0

log = logging.getLogger("questwall.ratelimit")


def limit_storage(redis_url: str, *, key_prefix: str = REDIS_PREFIX) -> Storage:
    """The `limits` storage of a shared limit: Redis at `redis_url`, else this process's memory.

    Short timeouts: a limit is a guard in front of the real work and must not hold a
    request for long when Redis does not answer."""
    if not redis_url:
        return MemoryStorage()
    storage = storage_from_string(
        redis_url,
        key_prefix=key_prefix,
        socket_timeout=REDIS_TIMEOUT_SECONDS,
        socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
    )
    return cast(Storage, storage)  # a redis:// URL gives the synchronous storage


class TokenBuckets:
    """A token bucket per key, in this process: `burst` at once, refilled at `rate` a second."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float]):
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)
        self._lock = threading.Lock()

    def take(self, key: str) -> int | None:
        """Take one token; None when taken, else the seconds until one is there."""
        with self._lock:
            now = self._clock()
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                return math.ceil((1 - tokens) / self.rate)
            self._buckets[key] = (tokens - 1, now)
            if len(self._buckets) > 10_000:
                self._forget_full(now)
            return None

    def _forget_full(self, now: float) -> None:
        # Buckets that have refilled completely hold no information.
        full = [
            k
            for k, (t, last) in self._buckets.items()
            if t + (now - last) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]


class SharedWindow:
    """A sliding-window counter per key in a `limits` storage (Redis: shared by processes).

    The bucket's figures become a window: the time the burst takes to refill, in whole
    seconds (`ceil(burst / rate)`, at least 1), allowing what the rate gives in it. So a
    client never gets more than the rate on average, and at once about the burst (more
    only where the burst is under one second of the rate: windows are whole seconds)."""

    def __init__(self, rate: float, burst: float, storage: Storage, namespace: str = "ingest"):
        window = max(1, math.ceil(burst / rate))
        self.item = RateLimitItemPerSecond(max(1, math.floor(rate * window)), window)
        self._limiter = SlidingWindowCounterRateLimiter(storage)
        self._namespace = namespace

    def take(self, key: str) -> int | None:
        """Count one request; None when allowed, else the seconds until the window allows one."""
        if self._limiter.hit(self.item, self._namespace, key):
            return None
        reset = self._limiter.get_window_stats(self.item, self._namespace, key).reset_time
        return math.ceil(reset - time.time())


class FailOpen:
    """A limit's way with a failing Redis: after a failure, requests are let through
    without calling Redis for `REDIS_RETRY_SECONDS`, and a warning is logged at most once
    a minute, naming the limit (`name`)."""

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self._clock = clock
        self._skip_until = -math.inf
        self._warned_at = -math.inf

    def skipping(self) -> bool:
        return self._clock() < self._skip_until

    def failed(self, exc: RedisError) -> None:
        # Only the error's type: its text may carry the Redis URL and its password.
        now = self._clock()
        self._skip_until = now + REDIS_RETRY_SECONDS
        if now - self._warned_at >= WARNING_INTERVAL_SECONDS:
            self._warned_at = now
            log.warning(
                "%s rate limit unavailable (Redis: %s); requests are not limited",
                self.name,
                type(exc).__name__,
            )


class RateLimiter:
    """`check(client_id)` takes one request from the client's allowance or raises 429.

    Another limit than the ingestion's names itself in its warnings (`name`), keeps its
    Redis counters apart (`namespace`) and says in its 429 whose allowance it is (`per`)."""

    def __init__(
        self,
        rate_per_second: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        storage: Storage | None = None,
        name: str = "ingestion",
        namespace: str = "ingest",
        per: str = "client id",
    ):
        if rate_per_second <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate_per_second
        self.burst = burst
        self._clock = clock
        self.name, self.per = name, per
        self._counter: TokenBuckets | SharedWindow = (
            TokenBuckets(rate_per_second, burst, clock)
            if storage is None
            else SharedWindow(rate_per_second, burst, storage, namespace)
        )
        self._redis = FailOpen(name, clock)

    def wait(self, key: str) -> int | None:
        """Take one request for `key`: None when allowed (or when Redis fails), else the
        seconds until one is."""
        if self._redis.skipping():
            return None
        try:
            wait = self._counter.take(key)
        except RedisError as exc:
            self._redis.failed(exc)
            return None
        return None if wait is None else min(MAX_RETRY_AFTER, max(1, wait))

    def check(self, key: str) -> None:
        """Take one request for `key`, or raise ApiError(429) saying when to retry."""
        wait = self.wait(key)
        if wait is None:
            return
        raise ApiError(
            429,
            "rate_limited",
            f"Too many requests for this {self.per}; retry in {wait} s.",
            headers={"Retry-After": str(wait)},
        )


def shared_storage(settings: Settings) -> Storage | None:
    if not settings.redis_url:
        return None
    return limit_storage(settings.redis_url, key_prefix=settings.redis_key_prefix)


def ingest_limiter(settings: Settings) -> RateLimiter:
    """The signed requests' limiter: shared through Redis when `REDIS_URL` is set."""
    return RateLimiter(
        settings.ingest_rate_per_second, settings.ingest_burst, storage=shared_storage(settings)
    )


def reports_limiter(settings: Settings) -> RateLimiter:
    """The reporting API's limiter, per offerwall (whichever of its keys is used): shared
    through Redis when `REDIS_URL` is set. Its rate is set per minute."""
    return RateLimiter(
        settings.reports_rate_per_minute / 60,
        settings.reports_burst,
        storage=shared_storage(settings),
        name="reports",
        namespace="reports",
        per="offerwall",
    )
