"""Sending a postback (docs/contract.md#postbacks): one GET per attempt, and its result.

`http_client` is the postback client: every connection goes through `api.core.egress`
(resolved once, to a checked public address, from POSTBACK_SOURCE_ADDRESS when set), with
a total timeout, no redirects followed. `send` makes one attempt and reports it as an
`AttemptResult`, signed with the offerwall's secrets (`api/postbacks/signature.py`); a
target refused before any request (`target_problem`) is reported as not sent. A `Target`
is where a claimed postback goes (`api.postbacks.outbox.urls_for` finds it).

No database here: the outbox (`api/postbacks/outbox.py`) keeps the attempts, the
dispatcher (`api/postbacks/dispatcher.py`) calls `send`, and so do the test postback
(`api/postbacks/trial.py`) and the alert sender (`api/postbacks/alerts.py`).
"""

from __future__ import annotations

import logging
import ssl
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx

from api.core.config import Settings
from api.core.egress import (
    Resolver,
    address_problem,
    guarded_transport,
    parse_address,
    refusal,
    total_timeout,
)
from api.ops import attempt_outcome, count_attempt, note_attempt
from api.postbacks.signature import HEADER, header_value

BODY_EXCERPT = 1024


@dataclass(frozen=True)
class AttemptResult:
    """One attempt's outcome: the answer's status and start, or the error; how long."""

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


def count_result(kind: str, result: AttemptResult) -> None:
    """questwall_delivery_attempts_total and its duration, for one recorded attempt."""
    count_attempt(
        kind,
        status_code=result.status_code,
        sent=result.sent,
        duration_seconds=result.duration_ms / 1000,
    )


def log_result(log: logging.Logger, kind: str, message: object, result: AttemptResult) -> None:
    """The attempt's log line: its outcome, status and time, never the URL, the answer or
    the error's text (a URL may carry its receiver's own tokens)."""
    outcome = attempt_outcome(result.status_code, sent=result.sent)
    note_attempt(outcome, result.status_code)
    log.info(
        "%s %s attempt: %s",
        kind,
        message,
        outcome,
        extra={
            "outbox": kind,
            "outcome": outcome,
            "status": result.status_code,
            "duration_ms": result.duration_ms,
        },
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
    request_url = _checked(url, allow_private=allow_private)
    if isinstance(request_url, AttemptResult):
        return request_url
    headers = {}
    if secrets:
        # Signed over the URL as the receiver sees it: httpx's normal form of the rendered
        # one, without user:password@ or #fragment (neither reaches the receiver).
        signed_url = request_url.copy_with(userinfo=b"", fragment=None)
        headers[HEADER] = header_value(str(signed_url), secrets)
    return _exchange(client, "GET", request_url, headers, None, started)


def post(
    client: httpx.Client,
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    allow_private: bool,
) -> AttemptResult:
    """One POST of `body` with `headers` (a game's webhook), checked and reported as `send`
    does a postback."""
    started = time.perf_counter()
    request_url = _checked(url, allow_private=allow_private)
    if isinstance(request_url, AttemptResult):
        return request_url
    return _exchange(client, "POST", request_url, headers, body, started)


def _checked(url: str, *, allow_private: bool) -> httpx.URL | AttemptResult:
    """The URL to request, or the attempt that was not sent and why."""
    problem = target_problem(url, allow_private=allow_private)
    if problem is not None:
        return not_sent(problem)
    try:
        return httpx.URL(url)
    except httpx.InvalidURL as exc:
        return not_sent(f"the URL is not valid: {exc}")


def _exchange(
    client: httpx.Client,
    method: str,
    url: httpx.URL,
    headers: dict[str, str],
    content: bytes | None,
    started: float,
) -> AttemptResult:
    try:
        # The client's read timeout is the total one (http_client): bound the whole request.
        stream = client.stream(method, url, headers=headers, content=content)
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
    # The request that made the postback (api/ops: its attempts log and trace under it).
    request_id: str | None = None
    traceparent: str | None = None


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
