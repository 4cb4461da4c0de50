"""Master key rotation: reseal every secret and recompute every keyed digest under the
current master key, so the earlier keys (`SECRET_KEY_PREVIOUS`) can be removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from api.core.crypto import (
    SecretBox,
    open_api_key,
    open_client_secret,
    seal_api_key,
    seal_client_secret,
)
from api.core.db import write_connection
from api.core.keycheck import (
    MasterKeyMismatch,
    forget_other_keys,
    record_current_key,
    unreadable_key_ids,
)
from models import SignInOrigin, SignInThrottle, User
from models.tables import game_credential as _credential
from models.tables import offerwall as _offerwall

_throttle: sa.Table = SignInThrottle.__table__  # type: ignore[attr-defined]
_origin: sa.Table = SignInOrigin.__table__  # type: ignore[attr-defined]
_user: sa.Table = User.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Rotated:
    """What a rotation changed: the current key's id, secrets resealed, digests rewritten."""

    key_id: str
    resealed: int
    digests: int


def rotate_secrets(*, engine: Engine, box: SecretBox) -> Rotated:
    """Bring every secret and keyed digest under the current master key, in one transaction.

    Idempotent: what is already under the current key is left as it is. Portal session
    tokens are stored as unkeyed hashes (crypto.token_digest), so sessions need nothing.
    Afterwards the key check records only the current key, and a process started with the
    previous keys removed accepts the database."""
    with write_connection(engine) as conn:
        missing = unreadable_key_ids(conn, box)
        if missing:
            raise MasterKeyMismatch(missing)
        resealed, digests = _rotate_credentials(conn, box)
        more_resealed, more_digests = _rotate_api_keys(conn, box)
        failures = _rotate_sign_in_digests(conn, box)
        record_current_key(conn, box)
        forget_other_keys(conn, box)
    return Rotated(box.current_key_id, resealed + more_resealed, digests + more_digests + failures)


def _rotate_credentials(conn: Connection, box: SecretBox) -> tuple[int, int]:
    resealed = digests = 0
    rows = conn.execute(
        sa.select(
            _credential.c.id,
            _credential.c.client_id,
            _credential.c.secret_sealed,
            _credential.c.secret_digest,
        )
    ).all()
    for row in rows:
        secret = open_client_secret(box, row.secret_sealed, client_id=row.client_id)
        changes: dict[str, Any] = {}
        if box.needs_reseal(row.secret_sealed):
            changes["secret_sealed"] = seal_client_secret(box, secret, client_id=row.client_id)
            resealed += 1
        if (digest := box.digest(secret)) != row.secret_digest:
            changes["secret_digest"] = digest
            digests += 1
        if changes:
            conn.execute(sa.update(_credential).where(_credential.c.id == row.id).values(changes))
    return resealed, digests


def _rotate_api_keys(conn: Connection, box: SecretBox) -> tuple[int, int]:
    resealed = digests = 0
    rows = conn.execute(
        sa.select(
            _offerwall.c.id,
            _offerwall.c.owid,
            _offerwall.c.api_key_sealed,
            _offerwall.c.api_key_digest,
        ).where(_offerwall.c.api_key_sealed.is_not(None))
    ).all()
    for row in rows:
        api_key = open_api_key(box, row.api_key_sealed, owid=row.owid)
        changes: dict[str, Any] = {}
        if box.needs_reseal(row.api_key_sealed):
            changes["api_key_sealed"] = seal_api_key(box, api_key, owid=row.owid)
            resealed += 1
        if (digest := box.digest(api_key)) != row.api_key_digest:
            changes["api_key_digest"] = digest
            digests += 1
        if changes:
            conn.execute(sa.update(_offerwall).where(_offerwall.c.id == row.id).values(changes))
    return resealed, digests


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
