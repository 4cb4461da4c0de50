"""Staff manage accounts: list and search them, disable and enable, send a reset link,
move a designer to another studio. Every function checks that the acting account is
staff, whoever calls it; staff never see or set anyone's password."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import events, passwords
from api.accounts.access import Account, Forbidden, require
from api.accounts.sessions import AccountError
from api.core.paging import Window, paged, searched
from models import Offerwall, Role, Studio, User
from models.types import utcnow

ROLES = [Role.STAFF, Role.DESIGNER, Role.PUBLISHER]


@dataclass(frozen=True)
class UserRow:
    id: str
    email: str
    name: str
    role: str
    studio_id: str
    # The designer's studio, or the publisher's company.
    belongs_to: str
    status: str  # "active" or "disabled"
    created_at: datetime
    last_login_at: datetime | None  # None: never signed in


@dataclass(frozen=True)
class StudioChoice:
    id: str
    name: str


def list_users(
    *, session: Session, account: Account, role: str = "", search: str = "", page: int = 1
) -> Window[UserRow]:
    """Every account, newest first, by role and a search over email, name and studio."""
    require(account, Role.STAFF)
    query = (
        sa.select(User, col(Studio.name), col(Offerwall.name))
        .outerjoin(Studio, col(Studio.id) == col(User.studio_id))
        .outerjoin(Offerwall, col(Offerwall.id) == col(User.offerwall_id))
    )
    if role:
        query = query.where(col(User.role) == role)
    query = searched(
        query,
        search,
        col(User.email),
        col(User.name),
        col(Studio.name),
        col(Offerwall.name),
    )
    rows, total, page, pages = paged(
        session, query.order_by(col(User.created_at).desc(), col(User.id)), page
    )
    return Window([_row(u, studio, company) for u, studio, company in rows], total, page, pages)


def _row(user: User, studio: str | None, company: str | None) -> UserRow:
    return UserRow(
        id=user.id,
        email=user.email,
        name=user.name,
        role=user.role,
        studio_id=user.studio_id or "",
        belongs_to=studio or company or "",
        status="disabled" if user.disabled_at else "active",
        created_at=user.created_at,
        last_login_at=user.last_login_at,
    )


def studio_choices(*, session: Session, account: Account) -> list[StudioChoice]:
    require(account, Role.STAFF)
    found = session.execute(sa.select(col(Studio.id), col(Studio.name)).order_by(Studio.name))
    return [StudioChoice(id, name) for id, name in found.all()]


def _user(session: Session, account: Account, user_id: str) -> User:
    require(account, Role.STAFF)
    user = session.get(User, user_id) if user_id else None
    if user is None:
        raise Forbidden("No such account.")
    return user


def disable(*, session: Session, account: Account, user_id: str) -> User:
    """Disable an account: its sessions and reset links end, and sign-in is refused with a
    message saying so. Staff cannot disable their own account. Recorded:
    `account.disabled` (when it was enabled) and `session.ended` for each session."""
    user = _user(session, account, user_id)
    if user.id == account.id:
        raise AccountError("You cannot disable your own account.")
    action = ""
    if user.disabled_at is None:
        user.disabled_at = utcnow()
        session.add(user)
        action = "account.disabled"
    ended = passwords.end_sessions(session=session, user_id=user.id)
    passwords.discard_links(session=session, user_id=user.id)
    status = {"status": ["active", "disabled"]}
    events.record(session, user, action, status, ended=ended, how="account.disabled")
    return user


def enable(*, session: Session, account: Account, user_id: str) -> User:
    """Enable a disabled account again: its password signs in as before
    (`account.enabled`, when it was disabled)."""
    user = _user(session, account, user_id)
    if user.disabled_at is not None:
        user.disabled_at = None
        session.add(user)
        events.record(session, user, "account.enabled", {"status": ["disabled", "active"]})
    return user


def send_reset(*, session: Session, account: Account, user_id: str) -> User:
    """Mail the account a reset link (the same as "Forgot your password?")."""
    user = _user(session, account, user_id)
    if user.disabled_at is not None:
        raise AccountError("This account is disabled: enable it first.")
    if not passwords.send_reset_link(session=session, user=user):
        raise AccountError("This account got several reset links within the hour: wait a while.")
    return user


def move_to_studio(*, session: Session, account: Account, user_id: str, studio_id: str) -> str:
    """Move a designer to another studio (`account.studio_changed`, scoped to the new
    studio); returns the studio's name."""
    user = _user(session, account, user_id)
    if user.role != Role.DESIGNER:
        raise AccountError("Only designers belong to a studio.")
    studio = session.get(Studio, studio_id) if studio_id else None
    if studio is None:
        raise AccountError("Choose a studio.", "studio")
    before = user.studio_id
    if before != studio.id:
        user.studio_id = studio.id
        session.add(user)
        events.record(session, user, "account.studio_changed", {"studio_id": [before, studio.id]})
    return studio.name


def end_all_sessions(*, session: Session, account: Account, user_id: str) -> User:
    """End every session of an account (`session.ended` for each); the caller gates it
    behind the password (`reauth.confirm_password`). Raises Forbidden."""
    user = _user(session, account, user_id)
    ended = passwords.end_sessions(session=session, user_id=user.id)
    events.record(session, user, "", ended=ended, how="ended_by_staff")
    return user
