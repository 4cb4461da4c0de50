"""Passwords, secrets at rest, keyed digests and request signatures.

Secrets that must be recoverable (game client secrets, offerwall API keys) are
encrypted with AES-256-GCM. Every ciphertext names the id of the master key that
sealed it, so the master key can be rotated: set the new `SECRET_KEY` and list
the old one in `SECRET_KEY_PREVIOUS`; both still open, only the new one seals.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from functools import lru_cache

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from passlib.context import CryptContext

from api.core.config import get_settings

_passwords = CryptContext(schemes=["argon2"], deprecated="auto")


def hash_password(password: str) -> str:
    return _passwords.hash(password)


def verify_password(password: str, password_hash: str) -> bool:
    return _passwords.verify(password, password_hash)


def _derive(master: str, purpose: bytes) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"questwall", info=purpose)
    return hkdf.derive(master.encode("utf-8"))


@dataclass(frozen=True)
class _MasterKey:
    key_id: str
    aead: AESGCM
    digest_key: bytes


class SecretBox:
    """Seals and opens secrets at rest; computes keyed digests for look-ups."""

    def __init__(self, master_keys: list[str]):
        if not master_keys or not master_keys[0]:
            raise ValueError("a master key is required")
        self._keys = [self._load(m) for m in master_keys]
        self._by_id = {k.key_id: k for k in self._keys}

    @staticmethod
    def _load(master: str) -> _MasterKey:
        key_id = _derive(master, b"key-id").hex()[:8]
        return _MasterKey(
            key_id=key_id,
            aead=AESGCM(_derive(master, b"secret-box/aes-256-gcm")),
            digest_key=_derive(master, b"lookup-digest/hmac-sha256"),
        )

    @property
    def current_key_id(self) -> str:
        return self._keys[0].key_id

    def seal(self, plaintext: str, *, context: str) -> str:
        """Encrypt `plaintext`; `context` (e.g. "game_credential") is bound as associated data."""
        key = self._keys[0]
        nonce = os.urandom(12)
        sealed = key.aead.encrypt(nonce, plaintext.encode("utf-8"), context.encode("utf-8"))
        return f"{key.key_id}:{base64.urlsafe_b64encode(nonce + sealed).decode('ascii')}"

    def open(self, token: str, *, context: str) -> str:
        key_id, _, payload = token.partition(":")
        key = self._by_id.get(key_id)
        if key is None:
            raise ValueError(f"no master key with id {key_id!r} is configured")
        raw = base64.urlsafe_b64decode(payload.encode("ascii"))
        plain = key.aead.decrypt(raw[:12], raw[12:], context.encode("utf-8"))
        return plain.decode("utf-8")

    def needs_reseal(self, token: str) -> bool:
        return not token.startswith(self.current_key_id + ":")

    def digest(self, value: str) -> str:
        """Keyed digest (HMAC-SHA256) under the current master key, for indexed look-ups."""
        return self._digest_with(self._keys[0], value)

    def candidate_digests(self, value: str) -> list[str]:
        """Digests under every configured key, so look-ups keep working during a rotation."""
        return [self._digest_with(k, value) for k in self._keys]

    @staticmethod
    def _digest_with(key: _MasterKey, value: str) -> str:
        return hmac.new(key.digest_key, value.encode("utf-8"), hashlib.sha256).hexdigest()


@lru_cache
def get_secret_box() -> SecretBox:
    return SecretBox(get_settings().master_keys())


def new_token(prefix: str, nbytes: int = 32) -> str:
    """A random, URL-safe credential such as `qw_cs_…`."""
    return f"{prefix}{secrets.token_urlsafe(nbytes)}"


def sign_request(secret: str, client_id: str, timestamp: str, body: bytes) -> str:
    """HMAC-SHA256 over clientId + timestamp + rawBody, lowercase hex (SERVICE.md 2)."""
    message = client_id.encode("utf-8") + timestamp.encode("utf-8") + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signed_headers(
    client_id: str, secret: str, body: bytes, *, timestamp: int | None = None
) -> dict[str, str]:
    """The headers a client sends with a signed request (what the official clients do)."""
    ts = str(timestamp if timestamp is not None else int(time.time() * 1000))
    return {
        "Content-Type": "application/json",
        "x-client-id": client_id,
        "x-timestamp": ts,
        "x-signature": sign_request(secret, client_id, ts, body),
    }


def signature_matches(expected_hex: str, provided: str) -> bool:
    """Constant-time comparison; upper-case hex is accepted."""
    return hmac.compare_digest(expected_hex.encode("ascii"), provided.lower().encode("ascii"))
