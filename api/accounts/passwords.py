"""Changing a password: the reset link by mail (asked for on the sign-in page, or sent by
staff), the reset itself, a change from the account page, and ending every session.

A reset link carries a random token in its fragment (`/reset-password#token=…`), which
browsers send to no server, no log and no Referer; only its SHA-256 is stored. It works
once, for `RESET_LIFETIME`, and is compared in constant time. Asking for one answers the
same whether or not the address has an account.
"""

from __future__ import annotations

import hmac
from datetime import timedelta

import sqlalchemy as sa
from limits import RateLimitItemPerMinute
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from api import audit
from api.accounts import events, throttle
from api.accounts.access import Account
from api.accounts.sessions import (
    AccountError,
    Client,
    LoginThrottled,
    normalize_email,
    password_problem,
)
from api.accounts.throttle import IpThrottle
from api.core.crypto import SecretBox, hash_password, new_token, token_digest, verify_password
from api.core.db import write_session
from api.core.refusals import SignedOut
from api.mail import outbox as mail
from models import PasswordReset, PortalSession, User
from models.types import utcnow

RESET_LIFETIME = timedelta(hours=1)
# At most this many links per account within RESET_LIFETIME (more are silently not sent).
RESETS_PER_ACCOUNT = 3
# Requests per client IP in a moving 15-minute window, whatever the addresses.
RESET_IP_LIMIT = RateLimitItemPerMinute(10, 15)
RESET_PATH = "/reset-password"  # portal/routes.py RESET_PAGE (a unit test keeps them equal)
INVALID_LINK = (
    "This link no longer works: a reset link works once, for one hour. Ask for a new one."
)


class ResetThrottled(LoginThrottled):
    """Too many reset requests from this IP; `retry_after` seconds to wait."""

    def __init__(self, retry_after: int):
        super().__init__(retry_after)
        minutes = max(1, (retry_after + 59) // 60)
        self.args = (f"Too many requests. Try again in {minutes} minute{'s' * (minutes > 1)}.",)


def reset_throttle(redis_url: str = "", *, key_prefix: str) -> IpThrottle:
    """The per-IP limit of reset requests, shared like the sign-in's (Redis or memory)."""
    return IpThrottle(
        redis_url, key_prefix=key_prefix, scope="password-reset", limit=RESET_IP_LIMIT
    )


def forgot_password(
    *, engine: Engine, email: str, client_ip: str, ip_throttle: IpThrottle, user_agent: str = ""
) -> None:
    """Mail a reset link to the account of `email`, if there is one that is enabled and
    has not had `RESETS_PER_ACCOUNT` links lately. The caller answers the same in every
    case; only a malformed address (AccountError) or the IP limit (ResetThrottled) differ.
    A link sent is recorded (`account.password_reset_requested`) as asked by the account
    from this client."""
    address = normalize_email(email)
    wait = ip_throttle.retry_after(client_ip)
    if wait is not None:
        raise ResetThrottled(wait)
    ip_throttle.failed(client_ip)  # every request counts, sent or not
    with write_session(engine) as session:
        user = session.exec(select(User).where(User.email == address)).first()
        if user is not None and user.disabled_at is None:
            actor = events.actor_for(user, ip=client_ip, user_agent=user_agent or None)
            with audit.acting_as(actor):
                send_reset_link(session=session, user=user)


def send_reset_link(*, session: Session, user: User) -> bool:
    """Queue a reset mail for `user` (in the caller's transaction) and record
    `account.password_reset_requested` (last: call it last in the transaction); False when
    the account already had `RESETS_PER_ACCOUNT` links within the last hour, and nothing
    is sent."""
    now = utcnow()
    recent = session.execute(
        sa.select(sa.func.count()).where(
            col(PasswordReset.user_id) == user.id,
            col(PasswordReset.created_at) > now - RESET_LIFETIME,
        )
    ).scalar_one()
    if recent >= RESETS_PER_ACCOUNT:
        return False
    token = new_token("qw_r_")
    expires = now + RESET_LIFETIME
    session.add(
        PasswordReset(
            token_digest=token_digest(token), user_id=user.id, created_at=now, expires_at=expires
        )
    )
    link = f"{mail.portal_url(RESET_PATH)}#token={token}"
    mail.enqueue(
        session,
        to=user.email,
        subject="Set a new password for Questwall",
        body=(
            "Someone, hopefully you, asked to set a new password for your Questwall account "
            f"{user.email}.\n\nOpen this link to choose it (it works once, for one hour):\n"
            f"{link}\n\nIf you did not ask for it, ignore this message: your password stays "
            "as it is.\n"
        ),
        sensitive=True,
        expires_at=expires,
    )
    events.record(session, user, "account.password_reset_requested")
    return True


def reset_password(
    *,
    session: Session,
    box: SecretBox,
    token: str,
    password: str,
    confirm: str,
    client: Client | None = None,
) -> str:
    """Set a new password with a reset link's token; returns the account's email.

    The link is used up, every other link of the account too, and every session of the
    account ends (sign in again with the new password); recorded (`account.password_reset`,
    and `session.ended` for each) as done by the account from `client`. Raises
    AccountError: an unknown, used or expired link (no field), a password the rules refuse
    ("password"), or a repetition that differs ("confirm")."""
    digest = token_digest(token.strip())
    found = session.exec(select(PasswordReset).where(PasswordReset.token_digest == digest)).first()
    # The look-up is by hash; the comparison is repeated in constant time all the same.
    valid = found is not None and hmac.compare_digest(found.token_digest, digest)
    if found is None or not valid or found.expires_at <= utcnow():
        raise AccountError(INVALID_LINK)
    user = session.get(User, found.user_id)
    if user is None or user.disabled_at is not None:
        raise AccountError(INVALID_LINK)
    _set_password(session, box, user, password, confirm)
    ended = end_sessions(session=session, user_id=user.id)
    client = client or Client(None)
    with audit.acting_as(events.actor_for(user, ip=client.ip, user_agent=client.user_agent)):
        events.record(session, user, "account.password_reset", ended=ended)
    return user.email


def change_password(
    *,
    session: Session,
    box: SecretBox,
    account: Account,
    current: str,
    password: str,
    confirm: str,
    keep_token: str,
) -> None:
    """The account page's change: the current password again (a wrong one counts against
    the sign-in limit of the address, as the API key reveal does), then the new one. Every
    other session of the account ends; the one of `keep_token` stays signed in. Recorded:
    `account.password_changed` (with neither password), and `session.ended` for each."""
    user = session.get(User, account.id)
    if user is None or user.disabled_at is not None:
        raise SignedOut()
    key = box.digest(user.email)
    wait = throttle.claim_attempt(session, key, utcnow())
    session.commit()  # the attempt counts even when what follows refuses
    if wait is not None:
        raise LoginThrottled(wait)
    if not verify_password(current, user.password_hash):
        raise AccountError("This is not your current password.", "current")
    if current == password:
        raise AccountError("Choose a password other than the current one.", "password")
    _set_password(session, box, user, password, confirm)
    ended = end_sessions(session=session, user_id=user.id, keep_token=keep_token)
    events.record(session, user, "account.password_changed", ended=ended)


def _set_password(
    session: Session, box: SecretBox, user: User, password: str, confirm: str
) -> None:
    """The sign-up's password rules, then the new hash; the account's reset links end and
    its address's sign-in failures are forgotten."""
    problem = password_problem(password, email=user.email)
    if problem:
        raise AccountError(problem, "password")
    if password != confirm:
        raise AccountError("The two passwords differ.", "confirm")
    user.password_hash = hash_password(password)
    session.add(user)
    discard_links(session=session, user_id=user.id)
    throttle.forget_failures(session, box.digest(user.email))


def end_sessions(
    *, session: Session, user_id: str, keep_token: str = "", keep_id: str = ""
) -> list[PortalSession]:
    """End every session of an account (but the one of `keep_token`, or of id `keep_id`);
    returns those that ended, for the caller to record (`events.record(..., ended=...)`)."""
    query = select(PortalSession).where(col(PortalSession.user_id) == user_id)
    if keep_token:
        query = query.where(col(PortalSession.token_digest) != token_digest(keep_token))
    if keep_id:
        query = query.where(col(PortalSession.id) != keep_id)
    ended = list(session.exec(query.order_by(col(PortalSession.created_at))).all())
    if ended:
        session.execute(
            sa.delete(PortalSession).where(col(PortalSession.id).in_([s.id for s in ended]))
        )
    return ended


def discard_links(*, session: Session, user_id: str) -> None:
    """Every reset link of the account stops working."""
    session.execute(sa.delete(PasswordReset).where(col(PasswordReset.user_id) == user_id))


def sign_out_everywhere(*, session: Session, account: Account) -> int:
    """ "Sign out everywhere": every session of the account ends, this one included (a
    `session.ended` event each)."""
    user = session.get(User, account.id)
    if user is None:
        raise SignedOut()
    ended = end_sessions(session=session, user_id=account.id)
    events.record(session, user, "", ended=ended, how="signed_out_everywhere")
    return len(ended)


def prune(session: Session) -> int:
    """Delete reset links past their hour."""
    removed = session.execute(
        sa.delete(PasswordReset).where(col(PasswordReset.expires_at) <= utcnow())
    )
    return int(removed.rowcount or 0)  # type: ignore[attr-defined]
