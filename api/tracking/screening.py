"""Click screening (docs/fraud.md): a tracking-link click from a blocked network or a
blocklisted address or player, or from an IP address or by a player that clicks faster
than people do, is refused before it is recorded. A click that passes carries its risk
signals (a script's User-Agent, a hosting network) to the offerwall's rules
(`api/fraud/policy.py`), which may refuse it too.

The lookups are in this process (`Networks`, `Blocklist`, `is_scripted`,
`HostingNetworks`). Then two counters,
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
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import redis
import sqlalchemy as sa
from redis.exceptions import RedisError
from sqlalchemy import Engine
from ua_parser import parse

from api.core.config import Settings
from api.core.net import Network, parse_networks
from api.core.ratelimit import REDIS_TIMEOUT_SECONDS, FailOpen, TokenBuckets
from api.fraud import policy as fraud
from api.tracking.clicks import ClickIn, TrackingRefusal
from models import BlockKind, RefusalReason
from models.tables import blocked_entry as _blocked

TITLE, MESSAGE = fraud.REFUSAL_TITLE, fraud.REFUSAL_MESSAGE
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


# --- hosting networks -------------------------------------------------------------------

# Names (as the bundled ASN data spells them, upper-cased) of networks that host servers
# rather than people: clouds, server renters and the VPN providers that live there.
HOSTING_ASN_WORDS = (
    "AMAZON",
    "GOOGLE-CLOUD",
    "MICROSOFT-CORP-MSN-AS-BLOCK",
    "DIGITALOCEAN",
    "OVH",
    "HETZNER",
    "LINODE",
    "AKAMAI-AS",
    "VULTR",
    "CHOOPA",
    "CONTABO",
    "LEASEWEB",
    "ORACLE-BMC",
    "ALIBABA",
    "TENCENT",
    "SCALEWAY",
    "ONLINE S.A.S.",
    "M247",
    "DATACAMP",
    "CDN77",
    "IONOS",
    "HOSTINGER",
    "HOSTWINDS",
    "COLOCROSSING",
    "PSYCHZ",
    "QUADRANET",
)


class AsnNames:
    """The network operator's name for an address, from the ASN data that ships inside
    the `geoip2fast` package (loaded on first use, about 0.2 s)."""

    def __init__(self) -> None:
        self._reader: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._reader is None:
                from geoip2fast import GeoIP2Fast

                data = resources.files("geoip2fast") / "geoip2fast-asn-ipv6.dat.gz"
                self._reader = GeoIP2Fast(geoip2fast_data_file=str(data))
        return self._reader

    def name(self, ip: str) -> str:
        reader = self._reader or self._load()
        try:
            return str(getattr(reader.lookup(ip), "asn_name", "") or "")
        except Exception:  # an address the data cannot parse has no operator
            return ""


_ASN = AsnNames()


@lru_cache(maxsize=8192)
def hosted_by_asn(ip: str) -> bool:
    name = _ASN.name(ip).upper()
    return bool(name) and any(word in name for word in HOSTING_ASN_WORDS)


class HostingNetworks:
    """Whether an address belongs to a hosting network: the operator's list
    (`QUESTWALL_HOSTING_NETWORKS`), then the bundled ASN data's operator names."""

    def __init__(self, listed: str = "", *, use_asn: bool = True):
        self.listed = Networks(parse_networks(listed))
        self.use_asn = use_asn

    def __contains__(self, ip: str) -> bool:
        return ip in self.listed or (self.use_asn and hosted_by_asn(ip))


class Blocklist:
    """Staff's blocklist (the fraud page): IP addresses, networks and uids whose clicks are
    refused. Each process reads it again at most every `ttl` seconds, so an entry takes
    effect everywhere within that time."""

    def __init__(self, engine: Engine | None, ttl: float = 10.0, clock=time.monotonic):
        self.engine, self.ttl, self._clock = engine, ttl, clock
        self._loaded_at: float | None = None
        self._ips: frozenset[str] = frozenset()
        self._uids: frozenset[str] = frozenset()
        self._networks = Networks(())
        self._lock = threading.Lock()

    def refresh(self) -> None:
        if self.engine is None:
            return
        with self.engine.connect() as db:
            rows = db.execute(sa.select(_blocked.c.kind, _blocked.c.value)).all()
        ips = {v for k, v in rows if k == BlockKind.IP}
        uids = {v for k, v in rows if k == BlockKind.UID}
        networks = parse_networks(",".join(v for k, v in rows if k == BlockKind.NETWORK))
        self._ips, self._uids, self._networks = frozenset(ips), frozenset(uids), Networks(networks)

    def _current(self) -> None:
        now = self._clock()
        if self._loaded_at is not None and now - self._loaded_at < self.ttl:
            return
        with self._lock:
            if self._loaded_at is None or now - self._loaded_at >= self.ttl:
                self.refresh()
                self._loaded_at = now

    def blocks(self, click: ClickIn) -> bool:
        self._current()
        return (
            click.ip in self._ips
            or (bool(click.uid) and click.uid in self._uids)
            or (bool(self._networks) and click.ip in self._networks)
        )


class ClickScreen:
    """`check(click)` refuses the click (a blocked network or entry, too many clicks) or
    counts it, and returns the risk signals it carries (docs/fraud.md#signals) for the
    offerwall's rules to act on."""

    def __init__(
        self,
        per_ip: int,
        per_uid: int,
        counts: MemoryCounts | SharedCounts,
        fail_open: FailOpen | None = None,
        *,
        blocked: Networks | None = None,
        blocklist: Blocklist | None = None,
        hosting: HostingNetworks | None = None,
    ):
        self.per_ip, self.per_uid = per_ip, per_uid
        self.blocked = blocked or Networks(())
        self.blocklist = blocklist or Blocklist(None)
        self.hosting = hosting or HostingNetworks(use_asn=False)
        self._counts = counts
        self._redis = fail_open or FailOpen("click screening")

    def check(self, click: ClickIn) -> tuple[str, ...]:
        if self.blocked and click.ip in self.blocked:
            raise TrackingRefusal(RefusalReason.BLOCKED_NETWORK, 403, TITLE, MESSAGE)
        if self.blocklist.blocks(click):
            raise TrackingRefusal(RefusalReason.BLOCKED, 403, TITLE, MESSAGE)
        self._count(click)
        signals = []
        if is_scripted(click.user_agent):
            signals.append(fraud.SCRIPTED_AGENT)
        if click.ip in self.hosting:
            signals.append(fraud.HOSTING_NETWORK)
        return tuple(signals)

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


def click_screen(settings: Settings, engine: Engine | None = None) -> ClickScreen:
    """The screen the settings describe: `QUESTWALL_BLOCKED_NETWORKS`, staff's blocklist
    in `engine`'s database, `QUESTWALL_HOSTING_NETWORKS`, and `QUESTWALL_CLICKS_PER_IP`
    and `QUESTWALL_CLICKS_PER_UID` counted in Redis when `REDIS_URL` is set."""
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
        blocked=Networks(parse_networks(settings.blocked_networks)),
        blocklist=Blocklist(engine),
        hosting=HostingNetworks(settings.hosting_networks),
    )
