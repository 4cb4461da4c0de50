"""Master key rotation: reseal every secret and recompute every keyed digest under the
current master key, so the earlier keys (`SECRET_KEY_PREVIOUS`) can be removed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from api.core.changes import mark
from api.core.crypto import (
    SecretBox,
    open_api_key,
    open_client_secret,
    open_signing_secret,
    open_totp_secret,
    open_webhook_secret,
    seal_api_key,
    seal_client_secret,
    seal_signing_secret,
    seal_totp_secret,
    seal_webhook_secret,
)
from api.core.db import write_connection
from api.core.keycheck import (
    MasterKeyMismatch,
    forget_other_keys,
    record_current_key,
    unreadable_key_ids,
)
from models import AccountTotp, SignInOrigin, SignInThrottle, User
from models.tables import game_credential as _credential
from models.tables import offerwall as _offerwall
from models.tables import webhook_endpoint as _webhook_endpoint

_throttle: sa.Table = SignInThrottle.__table__  # type: ignore[attr-defined]
_origin: sa.Table = SignInOrigin.__table__  # type: ignore[attr-defined]
_user: sa.Table = User.__table__  # type: ignore[attr-defined]
_totp: sa.Table = AccountTotp.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Rotated:
    """What a rotation changed: the current key's id, secrets resealed, digests rewritten."""

    key_id: str
    resealed: int
    digests: int


def rotate_secrets(
    *, engine: Engine, box: SecretBox, then: Callable[[Connection, Rotated], Any] | None = None
) -> Rotated:
    """Bring every secret and keyed digest under the current master key, in one transaction.

    Idempotent: what is already under the current key is left as it is. Portal session
    tokens are stored as unkeyed hashes (crypto.token_digest), so sessions need nothing.
    Afterwards the key check records only the current key, and a process started with the
    previous keys removed accepts the database. `then` runs last in the transaction, with
    the result (the audit trail's record of the rotation: `api/cli/server.py`)."""
    with write_connection(engine) as conn:
        missing = unreadable_key_ids(conn, box)
        if missing:
            raise MasterKeyMismatch(missing)
        resealed, digests = _rotate_sealed(conn, box, _CLIENT_SECRETS)
        more_resealed, more_digests = _rotate_sealed(conn, box, _API_KEYS)
        previous_resealed, previous_digests = _rotate_sealed(conn, box, _PREVIOUS_API_KEYS)
        more_resealed += previous_resealed
        more_digests += previous_digests
        more_resealed += _reseal_signing_secrets(conn, box)
        more_resealed += _reseal_webhook_secrets(conn, box)
        more_resealed += _reseal_totp_secrets(conn, box)
        failures = _rotate_sign_in_digests(conn, box)
        record_current_key(conn, box)
        forget_other_keys(conn, box)
        done = Rotated(
            box.current_key_id, resealed + more_resealed, digests + more_digests + failures
        )
        if then is not None:
            then(conn, done)
    return done


@dataclass(frozen=True)
class _SealedKind:
    """A kind of sealed secret: its table, the column it is bound to (the row's identity,
    also the keyword its open and seal functions take), its sealed and digest columns."""

    table: sa.Table
    bound_to: str
    sealed: str
    digest: str
    open: Callable[..., str]
    seal: Callable[..., str]


_CLIENT_SECRETS = _SealedKind(
    _credential,
    "client_id",
    "secret_sealed",
    "secret_digest",
    open_client_secret,
    seal_client_secret,
)
_API_KEYS = _SealedKind(
    _offerwall, "owid", "api_key_sealed", "api_key_digest", open_api_key, seal_api_key
)
# A replaced API key kept for its grace period: its digest must follow the master key too,
# or the key stops working as soon as the previous master key is removed.
_PREVIOUS_API_KEYS = _SealedKind(
    _offerwall,
    "owid",
    "api_key_previous_sealed",
    "api_key_previous_digest",
    open_api_key,
    seal_api_key,
)


def _rotate_sealed(conn: Connection, box: SecretBox, kind: _SealedKind) -> tuple[int, int]:
    """Reseal what an earlier key sealed and recompute stale digests; (resealed, digests)."""
    table, resealed, digests = kind.table, 0, 0
    c = table.c
    rows = conn.execute(
        sa.select(c.id, c[kind.bound_to], c[kind.sealed], c[kind.digest]).where(
            c[kind.sealed].is_not(None)
        )
    ).all()
    for row_id, bound_to, sealed, stored_digest in rows:
        binding = {kind.bound_to: bound_to}
        secret = kind.open(box, sealed, **binding)
        changes: dict[str, Any] = {}
        if box.needs_reseal(sealed):
            changes[kind.sealed] = kind.seal(box, secret, **binding)
            resealed += 1
        if (digest := box.digest(secret)) != stored_digest:
            changes[kind.digest] = digest
            digests += 1
        if changes:
            conn.execute(sa.update(table).where(c.id == row_id).values(changes))
            mark(conn)  # what processes keep by a key's digest is read again
    return resealed, digests


def _reseal_signing_secrets(conn: Connection, box: SecretBox) -> int:
    """Reseal postback signing secrets (current and overlapping) an earlier key sealed."""
    return _reseal(
        conn,
        box,
        _offerwall,
        "owid",
        ("signing_secret_sealed", "signing_secret_previous_sealed"),
        lambda sealed, owid: seal_signing_secret(
            box, open_signing_secret(box, sealed, owid=owid), owid=owid
        ),
    )


def _reseal_webhook_secrets(conn: Connection, box: SecretBox) -> int:
    """Reseal games' webhook signing secrets (current and overlapping) an earlier key
    sealed."""
    return _reseal(
        conn,
        box,
        _webhook_endpoint,
        "id",
        ("secret_sealed", "previous_secret_sealed"),
        lambda sealed, endpoint: seal_webhook_secret(
            box, open_webhook_secret(box, sealed, endpoint_id=endpoint), endpoint_id=endpoint
        ),
    )


def _reseal_totp_secrets(conn: Connection, box: SecretBox) -> int:
    """Reseal accounts' TOTP secrets (two-factor sign-in) an earlier key sealed; the
    table's key is the account's id, which each secret is bound to."""
    c, resealed = _totp.c, 0
    for user_id, sealed in conn.execute(sa.select(c.user_id, c.secret_sealed)).all():
        if box.needs_reseal(sealed):
            secret = open_totp_secret(box, sealed, user_id=user_id)
            conn.execute(
                sa.update(_totp)
                .where(c.user_id == user_id)
                .values(secret_sealed=seal_totp_secret(box, secret, user_id=user_id))
            )
            resealed += 1
    return resealed


def _reseal(
    conn: Connection,
    box: SecretBox,
    table: sa.Table,
    bound_to: str,
    columns: tuple[str, ...],
    reseal: Callable[[str, str], str],
) -> int:
    """Reseal what an earlier key sealed in `columns` (secrets without a digest), each
    bound to the row's `bound_to`; how many."""
    c, resealed = table.c, 0
    rows = conn.execute(sa.select(c.id, c[bound_to], *(c[name] for name in columns))).all()
    for row in rows:
        changes = {}
        for name in columns:
            sealed = getattr(row, name)
            if sealed and box.needs_reseal(sealed):
                changes[name] = reseal(sealed, getattr(row, bound_to))
        if changes:
            conn.execute(sa.update(table).where(c.id == row.id).values(changes))
            resealed += len(changes)
    return resealed


def _rotate_sign_in_digests(conn: Connection, box: SecretBox) -> int:
    """Sign-in counters are kept by keyed digest of the address, which cannot be reversed:
    for every account's address, a counter under an earlier key moves to the current one.
    Known origins are digests of (address, IP) and the IP is not kept, so those under an
    earlier key are dropped: the owner's next sign-in from that IP records it again.
    Counters and origins of addresses without an account protect nothing and are dropped."""
    moved = 0
    current: set[str] = set()
    for email in conn.execute(sa.select(_user.c.email)).scalars():
        digest, *earlier = box.candidate_digests(email)
        current.add(digest)
        if not earlier:
            continue
        conn.execute(sa.delete(_origin).where(_origin.c.email_digest.in_(earlier)))
        has_current = conn.execute(
            sa.select(_throttle.c.email_digest).where(_throttle.c.email_digest == digest)
        ).first()
        if has_current:
            conn.execute(sa.delete(_throttle).where(_throttle.c.email_digest.in_(earlier)))
            continue
        result = conn.execute(
            sa.update(_throttle)
            .where(_throttle.c.email_digest.in_(earlier))
            .values(email_digest=digest)
        )
        moved += int(result.rowcount or 0)
    for table in (_throttle, _origin):
        stale = sa.delete(table)
        if current:
            stale = stale.where(table.c.email_digest.not_in(current))
        conn.execute(stale)
    return moved
