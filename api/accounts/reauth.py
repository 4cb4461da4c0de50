"""The re-authentication window: a sensitive action (revealing or rotating a secret, a
payout rule, another account's access or sessions, an export of the audit trail) asks for
the password again, unless it was entered in the last `WINDOW` in this same session (the
browser's `portal_session.password_confirmed_at`, set at sign-in and each time it is
entered again). Another browser of the account has its own window.

To gate an action, in its transaction, before the change::

    from api.accounts import confirm_password
    confirm_password(session=session, box=box, account=account, password=password)

`password` is what the user typed ("" when the form asked for none): a typed password
is always checked (throttled like the sign-in) and refreshes the window; an empty one
passes within the window and raises `PasswordRequired` after it. The portal's
`AuthState._run_confirmed` and `reauth_dialog` (portal/components/reauth.py) do this and
ask for the password in a dialog, then do the action again. `now` is a parameter so tests
move the clock instead of waiting.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts.sessions import AccountError, reauthenticate
from api.core.crypto import SecretBox
from models import PortalSession
from models.types import utcnow


class Signed(Protocol):
    """The signed-in account (`access.Account`): its id and its browser's session id."""

    @property
    def id(self) -> str: ...

    @property
    def session_id(self) -> str: ...


WINDOW = timedelta(minutes=10)


class PasswordRequired(AccountError):
    """The action needs the password again: it was not entered in this session lately."""

    def __init__(self) -> None:
        super().__init__("Enter your password again to continue.", "password")


def password_fresh(confirmed_at: datetime | None, now: datetime | None = None) -> bool:
    """Whether a password entered at `confirmed_at` still opens the window at `now`."""
    if confirmed_at is None:
        return False
    elapsed = (now or utcnow()) - confirmed_at
    return timedelta(0) <= elapsed < WINDOW


def confirm_password(
    *,
    session: Session,
    box: SecretBox,
    account: Signed,
    password: str = "",
    now: datetime | None = None,
) -> None:
    """The gate (see the module's docstring). A typed `password` is checked
    (`sessions.reauthenticate`: LoginThrottled, or AccountError on field "password") and
    opens the window anew; none passes only within the window of the account's session,
    read from the database (never from what the browser says). Raises PasswordRequired."""
    now = now or utcnow()
    if password:
        reauthenticate(session=session, box=box, user_id=account.id, password=password)
        if account.session_id:
            session.execute(
                sa.update(PortalSession)
                .where(
                    col(PortalSession.id) == account.session_id,
                    col(PortalSession.user_id) == account.id,
                )
                .values(password_confirmed_at=now)
            )
        return
    confirmed = None
    if account.session_id:
        confirmed = session.execute(
            sa.select(col(PortalSession.password_confirmed_at)).where(
                col(PortalSession.id) == account.session_id,
                col(PortalSession.user_id) == account.id,
            )
        ).scalar_one_or_none()
    if not password_fresh(confirmed, now):
        raise PasswordRequired()
