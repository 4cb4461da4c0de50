"""The `Questwall-Signature` header of a postback (docs/publisher-integration.md#signatures).

`t=<unix seconds>,v1=<hex HMAC-SHA256>`, the HMAC over `t + "." + the URL as sent`, keyed
with the offerwall's postback signing secret. While a rotated secret still overlaps, one
`v1=` per secret (the current one first): a receiver that knows either accepts.
`verify` is what the documented receivers do, in Python; the tests hold them to it."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Sequence

HEADER = "Questwall-Signature"
SCHEME = "v1"
TOLERANCE_SECONDS = 300


def _digest(secret: str, timestamp: int, url: str) -> str:
    message = f"{timestamp}.{url}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def header_value(url: str, secrets: Sequence[str], *, timestamp: int | None = None) -> str:
    """The header for `url` signed with each of `secrets` at `timestamp` (now)."""
    t = int(time.time()) if timestamp is None else timestamp
    return ",".join([f"t={t}", *(f"{SCHEME}={_digest(s, t, url)}" for s in secrets)])


def verify(
    header: str,
    url: str,
    secret: str,
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    """Whether `header` signs `url` with `secret`, timed within `tolerance` seconds of now."""
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        # Not "²", which isdigit() takes, nor thousands of digits int() refuses.
        if name == "t" and value.isdecimal() and len(value) <= 12:
            timestamp = int(value)
        elif name == SCHEME:
            signatures.append(value)
    now = time.time() if now is None else now
    if timestamp is None or abs(now - timestamp) > tolerance:
        return False
    expected = _digest(secret, timestamp, url)
    # As bytes: compare_digest refuses str with characters beyond ASCII.
    return any(hmac.compare_digest(expected.encode(), given.encode()) for given in signatures)
