"""Click screening (docs/fraud.md): a tracking-link click from a blocked network, with a
script's or headless browser's User-Agent, or from an IP address or by a player that
clicks faster than people do, is refused before it is recorded.

The first two are lookups in this process (`Networks`, `is_scripted`). Then two counters,
the click's IP address and its player (the uid at that offerwall), each with a limit a
minute:

- Without Redis, each process counts in memory with `ratelimit.TokenBuckets`: the
  minute's allowance at once, refilled steadily.
- With `REDIS_URL`, every process counts together in a sliding window of one minute: a
  counter per key and minute, the previous minute's weighted by how much of it is still
  inside the window (as the `limits` library's sliding-window counter does). Both keys
  go to Redis in one pipelined round trip, since a click is among the cheapest requests
  Questwall serves; two separate limiter calls cost a quarter of the click rate
  (bench/screening.py).

When Redis fails the clicks are let through and a warning is logged (`ratelimit.FailOpen`):
screening must never stop the traffic it guards. The refusal is a 403 page with a neutral
sentence that tells a click farm nothing about which rule it met; the refused click is
recorded with its reason like any other.
"""

from __future__ import annotations

import bisect
import ipaddress
import time
from collections.abc import Callable, Sequence
from functools import lru_cache

import redis
from redis.exceptions import RedisError
from ua_parser import parse

from api.core.config import Settings
from api.core.net import Network, parse_networks
from api.services.ratelimit import REDIS_TIMEOUT_SECONDS, FailOpen, TokenBuckets
from api.services.tracking import ClickIn, TrackingRefusal
from models import RefusalReason

TITLE = "Not available right now"
MESSAGE = "This offer cannot be opened right now. Please try again later."
WINDOW = 60  # seconds: the limits are clicks a minute


class MemoryCounts:
    """This process's counts: a token bucket per key and limit."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._buckets: dict[int, TokenBuckets] = {}

    def over(self, keys: Sequence[tuple[str, int]]) -> list[bool]:
        """Count one click for each (key, limit a minute); which of them it puts over."""
        return [self._bucket(limit).take(key) is not None for key, limit in keys]

    def _bucket(self, limit: int) -> TokenBuckets:
        if limit not in self._buckets:
            self._buckets[limit] = TokenBuckets(limit / WINDOW, limit, self._clock)
        return self._buckets[limit]


class SharedCounts:
    """Every process's counts in Redis: a sliding window of a minute per key, all of a
    click's keys in one pipelined round trip."""

    def __init__(self, client: redis.Redis, prefix: str, clock: Callable[[], float] = time.time):
        self._client, self._prefix, self._clock = client, prefix, clock

    def over(self, keys: Sequence[tuple[str, int]]) -> list[bool]:
        now = self._clock()
        minute = int(now // WINDOW)
        previous_weight = 1 - (now % WINDOW) / WINDOW
        pipe = self._client.pipeline(transaction=False)
        for key, _ in keys:
            current = f"{self._prefix}:clicks:{key}:{minute}"
            pipe.incr(current)
            pipe.expire(current, 2 * WINDOW)  # it is the previous minute for one more minute
            pipe.get(f"{self._prefix}:clicks:{key}:{minute - 1}")
        answers = pipe.execute()
        verdicts = []
        for i, (_, limit) in enumerate(keys):
            current, _, previous = answers[3 * i : 3 * i + 3]
            count = int(previous or 0) * previous_weight + int(current)
            verdicts.append(count > limit)
        return verdicts


# User-Agent families (as ua-parser names them) of HTTP libraries, command-line tools and
# headless browsers: no player opens an offer with these. ua-parser also calls any crawler's
# device a "Spider".
SCRIPTED_FAMILIES = frozenset(
    {
        "HeadlessChrome",
        "PhantomJS",
        "curl",
        "Wget",
        "Python Requests",
        "Python-urllib",
        "Go-http-client",
        "Scrapy",
        "axios",
        "Apache-HttpClient",
        "libwww-perl",
    }
)


@lru_cache(maxsize=4096)
def is_scripted(user_agent: str) -> bool:
    """Whether a User-Agent is a script's, a crawler's or a headless browser's; an empty
    one too (every browser sends one)."""
    if not user_agent.strip():
        return True
    parsed = parse(user_agent[:1024])
    family = parsed.user_agent.family if parsed.user_agent else ""
    device = parsed.device.family if parsed.device else ""
    return family in SCRIPTED_FAMILIES or device == "Spider"


class Networks:
    """A set of IP networks as merged, sorted address ranges, looked up by bisection: an
    operator's list of thousands of hosting networks costs microseconds per click."""

    def __init__(self, networks: Sequence[Network]):
        ranges = sorted(
            ((n.version, int(n.network_address)), (n.version, int(n.broadcast_address)))
            for n in networks
        )
        merged: list[list[tuple[int, int]]] = []
        for start, end in ranges:
            if merged and start[0] == merged[-1][1][0] and start[1] <= merged[-1][1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def __bool__(self) -> bool:
        return bool(self._starts)

    def __contains__(self, ip: str) -> bool:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        key = (address.version, int(address))
        i = bisect.bisect_right(self._starts, key) - 1
        return i >= 0 and key <= self._ends[i]


class ClickScreen:
    """`check(click)` counts the click against its IP address and its player, or refuses it."""

    def __init__(
        self,
        per_ip: int,
        per_uid: int,
        counts: MemoryCounts | SharedCounts,
        fail_open: FailOpen | None = None,
        *,
        refuse_scripted: bool = False,
        blocked: Networks | None = None,
    ):
        self.per_ip, self.per_uid = per_ip, per_uid
        self.refuse_scripted = refuse_scripted
        self.blocked = blocked or Networks(())
        self._counts = counts
        self._redis = fail_open or FailOpen("click screening")

    def check(self, click: ClickIn) -> None:
        if self.blocked and click.ip in self.blocked:
            raise TrackingRefusal(RefusalReason.BLOCKED_NETWORK, 403, TITLE, MESSAGE)
        if self.refuse_scripted and is_scripted(click.user_agent):
            raise TrackingRefusal(RefusalReason.SCRIPTED_AGENT, 403, TITLE, MESSAGE)
        self._count(click)

    def _count(self, click: ClickIn) -> None:
        keys: list[tuple[str, int]] = []
        reasons: list[RefusalReason] = []
        if self.per_ip:
            keys.append((f"ip:{click.ip}", self.per_ip))
            reasons.append(RefusalReason.IP_RATE)
        if self.per_uid and click.uid:
            # A player is a uid of one offerwall; the unit separator keeps the two apart.
            keys.append((f"uid:{click.owid or ''}\x1f{click.uid}", self.per_uid))
            reasons.append(RefusalReason.UID_RATE)
        if not keys or self._redis.skipping():
            return
        try:
            verdicts = self._counts.over(keys)
        except RedisError as exc:
            self._redis.failed(exc)
            return
        for reason, over in zip(reasons, verdicts, strict=True):
            if over:
                raise TrackingRefusal(reason, 403, TITLE, MESSAGE)


def click_screen(settings: Settings) -> ClickScreen:
    """The screen the settings describe: `QUESTWALL_BLOCKED_NETWORKS`,
    `QUESTWALL_REFUSE_SCRIPTED_AGENTS`, and `QUESTWALL_CLICKS_PER_IP` and
    `QUESTWALL_CLICKS_PER_UID` counted in Redis when `REDIS_URL` is set."""
    counts: MemoryCounts | SharedCounts = MemoryCounts()
    if settings.redis_url:
        client = redis.Redis.from_url(
            settings.redis_url,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        )
        counts = SharedCounts(client, settings.redis_key_prefix)
    return ClickScreen(
        settings.clicks_per_ip_minute,
        settings.clicks_per_uid_minute,
        counts,
        refuse_scripted=settings.refuse_scripted_agents,
        blocked=Networks(parse_networks(settings.blocked_networks)),
    )
