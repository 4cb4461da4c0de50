"""Sign-in throttles: per client IP and per address.

- Per IP (`IpThrottle`): at most `IP_LIMIT` failed sign-ins in a moving window, counted
  by the `limits` library in Redis when `REDIS_URL` is set (shared by every process),
  else in this process's memory. It stops one client from guessing across many addresses.
- Per address (`claim_attempt`): at most `MAX_FAILURES` failures in `FAILURE_WINDOW`,
  counted in one database row per address. An attempt is claimed *before* its password
  is checked, by one conditional upsert, so parallel attempts cannot all slip through.
  It stops a guesser who spreads over many IPs.
- Known origins (`is_known_origin`, `remember_origin`): an IP that signed in to an
  address successfully before is not paused by that address's counter (only by its own
  IP limit), so knowing someone's address is not enough to lock them out.

docs/architecture.md explains the choice of figures.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import datetime, timedelta

import sqlalchemy as sa
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.strategies import MovingWindowRateLimiter
from redis.exceptions import RedisError
from sqlmodel import Session, col

from api.core.ratelimit import REDIS_PREFIX, limit_storage
from api.core.sql import dialect_insert
from models import SignInOrigin, SignInThrottle
from models.types import UTCDateTime

# Per address: this many failures within the window pause sign-in for that address.
MAX_FAILURES = 5
FAILURE_WINDOW = timedelta(minutes=15)
# Per client IP: failures in a moving 15-minute window.
IP_LIMIT = RateLimitItemPerMinute(20, 15)
# An origin stays known for this long after its last successful sign-in.
ORIGIN_TTL = timedelta(days=30)

log = logging.getLogger("questwall.throttle")


class IpThrottle:
    """Failed sign-ins per client IP, in Redis (`redis_url`) or in memory. Another `scope`
    and `limit` count something else per IP the same way (password reset requests)."""

    def __init__(
        self,
        redis_url: str = "",
        *,
        key_prefix: str = REDIS_PREFIX,
        scope: str = "sign-in",
        limit: RateLimitItem = IP_LIMIT,
    ):
        self._limiter = MovingWindowRateLimiter(limit_storage(redis_url, key_prefix=key_prefix))
        self._scope, self._limit = scope, limit

    def retry_after(self, ip: str) -> int | None:
        """Seconds until this IP may try again; None when it may try now."""
        try:
            if self._limiter.test(self._limit, self._scope, ip):
                return None
            reset = self._limiter.get_window_stats(self._limit, self._scope, ip).reset_time
        except RedisError as exc:
            # Redis down must not stop every sign-in: the per-address limit (in the
            # database) still holds, and the outage is logged.
            log.warning("%s IP limit unavailable, not applied: %s", self._scope, type(exc).__name__)
            return None
        return max(1, math.ceil(reset - time.time()))

    def failed(self, ip: str) -> None:
        """Count one failed sign-in (or one request of the scope) from this IP."""
        try:
            self._limiter.hit(self._limit, self._scope, ip)
        except RedisError as exc:
            log.warning("%s IP limit unavailable, not counted: %s", self._scope, type(exc).__name__)


def claim_attempt(session: Session, email_digest: str, now: datetime) -> int | None:
    """Count one attempt against the address before its password is checked.

    Returns None when the attempt is allowed (and counted), else the seconds until the
    address's window ends. One INSERT … ON CONFLICT DO UPDATE … WHERE: PostgreSQL locks
    the row for the statement, SQLite has one writer, so parallel claims queue and the
    `MAX_FAILURES`-th is the last to pass. A successful sign-in resets the row."""
    table = SignInThrottle.__table__  # type: ignore[attr-defined]
    at = sa.literal(now, UTCDateTime())
    expired = table.c.window_start <= sa.literal(now - FAILURE_WINDOW, UTCDateTime())
    insert = dialect_insert(session.get_bind().dialect.name, table)
    stmt = (
        insert.values(email_digest=email_digest, failures=1, window_start=now)
        .on_conflict_do_update(
            index_elements=["email_digest"],
            set_={
                "failures": sa.case((expired, 1), else_=table.c.failures + 1),
                "window_start": sa.case((expired, at), else_=table.c.window_start),
            },
            where=sa.or_(expired, table.c.failures < MAX_FAILURES),
        )
        .returning(table.c.failures)
    )
    if session.execute(stmt).first() is not None:
        return None
    started = session.execute(
        sa.select(table.c.window_start).where(table.c.email_digest == email_digest)
    ).scalar_one()
    return max(1, math.ceil((started + FAILURE_WINDOW - now).total_seconds()))


def forget_failures(session: Session, email_digest: str) -> None:
    """A successful sign-in clears the address's counter."""
    session.execute(
        sa.delete(SignInThrottle).where(col(SignInThrottle.email_digest) == email_digest)
    )


def is_known_origin(session: Session, email_digest: str, origin: str, now: datetime) -> bool:
    """Whether this origin (address and IP digest) signed in successfully lately."""
    found = session.execute(
        sa.select(col(SignInOrigin.last_success_at)).where(
            col(SignInOrigin.email_digest) == email_digest,
            col(SignInOrigin.origin_digest) == origin,
        )
    ).scalar_one_or_none()
    return found is not None and now - found < ORIGIN_TTL


def remember_origin(session: Session, email_digest: str, origin: str, now: datetime) -> None:
    """Record (or refresh) an origin after a successful sign-in."""
    table = SignInOrigin.__table__  # type: ignore[attr-defined]
    stmt = dialect_insert(session.get_bind().dialect.name, table).values(
        email_digest=email_digest, origin_digest=origin, last_success_at=now
    )
    session.execute(
        stmt.on_conflict_do_update(
            index_elements=["email_digest", "origin_digest"],
            set_={"last_success_at": stmt.excluded.last_success_at},
        )
    )


def prune(session: Session, now: datetime) -> int:
    """Delete counters whose window has passed and origins not seen for `ORIGIN_TTL`."""
    counters = session.execute(
        sa.delete(SignInThrottle).where(col(SignInThrottle.window_start) <= now - FAILURE_WINDOW)
    )
    origins = session.execute(
        sa.delete(SignInOrigin).where(col(SignInOrigin.last_success_at) < now - ORIGIN_TTL)
    )
    return int(counters.rowcount or 0) + int(origins.rowcount or 0)  # type: ignore[attr-defined]
