"""Who may do what in the portal (docs/contract.md#portal-access). Every portal event handler resolves the
signed-in account from its session token and asks here, on the server, before acting:
what the browser shows or hides is never the check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, col

from api.accounts.reauth import confirm_password
from api.accounts.sessions import session_for_token
from api.core.crypto import SecretBox
from api.core.db import new_session
from api.core.refusals import DomainError, SignedOut
from models import Game, Offerwall, OfferwallStatus, Role


class Forbidden(DomainError, PermissionError):
    """The account may not do this."""


class NotApproved(Forbidden):
    """A publisher whose offerwall is not approved (pending, rejected or suspended): their
    application page is all they may use. The portal sends them there."""

    def __init__(self) -> None:
        super().__init__("Your offerwall is not approved: see your application.")


@dataclass(frozen=True)
class Account:
    """The signed-in user as the portal needs it: no password hash, no token."""

    id: str
    email: str
    name: str
    role: str
    studio_id: str | None
    offerwall_id: str | None
    # A publisher's offerwall status, read with the account (None for other roles).
    offerwall_status: str | None = None
    # The browser's session (its id, not its token) and when its password was last entered.
    session_id: str = ""
    password_confirmed_at: datetime | None = None

    @property
    def limited(self) -> bool:
        """A publisher not (or no longer) approved: only their application is theirs."""
        return self.role == Role.PUBLISHER and self.offerwall_status != OfferwallStatus.APPROVED


def account_for(*, engine: Engine, token: str) -> Account | None:
    found = session_for_token(engine=engine, token=token)
    if found is None:
        return None
    portal_session, user = found
    status = None
    if user.role == Role.PUBLISHER and user.offerwall_id:
        with new_session(engine) as session:
            status = session.scalar(
                sa.select(col(Offerwall.status)).where(col(Offerwall.id) == user.offerwall_id)
            )
    return Account(
        user.id,
        user.email,
        user.name,
        user.role,
        user.studio_id,
        user.offerwall_id,
        status,
        portal_session.id,
        portal_session.password_confirmed_at,
    )


def require(account: Account | None, *roles: Role) -> Account:
    if account is None:
        raise SignedOut()
    if roles and account.role not in roles:
        raise Forbidden("Your account may not do this.")
    return account


def offerwall_for(
    *, session: Session, account: Account | None, requested: str = "", any_status: bool = False
) -> Offerwall:
    """The offerwall the account acts on: a publisher's own (whatever was requested), or
    for staff the requested one. Publishers asking for another offerwall are refused, and
    so is a publisher whose offerwall is not approved (`NotApproved`), unless `any_status`
    (their application page)."""
    account = require(account, Role.PUBLISHER, Role.STAFF)
    if account.role == Role.PUBLISHER:
        if requested and requested != account.offerwall_id:
            raise Forbidden("Your account may not do this.")
        offerwall = session.get(Offerwall, account.offerwall_id) if account.offerwall_id else None
        approved = offerwall is None or offerwall.status == OfferwallStatus.APPROVED
        if not (approved or any_status):
            raise NotApproved()
    else:
        offerwall = session.get(Offerwall, requested) if requested else None
    if offerwall is None:
        raise Forbidden("No such publisher.")
    return offerwall


def offerwall_after_password(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str = ""
) -> Offerwall:
    """`offerwall_for`, for an action that shows a secret (an API key or a signing secret,
    revealed or rotated): the account must also have entered its password again, now or
    within the last ten minutes of this session (`reauth.confirm_password`, throttled like
    the sign-in). Raises Forbidden, LoginThrottled or AccountError (field "password")."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    confirm_password(session=session, box=box, account=account, password=password)
    return offerwall


def game_after_password(
    *, session: Session, box: SecretBox, account: Account, password: str, game_id: str
) -> Game:
    """`game_for`, for an action that shows a secret of the game (a webhook endpoint's):
    the account must also have entered its password again, now or within the last ten
    minutes of this session (`reauth.confirm_password`, throttled like the sign-in).
    Raises Forbidden, LoginThrottled or AccountError (field "password")."""
    game = game_for(session=session, account=account, game_id=game_id)
    confirm_password(session=session, box=box, account=account, password=password)
    return game


def game_for(*, session: Session, account: Account | None, game_id: str) -> Game:
    """A game the account manages: staff any, a designer their studio's. The same answer
    for a game that does not exist and one of another studio."""
    account = require(account, Role.DESIGNER, Role.STAFF)
    game = session.get(Game, game_id) if game_id else None
    if game is None or (account.role == Role.DESIGNER and game.studio_id != account.studio_id):
        raise Forbidden("No such game.")
    return game
