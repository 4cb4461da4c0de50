"""Passwords, secrets at rest, keyed digests and request signatures.

Secrets that must be recoverable (game client secrets, offerwall API keys) are
encrypted with AES-256-GCM. Every ciphertext names the id of the master key that
sealed it, so the master key can be rotated: set the new `SECRET_KEY` and list
the old one in `SECRET_KEY_PREVIOUS`; both still open, only the new one seals, and
`questwall rotate-secrets` reseals what the old one sealed.

The associated data of every ciphertext binds its purpose *and its row* (a credential's
client id, an offerwall's owid): a sealed value copied to another row no longer opens.
Call sites never spell the binding themselves: they use the helper of their kind of
secret (`seal_client_secret`, `open_api_key`, …), which asks for the row's identity.
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

from cryptography.exceptions import InvalidTag
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

    @property
    def key_ids(self) -> list[str]:
        """The ids of every configured master key, the current one first."""
        return [k.key_id for k in self._keys]

    def seal(self, plaintext: str, *, context: str, row: str) -> str:
        """Encrypt `plaintext`, binding its purpose (e.g. "game_credential") and the
        identity of the row that holds it as associated data."""
        return self.seal_with(plaintext, associated_data=bound_to(context, row))

    def open(self, token: str, *, context: str, row: str) -> str:
        """Decrypt what `seal` sealed for the same purpose and row; raises otherwise."""
        return self.open_with(token, associated_data=bound_to(context, row))

    def seal_with(
        self, plaintext: str, *, associated_data: bytes, key_id: str | None = None
    ) -> str:
        """The primitive under `seal`: the caller spells the associated data and may name
        a configured key other than the current one (migrations, the key check)."""
        key = self._keys[0] if key_id is None else self._by_id[key_id]
        nonce = os.urandom(12)
        sealed = key.aead.encrypt(nonce, plaintext.encode("utf-8"), associated_data)
        return f"{key.key_id}:{base64.urlsafe_b64encode(nonce + sealed).decode('ascii')}"

    def open_with(self, token: str, *, associated_data: bytes) -> str:
        """The primitive under `open`. Raises ValueError when no configured key opens it."""
        key_id, _, payload = token.partition(":")
        key = self._by_id.get(key_id)
        if key is None:
            raise ValueError(f"no master key with id {key_id!r} is configured")
        raw = base64.urlsafe_b64decode(payload.encode("ascii"))
        try:
            plain = key.aead.decrypt(raw[:12], raw[12:], associated_data)
        except InvalidTag:
            raise ValueError(
                "the sealed value does not open with this key, purpose and row"
            ) from None
        return plain.decode("utf-8")

    def needs_reseal(self, token: str) -> bool:
        return self.key_id_of(token) != self.current_key_id

    @staticmethod
    def key_id_of(token: str) -> str:
        """The id of the master key that sealed `token`."""
        return token.partition(":")[0]

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


def bound_to(context: str, row: str) -> bytes:
    """The associated data of a sealed value: its purpose and its row, unambiguously joined."""
    if not row:
        raise ValueError("a sealed secret must be bound to its row")
    return f"{context}\x1f{row}".encode()


# One helper per kind of secret: the row each kind is bound to is part of the signature.
GAME_CREDENTIAL = "game_credential"
OFFERWALL_API_KEY = "offerwall_api_key"
POSTBACK_SIGNING_SECRET = "postback_signing_secret"  # noqa: S105 (a context name)
WEBHOOK_SECRET = "webhook_secret"  # noqa: S105 (a context name)
TOTP_SECRET = "totp_secret"  # noqa: S105 (a context name)
SIGN_IN_CHALLENGE = "sign_in_challenge"


def seal_client_secret(box: SecretBox, secret: str, *, client_id: str) -> str:
    """Seal a game credential's secret, bound to the credential's client id."""
    return box.seal(secret, context=GAME_CREDENTIAL, row=client_id)


def open_client_secret(box: SecretBox, sealed: str, *, client_id: str) -> str:
    """Open a game credential's secret; it opens only for the client id it was sealed for."""
    return box.open(sealed, context=GAME_CREDENTIAL, row=client_id)


def seal_api_key(box: SecretBox, api_key: str, *, owid: str) -> str:
    """Seal an offerwall's API key, bound to the offerwall's public id (`owid`), which is
    issued with the first key and never changes."""
    return box.seal(api_key, context=OFFERWALL_API_KEY, row=owid)


def open_api_key(box: SecretBox, sealed: str, *, owid: str) -> str:
    """Open an offerwall's API key; it opens only for the offerwall it was sealed for."""
    return box.open(sealed, context=OFFERWALL_API_KEY, row=owid)


def seal_signing_secret(box: SecretBox, secret: str, *, owid: str) -> str:
    """Seal an offerwall's postback signing secret, bound to the offerwall's owid."""
    return box.seal(secret, context=POSTBACK_SIGNING_SECRET, row=owid)


def open_signing_secret(box: SecretBox, sealed: str, *, owid: str) -> str:
    """Open an offerwall's postback signing secret."""
    return box.open(sealed, context=POSTBACK_SIGNING_SECRET, row=owid)


def seal_webhook_secret(box: SecretBox, secret: str, *, endpoint_id: str) -> str:
    """Seal a game's webhook endpoint signing secret, bound to the endpoint's id."""
    return box.seal(secret, context=WEBHOOK_SECRET, row=endpoint_id)


def open_webhook_secret(box: SecretBox, sealed: str, *, endpoint_id: str) -> str:
    """Open a webhook endpoint's signing secret."""
    return box.open(sealed, context=WEBHOOK_SECRET, row=endpoint_id)


def seal_totp_secret(box: SecretBox, secret: str, *, user_id: str) -> str:
    """Seal an account's TOTP secret (two-factor sign-in), bound to the account's id."""
    return box.seal(secret, context=TOTP_SECRET, row=user_id)


def open_totp_secret(box: SecretBox, sealed: str, *, user_id: str) -> str:
    """Open an account's TOTP secret; it opens only for the account it was sealed for."""
    return box.open(sealed, context=TOTP_SECRET, row=user_id)


def token_digest(token: str) -> str:
    """The stored form of a random bearer token (portal sessions): SHA-256, unkeyed.

    A token carries 256 random bits, so its plain hash cannot be reversed or guessed; not
    keying it means a master key rotation leaves every signed-in browser signed in."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token(prefix: str, nbytes: int = 32) -> str:
    """A random, URL-safe credential such as `qw_cs_…`."""
    return f"{prefix}{secrets.token_urlsafe(nbytes)}"


def sign_request(secret: str, client_id: str, timestamp: str, body: bytes) -> str:
    """HMAC-SHA256 over clientId + timestamp + rawBody, lowercase hex (docs/contract.md#signed-requests)."""
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
