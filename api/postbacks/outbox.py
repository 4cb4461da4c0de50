"""Postbacks (docs/contract.md#postbacks), end to end: this module owns the outbox. `enqueue` writes a
conversion's postback row (in the conversion's transaction), `values_for`/`sample_values`
give the macro values of a real or a made-up conversion, and the dispatcher claims due
postbacks with a lease, sends them, keeps every attempt (and whether it was sent), and
retries on a schedule.

At least once: a dispatcher that dies mid-delivery holds its lease until it expires, then
another claims the postback. Several dispatchers (processes or threads) share the outbox:
claims are one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)` on PostgreSQL,
and serialized by the single writer on SQLite.
"""

from __future__ import annotations

import logging
import queue
import ssl
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from api.core.config import Settings
from api.core.crypto import SecretBox, open_api_key
from api.core.db import new_session, write_session
from api.core.egress import (
    Resolver,
    address_problem,
    guarded_transport,
    parse_address,
    refusal,
    total_timeout,
)
from api.core.money import in_currency, usd
from api.postbacks import endpoint as endpoints
from api.postbacks.signature import HEADER, header_value
from api.postbacks.url import PostbackValues, render, with_status
from models import Offerwall, PostbackKind, PostbackStatus
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
from models.tables import postback as _postback
from models.tables import postback_attempt as _attempt
from models.tables import quest as _quest
from models.types import utcnow

log = logging.getLogger("questwall.postbacks")

# Waits after the 1st, 2nd, … failed attempt; after the last, the postback has failed.
RETRY_DELAYS = (5, 300, 1800, 7200, 18000, 36000, 36000)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
BODY_EXCERPT = 1024
SAMPLE_PAYOUT_MICROS = 1_500_000  # $1.50, the portal's made-up conversion


# A test conversion whose offerwall does not want test postbacks.
_UNWANTED_TEST = (
    sa.select(_conversion.c.id)
    .join(_offerwall, _offerwall.c.id == _conversion.c.offerwall_id)
    .where(
        _conversion.c.id == sa.bindparam("conversion_id"),
        _conversion.c.test,
        sa.not_(_offerwall.c.test_postbacks),
    )
)


def enqueue(
    session: Session,
    *,
    conversion_id: int,
    offerwall_id: str,
    now: datetime,
    kind: PostbackKind = PostbackKind.CONVERSION,
) -> None:
    """Put a conversion's postback (or its reversal's) in the outbox, due now; the
    dispatcher delivers it.

    The only writer of outbox rows. Call it in the conversion's (or the reversal's) own
    transaction, so neither is committed without its postback, nor a postback without it.
    A test player's conversion has none unless its offerwall asks for them
    (`test_postbacks`)."""
    if session.execute(_UNWANTED_TEST, {"conversion_id": conversion_id}).first() is not None:
        return
    session.execute(
        _postback.insert().values(
            conversion_id=conversion_id,
            offerwall_id=offerwall_id,
            kind=kind,
            status=PostbackStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
    )


def _payouts(payout_micros: int, *, exchange_rate: float, decimals: int) -> tuple[str, str]:
    """The payout in the offerwall's currency and in USD, as the macros write them."""
    payout = in_currency(payout_micros, exchange_rate=exchange_rate, decimals=decimals)
    return f"{payout:f}", f"{usd(payout_micros).normalize():f}"


def values_for(row: Any) -> PostbackValues:
    """The macro values of a real conversion (or its reversal), from the row `urls_for`
    reads."""
    payout, payout_usd = _payouts(
        row.payout_micros, exchange_rate=row.exchange_rate, decimals=row.currency_decimals
    )
    return PostbackValues(
        uid=row.uid or "",
        owid=row.owid,
        mission_id=row.mission_id,
        mission_name=row.title,
        quest_id=row.quest_id or "",
        quest_name=row.quest_name or "",
        payout=payout,
        payout_usd=payout_usd,
        clickid=row.clickid or "",
        session_ip=row.ip,
        transaction_id=row.transaction_id,
        timestamp=int(row.created_at.timestamp()),
        currency=row.currency_code,
        platform_sub1=row.sub1 or "",
        platform_sub2=row.sub2 or "",
        platform_sub3=row.sub3 or "",
        status=STATUS_OF[row.kind],
        reason=_reason(row),
    )


# The {status} each kind of postback says.
STATUS_OF = {
    PostbackKind.CONVERSION: "approved",
    PostbackKind.REVERSAL: "reversed",
    PostbackKind.HELD: "pending",
    PostbackKind.REJECTION: "rejected",
}


def _reason(row: Any) -> str:
    """The {reason}: a reversal's or a rejection's, as the reviewer wrote it."""
    if row.kind == PostbackKind.REVERSAL:
        return row.reversal_reason or ""
    if row.kind == PostbackKind.REJECTION:
        return row.review_note or ""
    return ""


def sample_values(offerwall: Offerwall) -> PostbackValues:
    """The macro values of a made-up conversion, for the portal's preview and test
    postback (its transaction id tells the publisher it is not a real one)."""
    payout, payout_usd = _payouts(
        SAMPLE_PAYOUT_MICROS,
        exchange_rate=offerwall.exchange_rate,
        decimals=offerwall.currency_decimals,
    )
    return PostbackValues(
        uid="player-123",
        owid=offerwall.owid or "",
        mission_id="00000000-0000-4000-8000-000000000001",
        mission_name="Win 3 matches in a row",
        quest_id="",
        quest_name="",
        payout=payout,
        payout_usd=payout_usd,
        clickid="test-click",
        session_ip="203.0.113.7",
        transaction_id="test-00000000-0000-4000-8000-000000000000",
        timestamp=int(utcnow().timestamp()),
        currency=offerwall.currency_code,
        platform_sub1="",
        platform_sub2="",
        platform_sub3="",
    )


@dataclass(frozen=True)
class AttemptResult:
    status_code: int | None
    body_excerpt: str | None
    error: str | None
    duration_ms: int
    # Whether a request went to the target: False when it was refused before sending
    # (scheme, non-public address) or there was no URL to send.
    sent: bool = True

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


# A paused offerwall's postbacks wait (api/postbacks/endpoint.py), and each postback of a
# conversion waits for the ones queued before it (held, then approved or rejected, then
# reversed) to be delivered or given up, so they arrive in order.
_PAUSED = (
    sa.select(_offerwall.c.id)
    .where(
        _offerwall.c.id == _postback.c.offerwall_id,
        _offerwall.c.deliveries_paused_at.is_not(None),
    )
    .exists()
)
_earlier = _postback.alias("earlier")
_EARLIER_UNSENT = (
    sa.select(_earlier.c.id)
    .where(
        _earlier.c.conversion_id == _postback.c.conversion_id,
        _earlier.c.id < _postback.c.id,
        _earlier.c.status == PostbackStatus.PENDING,
    )
    .exists()
)


def claim(
    engine: Engine,
    *,
    limit: int,
    lease_seconds: float,
    per_offerwall: int | None = None,
    busy: Mapping[str, int] | None = None,
) -> dict[int, str]:
    """Take up to `limit` due postbacks for this dispatcher until the lease ends; returns
    postback id → offerwall id.

    With `per_offerwall`, at most that many of one offerwall's postbacks are in flight,
    counting `busy` (this dispatcher's running requests by offerwall): offerwalls already
    at the cap are not even read, so a slow one's backlog cannot fill every claim."""
    busy = busy or {}
    cap = per_offerwall or limit
    full = [offerwall for offerwall, running in busy.items() if running >= cap]
    now = utcnow()
    due = sa.select(_postback.c.id, _postback.c.offerwall_id).where(
        _postback.c.status == PostbackStatus.PENDING,
        _postback.c.next_attempt_at <= now,
        sa.or_(_postback.c.lease_until.is_(None), _postback.c.lease_until < now),
        ~_PAUSED,
        ~_EARLIER_UNSENT,
    )
    if full:
        due = due.where(_postback.c.offerwall_id.not_in(full))
    # Read a few more than the limit, so that one offerwall's rows at the head of the
    # queue leave room for others'; the rows left over are unlocked at commit.
    due = (
        due.order_by(_postback.c.next_attempt_at)
        .limit(limit * 4 if per_offerwall else limit)
        .with_for_update(skip_locked=True)
    )
    with write_session(engine) as session:
        taken: dict[int, str] = {}
        room: dict[str, int] = {}
        for postback_id, offerwall_id in session.execute(due).all():
            left = room.setdefault(offerwall_id, cap - busy.get(offerwall_id, 0))
            if left > 0 and len(taken) < limit:
                taken[postback_id] = offerwall_id
                room[offerwall_id] = left - 1
        if taken:
            session.execute(
                sa.update(_postback)
                .where(_postback.c.id.in_(list(taken)))
                .values(lease_until=now + timedelta(seconds=lease_seconds))
            )
        return taken


def renew_leases(engine: Engine, ids: list[int], *, lease_seconds: float) -> None:
    """Extend the lease of postbacks whose requests are still running, so that no other
    dispatcher takes them meanwhile (a dispatcher that dies stops renewing)."""
    if not ids:
        return
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(
                _postback.c.id.in_(ids),
                _postback.c.status == PostbackStatus.PENDING,
                _postback.c.lease_until.is_not(None),
            )
            .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
        )


def release_leases(engine: Engine, ids: list[int]) -> None:
    """Give claimed postbacks that were never sent back to the outbox (a stopping
    dispatcher), so another dispatcher takes them at once rather than after the lease."""
    if not ids:
        return
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(_postback.c.id.in_(ids), _postback.c.status == PostbackStatus.PENDING)
            .values(lease_until=None)
        )


def target_problem(url: str, *, allow_private: bool) -> str | None:
    """Why a URL must not be requested (scheme, or a literal address that is not public),
    or None. Host names are checked when connecting (`api.core.egress`), against the very
    addresses the connection uses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "only http and https URLs are sent"
    literal = parse_address(parts.hostname)
    if allow_private or literal is None:
        return None
    problem = address_problem(literal)
    return None if problem is None else f"{parts.hostname} is {problem}"


def send(
    client: httpx.Client, url: str, *, allow_private: bool, secrets: tuple[str, ...] = ()
) -> AttemptResult:
    """One GET, redirects not followed; success is any 2xx. With `secrets`, it carries the
    Questwall-Signature header, signed now. A refused target is reported as not sent,
    with a duration of 0."""
    started = time.perf_counter()
    problem = target_problem(url, allow_private=allow_private)
    if problem is not None:
        return not_sent(problem)
    try:
        request_url = httpx.URL(url)
    except httpx.InvalidURL as exc:
        return not_sent(f"the URL is not valid: {exc}")
    headers = {}
    if secrets:
        # Signed over the URL as the receiver sees it: httpx's normal form of the rendered
        # one, without user:password@ or #fragment (neither reaches the receiver).
        signed_url = request_url.copy_with(userinfo=b"", fragment=None)
        headers[HEADER] = header_value(str(signed_url), secrets)
    try:
        # The client's read timeout is the total one (http_client): bound the whole request.
        stream = client.stream("GET", request_url, headers=headers)
        with total_timeout(client.timeout.read), stream as response:
            excerpt = b""
            for chunk in response.iter_bytes():
                excerpt += chunk
                if len(excerpt) >= BODY_EXCERPT:
                    break
            status = response.status_code
        text = excerpt[:BODY_EXCERPT].decode("utf-8", "replace")
        return AttemptResult(status, text, None, _ms(started))
    except httpx.TimeoutException as exc:
        return AttemptResult(None, None, f"timed out: {type(exc).__name__}", _ms(started))
    except httpx.HTTPError as exc:
        refused = refusal(exc)
        if refused is not None:
            return not_sent(refused)
        return AttemptResult(None, None, f"{type(exc).__name__}: {exc}", _ms(started))


def not_sent(reason: str) -> AttemptResult:
    """An attempt that ended before any request went out, and why."""
    return AttemptResult(None, None, reason, 0, sent=False)


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


@dataclass(frozen=True)
class Target:
    """Where a claimed postback goes: its URL (None: it cannot be sent, and `problem` says
    why) and the secrets that sign it."""

    url: str | None
    problem: str = ""
    secrets: tuple[str, ...] = ()


def urls_for(engine: Engine, box: SecretBox, ids: list[int]) -> dict[int, Target]:
    """For each postback: its stored URL, or one rendered now from the offerwall's template
    (first attempt: the API key of that moment makes its hash_key, kept for every resend);
    a reversal goes to the reversal URL when there is one, and says `status=reversed`."""
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(
                _postback.c.id,
                _postback.c.url,
                _postback.c.kind,
                _offerwall.c.postback_url,
                _offerwall.c.reversal_url,
                _offerwall.c.review_postbacks,
                _offerwall.c.api_key_sealed,
                _offerwall.c.signing_secret_sealed,
                _offerwall.c.signing_secret_previous_sealed,
                _offerwall.c.signing_secret_previous_until,
                _offerwall.c.owid,
                _offerwall.c.exchange_rate,
                _offerwall.c.currency_decimals,
                _offerwall.c.currency_code,
                _conversion.c.transaction_id,
                _conversion.c.payout_micros,
                _conversion.c.created_at,
                _conversion.c.quest_id,
                _conversion.c.reversal_reason,
                _conversion.c.review_note,
                _mission.c.id.label("mission_id"),
                _mission.c.title,
                _quest.c.name.label("quest_name"),
                _click.c.uid,
                _click.c.clickid,
                _click.c.ip,
                _click.c.sub1,
                _click.c.sub2,
                _click.c.sub3,
            )
            .select_from(
                _postback.join(_conversion, _conversion.c.id == _postback.c.conversion_id)
                .join(_offerwall, _offerwall.c.id == _postback.c.offerwall_id)
                .join(_mission, _mission.c.id == _conversion.c.mission_id)
                .join(_click, _click.c.id == _conversion.c.click_id)
                .outerjoin(_quest, _quest.c.id == _conversion.c.quest_id)
            )
            .where(_postback.c.id.in_(ids))
        ).all()
    keys: dict[str, str] = {}
    opened: dict[str, str] = {}
    now = utcnow()
    found: dict[int, Target] = {}
    for row in rows:
        secrets = endpoints.signing_secrets(box, row, now=now, cache=opened)
        template = row.postback_url
        if row.kind == PostbackKind.REVERSAL:
            template = row.reversal_url or template
        # A receiver that hears of reviews (or of reversals) needs each postback's status.
        if template and (row.kind != PostbackKind.CONVERSION or row.review_postbacks):
            template = with_status(template)
        if row.url:
            found[row.id] = Target(row.url, secrets=secrets)
        elif not template or not row.api_key_sealed:
            found[row.id] = Target(None, "the offerwall has no postback URL")
        else:
            if row.api_key_sealed not in keys:
                keys[row.api_key_sealed] = open_api_key(box, row.api_key_sealed, owid=row.owid)
            url = render(template, values_for(row).mapping(), keys[row.api_key_sealed])
            found[row.id] = Target(url, secrets=secrets)
    return found


# Seconds between two looks for held conversions due to be approved by themselves.
REVIEW_EVERY = 60.0

# A receiver that answers 410 Gone says the postback must not come again.
GONE = 410


def _record(
    engine: Engine,
    done: list[tuple[int, str | None, datetime, AttemptResult]],
    settings: Settings,
) -> list[endpoints.Notice]:
    """Keep the attempts and move each postback on: delivered, retried later, or failed
    (out of attempts, or 410 Gone); count them into their offerwalls' health. Returns the
    offerwalls this paused, to be announced."""
    now = utcnow()
    with write_session(engine) as session:
        rows = session.execute(
            sa.select(_postback.c.id, _postback.c.attempts, _postback.c.offerwall_id).where(
                _postback.c.id.in_([d[0] for d in done])
            )
        ).all()
        counts = {row.id: row.attempts for row in rows}
        walls = {row.id: row.offerwall_id for row in rows}
        session.execute(
            _attempt.insert(),
            [
                {
                    "postback_id": i,
                    "started_at": at,
                    "duration_ms": r.duration_ms,
                    "status_code": r.status_code,
                    "body_excerpt": r.body_excerpt,
                    "error": r.error,
                    "sent": r.sent,
                }
                for i, _, at, r in done
            ],
        )
        for postback_id, url, _, result in done:
            attempts = counts[postback_id] + 1
            values: dict[str, Any] = {"attempts": attempts, "lease_until": None}
            if url is not None:
                values["url"] = url
            if result.delivered:
                values.update(status=PostbackStatus.DELIVERED, delivered_at=now)
            elif url is None or attempts >= MAX_ATTEMPTS or result.status_code == GONE:
                values.update(status=PostbackStatus.FAILED)
            else:
                values["next_attempt_at"] = now + timedelta(seconds=RETRY_DELAYS[attempts - 1])
            session.execute(
                sa.update(_postback).where(_postback.c.id == postback_id).values(**values)
            )
        # Attempts without a URL say nothing about the endpoint (there is none).
        outcomes = [
            endpoints.Outcome(walls[i], at, not r.delivered, _error_text(r))
            for i, url, at, r in done
            if url is not None and i in walls
        ]
        return endpoints.record_outcomes(session, outcomes, settings, now)


def _error_text(result: AttemptResult) -> str:
    """An attempt's failure in a few words (the pause notice)."""
    if result.error:
        return result.error
    return f"HTTP {result.status_code}" if result.status_code is not None else ""


def resend(engine: Engine, postback_id: int) -> None:
    """Queue a postback for one more attempt now (the portal's "resend")."""
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(_postback.c.id == postback_id)
            .values(
                status=PostbackStatus.PENDING,
                next_attempt_at=utcnow(),
                lease_until=None,
                attempts=sa.case(
                    (_postback.c.attempts >= MAX_ATTEMPTS, MAX_ATTEMPTS - 1),
                    else_=_postback.c.attempts,
                ),
            )
        )


def http_client(
    settings: Settings,
    *,
    pool: int = 32,
    resolver: Resolver | None = None,
    network: httpcore.NetworkBackend | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.Client:
    """The postback client: every connection resolves once and goes to a checked address
    (`api.core.egress`), from POSTBACK_SOURCE_ADDRESS when set. `resolver`, `network` and
    `ssl_context` replace the system resolver, TCP connections and trusted certificate
    authorities (tests)."""
    timeout = httpx.Timeout(
        settings.postback_total_timeout, connect=settings.postback_connect_timeout
    )
    transport = guarded_transport(
        allow_private=settings.postback_allow_private,
        resolver=resolver,
        inner=network,
        local_address=settings.postback_source_address or None,
        max_connections=pool,
        ssl_context=ssl_context,
    )
    return httpx.Client(
        timeout=timeout,
        transport=transport,
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": "Questwall-Postback/1.0"},
    )


@dataclass(frozen=True)
class _Finished:
    """An attempt that ended and waits to be recorded."""

    postback_id: int
    url: str | None
    started_at: datetime
    result: AttemptResult


# Claimed postbacks one offerwall may hold per allowed request (waiting for a free
# request of that offerwall), so its requests follow each other without a claim between.
HELD_PER_REQUEST = 4


class Dispatcher:
    """Claims due postbacks and delivers them with a pool of threads, until stopped.

    Each offerwall's claimed postbacks wait in a queue of their own, sent by at most
    POSTBACK_PER_OFFERWALL threads ("lanes") at a time: a receiver that hangs holds only its
    own lanes, and the other offerwalls' postbacks keep flowing. Each attempt is recorded as
    soon as it ends (those that ended together in one transaction) and the dispatcher claims
    again. Leases of held postbacks are renewed until their attempt is recorded."""

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
        self._reviewed_at: float | None = None

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
        notices = _record(
            self.engine,
            [(d.postback_id, d.url, d.started_at, d.result) for d in done],
            self.settings,
        )
        endpoints.announce(notices)
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

    def approve_due(self) -> None:
        """Once a minute, approve the held conversions whose review time is up: their
        postbacks join the outbox this dispatcher reads (docs/fraud.md#the-review-queue)."""
        from api.conversions.review import auto_approve  # the review queues postbacks: no cycle

        now = time.monotonic()
        if self._reviewed_at is not None and now - self._reviewed_at < REVIEW_EVERY:
            return
        self._reviewed_at = now
        approved = auto_approve(self.engine)
        if approved:
            log.info("approved %d held conversions whose review time was up", approved)

    def run(self) -> None:
        with (
            ThreadPoolExecutor(self.threads, thread_name_prefix="postback") as pool,
            http_client(self.settings, pool=self.threads) as client,
        ):
            while not self.stop_event.is_set():
                try:
                    self.approve_due()
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
