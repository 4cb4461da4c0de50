"""An API key's offerwall, and the catalog version, kept in memory between requests.

The offers API runs on every open of a publisher's wall; reading the key's offerwall and
the catalog version from the database on each call cost more than the rest of a cached
page. This process keeps both while `api.core.changes` hears no change: a suspension, a
key rotation or a currency change in any process drops what is kept (at once here, on
PostgreSQL within a round trip of the commit elsewhere, else within half a second), so a
refused key is refused everywhere within a second.

Kept by the key's keyed digest, never the key itself; a replaced key inside its grace
period is kept only until that period ends. Unknown keys are not kept.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, replace
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from api.core import catalog
from api.core.changes import Changes, changes_of
from api.core.crypto import SecretBox
from api.core.errors import ApiError
from api.listing.offers import ListingOfferwall
from models import OfferwallStatus
from models.tables import offerwall as _offerwall
from models.types import utcnow

# Built once; a request that finds nothing kept runs it. The key is found by its keyed
# digest (any configured master key's, during a rotation).
_FIND_BY_KEY = sa.select(
    _offerwall.c.id,
    _offerwall.c.status,
    _offerwall.c.owid,
    _offerwall.c.exchange_rate,
    _offerwall.c.currency_decimals,
    _offerwall.c.currency_code,
    _offerwall.c.api_key_digest,
    _offerwall.c.api_key_previous_until,
    catalog.VERSION_SUBQUERY,  # read in the same round trip
).where(
    sa.or_(
        _offerwall.c.api_key_digest.in_(sa.bindparam("digests", expanding=True)),
        # A replaced key, inside the grace period its publisher gave it.
        sa.and_(
            _offerwall.c.api_key_previous_digest.in_(sa.bindparam("old", expanding=True)),
            _offerwall.c.api_key_previous_until > sa.bindparam("now"),
        ),
    )
)


@dataclass(frozen=True)
class _Kept:
    offerwall: ListingOfferwall
    status: str
    changes: Changes
    generation: int  # of `changes` when it was read
    read_at: float  # on `changes.clock`
    until: datetime | None  # a replaced key: the end of its grace period


class KeptKeys:
    """Per engine: {key digest: what it was read as}, and the catalog version."""

    def __init__(self) -> None:
        self._by_engine: weakref.WeakKeyDictionary[Engine, dict[str, _Kept]] = (
            weakref.WeakKeyDictionary()
        )
        self._versions: weakref.WeakKeyDictionary[Engine, tuple[Changes, int, float, int]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def offerwall(self, engine: Engine, box: SecretBox, api_key: str | None) -> _Kept | None:
        """What the key was read as, if still valid; None: read it."""
        if not api_key:
            return None
        kept = self._by_engine.get(engine, {}).get(box.digest(api_key))
        if kept is None or not _fresh(kept.changes, kept.generation, kept.read_at):
            return None
        if kept.until is not None and utcnow() >= kept.until:
            return None
        version = self.version(engine)
        if version is None:
            return None
        return replace(kept, offerwall=replace(kept.offerwall, catalog_version=version))

    def version(self, engine: Engine) -> int | None:
        found = self._versions.get(engine)
        if found is None or not _fresh(found[0], found[1], found[2]):
            return None
        return found[3]

    def read(self, conn: Connection, box: SecretBox, api_key: str) -> _Kept | None:
        """Read the key's offerwall (and the catalog version) and keep them."""
        changes = changes_of(conn.engine)
        generation, read_at = changes.generation, changes.clock()
        digests = box.candidate_digests(api_key)
        row = conn.execute(_FIND_BY_KEY, {"digests": digests, "old": digests, "now": utcnow()})
        found = row.first()
        if found is None:
            return None
        replaced = found.api_key_digest not in digests
        kept = _Kept(
            ListingOfferwall.of(found),
            found.status,
            changes,
            generation,
            read_at,
            found.api_key_previous_until if replaced else None,
        )
        if changes.generation == generation:  # nothing changed while it was read
            with self._lock:
                walls = self._by_engine.setdefault(conn.engine, {})
                if len(walls) >= MAX_KEPT:
                    walls.clear()
                walls[digests[0]] = kept
                self._versions[conn.engine] = (
                    changes,
                    generation,
                    read_at,
                    int(found.version or 0),
                )
        return kept


MAX_KEPT = 10_000  # keys kept per engine; past it, all are dropped and read again
KEYS = KeptKeys()


def _fresh(changes: Changes, generation: int, read_at: float) -> bool:
    return changes.generation == generation and changes.clock() - read_at < changes.max_age()


def checked(kept: _Kept | None, use: str) -> ListingOfferwall:
    """401 missing or unknown, 403 not approved (saying what only an approved offerwall
    does: `use`)."""
    if kept is None:
        raise ApiError(401, "invalid_api_key", "The x-api-key header is missing or not valid.")
    if kept.status != OfferwallStatus.APPROVED:
        raise ApiError(
            403,
            "offerwall_not_approved",
            f"This offerwall is {kept.status}; only an approved offerwall {use}.",
        )
    return kept.offerwall


def kept_offerwall(
    engine: Engine, box: SecretBox, api_key: str | None, use: str = "lists offers"
) -> ListingOfferwall | None:
    """The key's offerwall from memory (401/403 as `approved_offerwall`); None when
    nothing valid is kept and the database must be read."""
    kept = KEYS.offerwall(engine, box, api_key)
    return None if kept is None else checked(kept, use)


def approved_offerwall(
    *, conn: Connection, box: SecretBox, api_key: str | None, use: str = "lists offers"
) -> ListingOfferwall:
    """The offerwall of an API key: 401 missing or unknown, 403 not approved (saying what
    only an approved offerwall does: `use`)."""
    kept = KEYS.offerwall(conn.engine, box, api_key)
    if kept is None and api_key:
        kept = KEYS.read(conn, box, api_key)
    return checked(kept, use)
