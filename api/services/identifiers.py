"""Game users, their identifiers, and links to platform users (SERVICE.md 4, Identifiers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session, select

from api.core.sql import insert_ignore, upsert
from models import GameUser, GameUserIdentifier, PlatformUser, PlatformUserIdentifier
from models.schemas import IdentifierIn, normalize_identifier
from models.tables import game_user as _game_user
from models.tables import game_user_identifier as _identifier
from models.types import utcnow


@dataclass(frozen=True)
class ItemRejection:
    code: str
    message: str
    field: str | None = None


def apply_identifiers(
    *,
    session: Session,
    game_id: str,
    item: IdentifierIn,
    on_link: Callable[[str], object] | None = None,
) -> ItemRejection | None:
    """Apply one validated identifiers item; return why it was refused, or None.

    Omitted fields stay as they were, `null` removes, a value adds or replaces.
    `on_link(platform_user_id)` is called when the item links the user to a platform
    user it was not linked to before (so stored events can be evaluated then).
    """
    changes = item.provided()
    platform_user_id = changes.get("platformUserId")
    if platform_user_id is not None and session.get(PlatformUser, platform_user_id) is None:
        return ItemRejection(
            "unknown_platform_user", "platformUserId names no platform user", "platformUserId"
        )

    user = _find_user(session, game_id, item.userId)
    if user is None:
        if not any(v is not None for v in changes.values()):
            return ItemRejection(
                "identifier_required",
                "the first identifiers of a user need at least one non-null identifier "
                "besides userId",
            )
        user = _create_user(session, game_id, item.userId)

    now = utcnow()
    assert user.id is not None
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
    if link is not None and link != user.platform_user_id and on_link is not None:
        on_link(link)
    return None


def _find_user(session: Session, game_id: str, user_id: str) -> GameUser | None:
    return session.exec(
        select(GameUser).where(GameUser.game_id == game_id, GameUser.user_id == user_id)
    ).first()


def _create_user(session: Session, game_id: str, user_id: str) -> GameUser:
    # Parallel requests may create the same user: insert-or-ignore, then read the one row.
    now = utcnow()
    insert_ignore(
        session,
        _game_user,
        {"game_id": game_id, "user_id": user_id, "created_at": now, "updated_at": now},
        conflict=("game_id", "user_id"),
    )
    user = _find_user(session, game_id, user_id)
    assert user is not None
    return user


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
