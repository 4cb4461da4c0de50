from __future__ import annotations

import logging

import pytest
from limits.storage import MemoryStorage, RedisStorage

from api.core.errors import ApiError
from api.core.ratelimit import RateLimiter, SharedWindow, limit_storage


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


def test_every_refusal_is_the_same_429_answer():
    limiter = RateLimiter(rate_per_second=2, burst=4, storage=MemoryStorage())
    for _ in range(4):
        limiter.check("a")
    with pytest.raises(ApiError) as info:
        limiter.check("a")
    assert info.value.status == 429 and info.value.code == "rate_limited"
    assert 1 <= int(info.value.headers["Retry-After"]) <= 2
    limiter.check("b")  # counters are per client id


def _window(rate: float, burst: float) -> tuple[int, int]:
    item = SharedWindow(rate=rate, burst=burst, storage=MemoryStorage()).item
    return item.amount, item.get_expiry()


def test_the_shared_window_is_the_burst_s_refill_time_at_the_rate():
    assert _window(500, 1000) == (1000, 2)  # the defaults
    assert _window(0.5, 1.5) == (1, 3)  # never above the rate on average
    assert _window(500, 1) == (500, 1)  # a window is at least one second of the rate


def test_the_shared_retry_after_never_exceeds_60_seconds():
    # One request in 10^9 s: the counter's windows start at multiples of that since the
    # epoch (2001-09-09, then 2033-05-18), so the window's end is years away, not seconds.
    limiter = RateLimiter(rate_per_second=1e-9, burst=1, storage=MemoryStorage())
    limiter.check("slow")
    with pytest.raises(ApiError) as info:
        limiter.check("slow")
    assert info.value.headers["Retry-After"] == "60"


def test_redis_unreachable_lets_requests_through_and_warns_once_a_minute(caplog):
    clock = Clock()
    storage = limit_storage("redis://:secret-password@127.0.0.1:1/0")  # nothing listens on 1
    limiter = RateLimiter(rate_per_second=1, burst=1, clock=clock, storage=storage)
    with caplog.at_level(logging.WARNING, logger="questwall.ratelimit"):
        for _ in range(3):
            limiter.check("a")  # fails open: no 429, no 5xx
            clock.now += 10  # past the pause after a failure, so Redis is tried again
        assert len(caplog.records) == 1
        clock.now += 60
        limiter.check("a")
    assert len(caplog.records) == 2
    assert "Redis: ConnectionError" in caplog.text
    assert "secret-password" not in caplog.text


def test_the_sign_in_throttle_and_the_ingestion_share_one_storage_construction():
    storage = limit_storage("redis://127.0.0.1:6379/0", key_prefix="elsewhere")
    assert isinstance(storage, RedisStorage) and storage.key_prefix == "elsewhere"
    assert isinstance(limit_storage(""), MemoryStorage)
