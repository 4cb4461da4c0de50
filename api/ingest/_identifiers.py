"""Game users, their identifiers, and links to platform users (docs/contract.md#identifiers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlmodel import Session, select

from api.core.sql import insert_ignore_many, upsert_many
from models import GameUser, GameUserIdentifier
from models.schemas import IdentifierIn, normalize_identifier
from models.tables import game_user as _game_user
from models.tables import game_user_identifier as _identifier
from models.tables import platform_user as _platform_user
from models.tables import platform_user_identifier as _platform_identifier
from models.types import utcnow


@dataclass(frozen=True)
class ItemRejection:
    code: str
    message: str
    field: str | None = None


@dataclass
class _UserState:
    id: int
    platform_user_id: str | None
    # False for a row this batch created up front, until the item that creates the
    # user is applied: items before it see no user (the first-item rule).
    exists: bool


@dataclass
class BatchUsers:
    """The game users a batch's identifiers touch, created and locked up front."""

    users: dict[str, _UserState] = field(default_factory=dict)
    platform_users: frozenset[str] = frozenset()  # the batch's platformUserIds that exist


def lock_batch_users(
    *, session: Session, game_id: str, items: Sequence[IdentifierIn]
) -> BatchUsers:
    """Lock every game user of `items` in userId order, creating the new ones a later
    item will need, before any item is applied.

    Batches that touch the same users in different orders then take their row locks in
    one order and wait for each other instead of deadlocking (on PostgreSQL; SQLite has
    one writer). What the items do is unchanged: `IdentifierWrites` still applies them
    in the order of the request, and a user created here only counts as existing from
    the item that creates it on.
    """
    wanted = {item.userId for item in items}
    if not wanted:
        return BatchUsers()
    batch = BatchUsers(platform_users=_existing_platform_users(session, items))
    # Existing users first, in one statement that locks them in userId order.
    for row in session.execute(_LOCK_USERS, {"game_id": game_id, "users": sorted(wanted)}):
        batch.users[row.user_id] = _UserState(row.id, row.platform_user_id, exists=True)
    creating = sorted({item.userId for item in items if _creates(item, batch)} - set(batch.users))
    if creating:
        batch.users.update(_create_locked(session, game_id, creating))
    return batch


def _existing_platform_users(session: Session, items: Sequence[IdentifierIn]) -> frozenset[str]:
    named = {i.platformUserId for i in items if i.platformUserId is not None}
    if not named:
        return frozenset()
    rows = session.execute(sa.select(_platform_user.c.id).where(_platform_user.c.id.in_(named)))
    return frozenset(rows.scalars())


def _creates(item: IdentifierIn, batch: BatchUsers) -> bool:
    """Whether `item` creates its user if the user does not exist yet."""
    changes = item.provided()
    return _refusal(changes, batch) is None and any(v is not None for v in changes.values())


def _refusal(changes: dict[str, str | None], batch: BatchUsers) -> ItemRejection | None:
    platform_user_id = changes.get("platformUserId")
    if platform_user_id is not None and platform_user_id not in batch.platform_users:
        return ItemRejection(
            "unknown_platform_user", "platformUserId names no platform user", "platformUserId"
        )
    return None


def _create_locked(session: Session, game_id: str, user_ids: list[str]) -> dict[str, _UserState]:
    """Insert the users (in userId order, one statement), and lock the rows parallel
    batches committed meanwhile."""
    now = utcnow()
    inserted = insert_ignore_many(
        session,
        _game_user,
        [
            {"game_id": game_id, "user_id": u, "created_at": now, "updated_at": now}
            for u in user_ids
        ],
        conflict=("game_id", "user_id"),
        returning=("id", "user_id"),
    )
    found = {row.user_id: _UserState(row.id, None, exists=False) for row in inserted}
    if others := [u for u in user_ids if u not in found]:
        for row in session.execute(_LOCK_USERS, {"game_id": game_id, "users": others}):
            found[row.user_id] = _UserState(row.id, row.platform_user_id, exists=True)
    return found


_LOCK_USERS = (
    sa.select(_game_user.c.id, _game_user.c.user_id, _game_user.c.platform_user_id)
    .where(
        _game_user.c.game_id == sa.bindparam("game_id"),
        _game_user.c.user_id.in_(sa.bindparam("users", expanding=True)),
    )
    .order_by(_game_user.c.user_id)
    .with_for_update()
)
_OWNERS_AT_ONCE = 400  # (kind, value) pairs per look-up of verified identifiers
_ROWS_AT_ONCE = 500  # identifier rows per statement


class IdentifierWrites:
    """A batch's identifiers items, applied in the order of the request and written
    set-based.

    Each item is decided in memory against what the items before it did (the first-item
    rule, a link made by an earlier item), and what it changes is collected: the last
    value of each (user, kind) and each user's link. The collected writes go to the
    database in a few statements, before a new link is told (`on_link` evaluates stored
    events and reads the links, so it sees every item up to its own) and at `flush`.
    """

    def __init__(self, session: Session, batch: BatchUsers, items: Sequence[IdentifierIn]):
        self._session = session
        self._batch = batch
        self._owners = _verified_owners(session, items)
        self._identifiers: dict[tuple[int, str], str | None] = {}  # (user, kind) → value
        self._links: dict[int, str | None] = {}  # game user id → its link

    def apply(
        self, item: IdentifierIn, on_link: Callable[[str, str], object] | None = None
    ) -> ItemRejection | None:
        """Apply one validated item; return why it was refused, or None. Omitted fields
        stay as they were, `null` removes, a value adds or replaces. `on_link(platform
        user id, user id)` is called when the item links the user to a platform user it
        was not linked to before."""
        changes = item.provided()
        refusal = _refusal(changes, self._batch)
        if refusal is not None:
            return refusal
        user = self._batch.users.get(item.userId)
        if user is None or not user.exists:
            if not any(v is not None for v in changes.values()):
                return ItemRejection(
                    "identifier_required",
                    "the first identifiers of a user need at least one non-null identifier "
                    "besides userId",
                )
            assert user is not None, "lock_batch_users creates every user an item creates"
            user.exists = True
        for kind, value in changes.items():
            if kind != "platformUserId":  # a link, not a stored identifier
                self._identifiers[(user.id, kind)] = value
        link = self._link_for(changes, current=user.platform_user_id)
        self._links[user.id] = link
        previous, user.platform_user_id = user.platform_user_id, link
        if link is not None and link != previous and on_link is not None:
            self.flush()
            on_link(link, item.userId)
        return None

    def _link_for(self, changes: dict[str, str | None], *, current: str | None) -> str | None:
        """The platform user this game user is linked to after `changes`."""
        if "platformUserId" in changes:
            return changes["platformUserId"]
        if current is not None:
            return current  # a link, once made, stays until platformUserId: null removes it
        owners: set[str] = set()
        for kind, value in changes.items():
            if value is not None:
                owners |= self._owners.get((kind, normalize_identifier(kind, value)), set())
        # Only an identifier verified for exactly one platform user links.
        return owners.pop() if len(owners) == 1 else None

    def flush(self) -> None:
        """Write what the items applied so far changed."""
        session, now = self._session, utcnow()
        kept = sorted((key, v) for key, v in self._identifiers.items() if v is not None)
        removed = sorted(key for key, v in self._identifiers.items() if v is None)
        for start in range(0, len(kept), _ROWS_AT_ONCE):
            rows = [
                {
                    "game_user_id": user_id,
                    "kind": kind,
                    "value": value,
                    "value_normalized": normalize_identifier(kind, value),
                    "updated_at": now,
                }
                for (user_id, kind), value in kept[start : start + _ROWS_AT_ONCE]
            ]
            upsert_many(
                session,
                _identifier,
                rows,
                conflict=("game_user_id", "kind"),
                update=("value", "value_normalized", "updated_at"),
            )
        for start in range(0, len(removed), _ROWS_AT_ONCE):
            session.execute(
                sa.delete(_identifier).where(
                    sa.tuple_(_identifier.c.game_user_id, _identifier.c.kind).in_(
                        removed[start : start + _ROWS_AT_ONCE]
                    )
                )
            )
        if self._links:
            session.execute(
                _SET_LINK,
                [
                    {"row_id": user_id, "link": link, "now": now}
                    for user_id, link in sorted(self._links.items())
                ],
            )
        self._identifiers.clear()
        self._links.clear()


_SET_LINK = (
    sa.update(_game_user)
    .where(_game_user.c.id == sa.bindparam("row_id"))
    .values(platform_user_id=sa.bindparam("link"), updated_at=sa.bindparam("now"))
)


def _verified_owners(
    session: Session, items: Sequence[IdentifierIn]
) -> dict[tuple[str, str], set[str]]:
    """The platform users each (kind, normalized value) of the items is verified for,
    read once for the batch (the batch never changes them)."""
    pairs = sorted(
        {
            (kind, normalize_identifier(kind, value))
            for item in items
            for kind, value in item.provided().items()
            if value is not None and kind != "platformUserId"
        }
    )
    owners: dict[tuple[str, str], set[str]] = {}
    table = _platform_identifier
    for start in range(0, len(pairs), _OWNERS_AT_ONCE):
        rows = session.execute(
            sa.select(table.c.kind, table.c.value_normalized, table.c.platform_user_id).where(
                sa.tuple_(table.c.kind, table.c.value_normalized).in_(
                    pairs[start : start + _OWNERS_AT_ONCE]
                )
            )
        )
        for kind, value, platform_user_id in rows:
            owners.setdefault((kind, value), set()).add(platform_user_id)
    return owners


def _find_user(session: Session, game_id: str, user_id: str) -> GameUser | None:
    return session.exec(
        select(GameUser).where(GameUser.game_id == game_id, GameUser.user_id == user_id)
    ).first()


def identifiers_of(*, session: Session, game_id: str, user_id: str) -> dict[str, str]:
    """The stored identifiers of a game user, by kind (empty if the user is unknown)."""
    user = _find_user(session, game_id, user_id)
    if user is None:
        return {}
    rows = session.exec(
        select(GameUserIdentifier).where(GameUserIdentifier.game_user_id == user.id)
    ).all()
    found = {row.kind: row.value for row in rows}
    if user.platform_user_id:
        found["platformUserId"] = user.platform_user_id
    return found
