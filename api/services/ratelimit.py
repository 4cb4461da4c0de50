"""Per-credential rate limiting of ingestion (a token bucket per client id, per process).

A client over its rate gets 429 `rate_limited` with `Retry-After` of at most 60 s: a client
that waited longer would resend a timestamp outside the signature window (docs/contract.md#limits).
With several API processes each keeps its own buckets, so the effective limit is
N × the configured rate.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from api.core.errors import ApiError

MAX_RETRY_AFTER = 60


class RateLimiter:
    def __init__(
        self, rate_per_second: float, burst: float, clock: Callable[[], float] = time.monotonic
    ):
        if rate_per_second <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate_per_second
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last refill)
        self._lock = threading.Lock()

    def check(self, key: str) -> None:
        """Take one token for `key`, or raise ApiError(429) saying when to retry."""
        with self._lock:
            now = self._clock()
            tokens, last = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens < 1:
                self._buckets[key] = (tokens, now)
                wait = min(MAX_RETRY_AFTER, max(1, math.ceil((1 - tokens) / self.rate)))
                raise ApiError(
                    429,
                    "rate_limited",
                    f"Too many requests for this client id; retry in {wait} s.",
                    headers={"Retry-After": str(wait)},
                )
            self._buckets[key] = (tokens - 1, now)
            if len(self._buckets) > 10_000:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        # Buckets that have refilled completely hold no information.
        full = [
            k
            for k, (t, last) in self._buckets.items()
            if t + (now - last) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
