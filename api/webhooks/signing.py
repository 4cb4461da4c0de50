"""Signing a webhook as the Standard Webhooks specification says, so that its published
verifiers (`standardwebhooks` on PyPI and npm, Svix's) accept it unchanged.

A secret is `whsec_` and the base64 of 32 random bytes. A message carries the headers
`webhook-id` (the same on every attempt), `webhook-timestamp` (unix seconds of the
attempt) and `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed with the
secret's bytes, of `<id>.<timestamp>.<body>`; during a rotation's overlap one signature per
secret, space-separated, the current one first."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence

PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX))


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = message_id.encode() + b"." + str(timestamp).encode() + b"." + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(
    message_id: str, timestamp: int, body: bytes, secrets_: Sequence[str]
) -> dict[str, str]:
    """The headers of one attempt, signed with each of `secrets_` (current first)."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(s, message_id, timestamp, body) for s in secrets_),
        "content-type": "application/json",
    }
