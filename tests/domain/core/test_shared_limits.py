"""The ingestion rate limit shared through Redis: every process counts against one
allowance per client id, and a Redis that goes away lets requests through (never a 5xx)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import pytest

from api.core.config import Settings
from api.core.errors import ApiError
from api.core.ratelimit import REDIS_RETRY_SECONDS, RateLimiter, ingest_limiter, limit_storage
from tests.tcp_proxy import TcpProxy

pytestmark = pytest.mark.usefixtures("redis_prefix")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _accepted(limiter: RateLimiter, key: str, tries: int) -> int:
    accepted = 0
    for _ in range(tries):
        try:
            limiter.check(key)
            accepted += 1
        except ApiError as exc:
            assert exc.status == 429 and int(exc.headers["Retry-After"]) <= 60
    return accepted


def test_two_processes_share_one_allowance(redis_url, redis_prefix):
    # Each limiter has a storage (a connection pool) of its own, as two processes do.
    settings = Settings(
        REDIS_URL=redis_url,
        REDIS_KEY_PREFIX=redis_prefix,
        QUESTWALL_INGEST_RATE=0.01,
        QUESTWALL_INGEST_BURST=5,
    )
    first, second = ingest_limiter(settings), ingest_limiter(settings)
    assert _accepted(first, "client-a", 4) + _accepted(second, "client-a", 4) == 5
    assert _accepted(second, "client-b", 6) == 5  # per client id


def test_without_redis_each_process_has_its_own_allowance():
    settings = Settings(REDIS_URL="", QUESTWALL_INGEST_RATE=0.01, QUESTWALL_INGEST_BURST=5)
    first, second = ingest_limiter(settings), ingest_limiter(settings)
    assert _accepted(first, "client-a", 8) + _accepted(second, "client-a", 8) == 10


def test_a_cut_redis_fails_open_and_the_limit_returns_with_it(redis_url, redis_prefix, caplog):
    target = urlsplit(redis_url)
    proxy = TcpProxy(target.hostname or "127.0.0.1", target.port or 6379)
    proxy.start()
    through_proxy = target._replace(netloc=f"127.0.0.1:{proxy.port}").geturl()
    clock = Clock()
    limiter = RateLimiter(
        0.01, 3, clock=clock, storage=limit_storage(through_proxy, key_prefix=redis_prefix)
    )
    try:
        assert _accepted(limiter, "client", 3) == 3
        proxy.cut()
        with caplog.at_level(logging.WARNING, logger="questwall.ratelimit"):
            assert _accepted(limiter, "client", 5) == 5  # not limited, no 5xx
        assert "ingestion rate limit unavailable" in caplog.text

        proxy.start()
        clock.now += REDIS_RETRY_SECONDS
        assert _accepted(limiter, "client", 2) == 0  # the counts kept in Redis apply again
    finally:
        proxy.cut()
