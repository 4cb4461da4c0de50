"""The one check of a signed request (docs/contract.md#signed-requests), shared by every signed route.

`authenticate` answers "who sent this, and may they ask it?": the signature and its time
window (401), the client's rate (429), then what the body claims: a body error kept until
now (so an unauthenticated caller only ever learns `invalid_signature`) and a `gameId`
that must be the credential's game (403).
"""

from __future__ import annotations

import re
import time
import weakref
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from api.core.crypto import SecretBox, open_client_secret, sign_request, signature_matches
from api.core.errors import ApiError, invalid_signature
from api.core.ratelimit import RateLimiter
from models.tables import game_credential as _credentials
from models.tables import signed_request as _signed

# Built once: this runs on every signed request.
_CREDENTIAL = sa.select(
    _credentials.c.game_id, _credentials.c.secret_sealed, _credentials.c.revoked_at
).where(_credentials.c.client_id == sa.bindparam("client_id"))
# The same, with the stored answer of an earlier request under this very signature (a
# resend), read in the same round trip; it is looked at only once the check passed.
_CREDENTIAL_AND_RECORD = (
    sa.select(
        _credentials.c.game_id,
        _credentials.c.secret_sealed,
        _credentials.c.revoked_at,
        _signed.c.status_code.label("record_status"),
        _signed.c.response.label("record_response"),
    )
    .select_from(
        _credentials.outerjoin(
            _signed,
            sa.and_(
                _signed.c.client_id == _credentials.c.client_id,
                _signed.c.signature == sa.bindparam("signature"),
            ),
        )
    )
    .where(_credentials.c.client_id == sa.bindparam("client_id"))
)
SIGNATURE = re.compile(r"[0-9a-fA-F]{64}")  # hex HMAC-SHA256
TIMESTAMP = re.compile(r"[0-9]{1,16}")  # Unix milliseconds


class OpenedSecrets:
    """Client secrets this process has opened, so a signed request skips the AES-GCM open.

    Keyed by the client id *and the sealed value*: the credential row is still read on
    every request (the read the check makes anyway), and its `revoked_at` is checked
    before the cache is looked at, so a revocation by any process applies to the very
    next request; a rotated or re-sealed secret (`questwall rotate-secrets`) is a new
    sealed value, so it misses and is opened afresh. One cache per `SecretBox`, so a
    secret is only ever served to the box that opened it. Bounded: when full it starts
    over, which costs one open per live credential.
    """

    MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self._by_box: weakref.WeakKeyDictionary[SecretBox, dict[tuple[str, str], str]] = (
            weakref.WeakKeyDictionary()
        )

    def open(self, box: SecretBox, sealed: str, *, client_id: str) -> str:
        opened = self._by_box.setdefault(box, {})
        key = (client_id, sealed)
        secret = opened.get(key)
        if secret is None:
            secret = open_client_secret(box, sealed, client_id=client_id)
            if len(opened) >= self.MAX_ENTRIES:
                opened.clear()
            opened[key] = secret
        return secret


OPENED_SECRETS = OpenedSecrets()


@dataclass(frozen=True)
class SignedMessage:
    """What a signed request carries: the three signing headers and the raw body.

    Not to be confused with `models.events.SignedRequest`, the stored record of a
    request that passed the check (the key of resend detection)."""

    client_id: str | None
    timestamp: str | None
    signature: str | None
    body: bytes


@dataclass(frozen=True)
class SignedCaller:
    """Who sent a correctly signed request."""

    game_id: str
    client_id: str
    signature: str  # lower-case hex, the key of retry detection
    # With `authenticate(with_record=True)`: the stored (status, answer) of a request
    # that committed under this signature, or None.
    record: tuple[int, dict[str, Any]] | None = None


def authenticate(
    session: Session,
    *,
    box: SecretBox,
    request: SignedMessage,
    game_id: str | None,
    window_seconds: int,
    limiter: RateLimiter | None = None,
    body_error: ApiError | None = None,
    now_ms: int | None = None,
    with_record: bool = False,
) -> SignedCaller:
    """Authenticate a signed request and check what it may ask; raise the one ApiError.

    `game_id` is the game the body names and `body_error` the error its parsing kept
    (None when the body is valid): both are looked at only once the caller is known.
    `with_record` also reads the signed-request record of this signature (resend
    detection) in the credential's round trip.
    """
    caller = _signed_caller(
        session,
        box=box,
        request=request,
        window_seconds=window_seconds,
        now_ms=now_ms,
        with_record=with_record,
    )
    if limiter is not None:
        limiter.check(caller.client_id)
    if body_error is not None:
        raise body_error
    if game_id != caller.game_id:
        raise ApiError(403, "game_mismatch", "gameId is not the game this client id belongs to.")
    return caller


def _signed_caller(
    session: Session,
    *,
    box: SecretBox,
    request: SignedMessage,
    window_seconds: int,
    now_ms: int | None = None,
    with_record: bool = False,
) -> SignedCaller:
    # The headers and HMAC of a signed request, then its time window; 401 otherwise.
    client_id, timestamp, signature = request.client_id, request.timestamp, request.signature
    body = request.body
    if not client_id or not timestamp or not signature:
        raise invalid_signature()
    if not SIGNATURE.fullmatch(signature) or not TIMESTAMP.fullmatch(timestamp):
        raise invalid_signature()
    if len(client_id) > 64 or "\x00" in client_id:  # NUL: no database can look it up
        raise invalid_signature()
    if with_record:
        params = {"client_id": client_id, "signature": signature.lower()}
        credential = session.execute(_CREDENTIAL_AND_RECORD, params).first()
    else:
        credential = session.execute(_CREDENTIAL, {"client_id": client_id}).first()
    if credential is None or credential.revoked_at is not None:
        # Spend the same HMAC work as a real check, so timing does not tell ids apart.
        signature_matches(sign_request("x" * 43, client_id, timestamp, body), signature)
        raise invalid_signature()
    # The look-up matched client_id exactly, so it is the id the secret was sealed for.
    secret = OPENED_SECRETS.open(box, credential.secret_sealed, client_id=client_id)
    expected = sign_request(secret, client_id, timestamp, body)
    if not signature_matches(expected, signature):
        raise invalid_signature()
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    if abs(now_ms - int(timestamp)) > window_seconds * 1000:
        raise ApiError(
            401,
            "timestamp_out_of_window",
            f"x-timestamp must be within {window_seconds} seconds of the server's clock.",
            [{"serverTime": now_ms}],
        )
    record = None
    if with_record and credential.record_status is not None:
        record = (credential.record_status, credential.record_response)
    return SignedCaller(
        game_id=credential.game_id,
        client_id=client_id,
        signature=signature.lower(),
        record=record,
    )
