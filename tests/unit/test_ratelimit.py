from __future__ import annotations

import pytest

from api.core.errors import ApiError
from api.services.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refill_at_the_rate():
    clock = Clock()
    limiter = RateLimiter(rate_per_second=2, burst=3, clock=clock)
    for _ in range(3):
        limiter.check("a")
    with pytest.raises(ApiError) as info:
        limiter.check("a")
    assert info.value.status == 429 and info.value.code == "rate_limited"
    assert info.value.headers["Retry-After"] == "1"
    limiter.check("b")  # buckets are per client id
    clock.now += 0.5
    limiter.check("a")


def test_retry_after_never_exceeds_60_seconds():
    clock = Clock()
    limiter = RateLimiter(rate_per_second=0.001, burst=1, clock=clock)
    limiter.check("slow")
    with pytest.raises(ApiError) as info:
        limiter.check("slow")
    assert info.value.headers["Retry-After"] == "60"
