"""Game users, their identifiers, and links to platform users (docs/contract.md#identifiers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlmodel import Session, select

from api.core.sql import dialect_insert, upsert
from models import GameUser, GameUserIdentifier, PlatformUserIdentifier
from models.schemas import IdentifierIn, normalize_identifier
from models.tables import game_user as _game_user
from models.tables import game_user_identifier as _identifier
from models.tables import platform_user as _platform_user
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
    one writer). What the items do is unchanged: `apply_identifiers` still applies them
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
    for user_id in creating:
        batch.users[user_id] = _create_locked(session, game_id, user_id)
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


def _create_locked(session: Session, game_id: str, user_id: str) -> _UserState:
    """Insert the user, or lock the row a parallel batch committed meanwhile."""
    now = utcnow()
    values = {"game_id": game_id, "user_id": user_id, "created_at": now, "updated_at": now}
    dialect = session.get_bind().dialect.name
    inserted = session.execute(
        dialect_insert(dialect, _game_user)
        .values(**values)
        .on_conflict_do_nothing(index_elements=("game_id", "user_id"))
        .returning(_game_user.c.id)
    ).first()
    if inserted is not None:
        return _UserState(inserted.id, None, exists=False)
    row = session.execute(_LOCK_USERS, {"game_id": game_id, "users": [user_id]}).one()
    return _UserState(row.id, row.platform_user_id, exists=True)


_LOCK_USERS = (
    sa.select(_game_user.c.id, _game_user.c.user_id, _game_user.c.platform_user_id)
    .where(
        _game_user.c.game_id == sa.bindparam("game_id"),
        _game_user.c.user_id.in_(sa.bindparam("users", expanding=True)),
    )
    .order_by(_game_user.c.user_id)
    .with_for_update()
)


def apply_identifiers(
    *,
    session: Session,
    batch: BatchUsers,
    item: IdentifierIn,
    on_link: Callable[[str, str], object] | None = None,
) -> ItemRejection | None:
    """Apply one validated identifiers item; return why it was refused, or None.

    `batch` comes from `lock_batch_users` over all the request's items. Omitted fields
    stay as they were, `null` removes, a value adds or replaces.
    `on_link(platform_user_id, user_id)` is called when the item links the user to a
    platform user it was not linked to before (so stored events can be evaluated then).
    """
    changes = item.provided()
    refusal = _refusal(changes, batch)
    if refusal is not None:
        return refusal
    user = batch.users.get(item.userId)
    if user is None or not user.exists:
        if not any(v is not None for v in changes.values()):
            return ItemRejection(
                "identifier_required",
                "the first identifiers of a user need at least one non-null identifier "
                "besides userId",
            )
        assert user is not None, "lock_batch_users creates every user an item creates"
        user.exists = True

    now = utcnow()
    for kind in sorted(changes):  # a fixed order keeps concurrent writers from deadlocking
        value = changes[kind]
        if kind == "platformUserId":
            continue  # a link, not a stored identifier
        if value is None:
            session.execute(
                sa.delete(_identifier).where(
                    _identifier.c.game_user_id == user.id, _identifier.c.kind == kind
                )
            )
        else:
            upsert(
                session,
                _identifier,
                {
                    "game_user_id": user.id,
                    "kind": kind,
                    "value": value,
                    "value_normalized": normalize_identifier(kind, value),
                    "updated_at": now,
                },
                conflict=("game_user_id", "kind"),
                update=("value", "value_normalized", "updated_at"),
            )

    link = _link_for(session, changes, current=user.platform_user_id)
    session.execute(
        sa.update(_game_user)
        .where(_game_user.c.id == user.id)
        .values(platform_user_id=link, updated_at=now)
    )
    previous, user.platform_user_id = user.platform_user_id, link
    if link is not None and link != previous and on_link is not None:
        on_link(link, item.userId)
    return None


def _find_user(session: Session, game_id: str, user_id: str) -> GameUser | None:
    return session.exec(
        select(GameUser).where(GameUser.game_id == game_id, GameUser.user_id == user_id)
    ).first()


def _link_for(
    session: Session, changes: dict[str, str | None], *, current: str | None
) -> str | None:
    """The platform user this game user is linked to after `changes`."""
    if "platformUserId" in changes:
        return changes["platformUserId"]
    if current is not None:
        return current  # a link, once made, stays until platformUserId: null removes it
    owners: set[str] = set()
    for kind, value in changes.items():
        if value is None:
            continue
        rows = session.exec(
            select(PlatformUserIdentifier.platform_user_id).where(
                PlatformUserIdentifier.kind == kind,
                PlatformUserIdentifier.value_normalized == normalize_identifier(kind, value),
            )
        ).all()
        owners.update(rows)
    # Only an identifier verified for exactly one platform user links.
    return owners.pop() if len(owners) == 1 else None


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
