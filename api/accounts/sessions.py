"""Portal accounts: password rules, new accounts, sign-in with throttling, sessions, and
the password asked again before a secret is shown (`reauthenticate`). A publisher's signup,
which also applies for an offerwall, is api/publishers/signup.py's.

Every function takes the session it works in; the portal's states call them and
never touch password hashes or session tokens themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

import sqlalchemy as sa
from email_validator import EmailNotValidError, validate_email
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from api import audit
from api.accounts import challenge, events, throttle
from api.accounts.throttle import IpThrottle
from api.core.crypto import SecretBox, hash_password, new_token, token_digest, verify_password
from api.core.db import new_session, write_session
from api.core.refusals import DomainError, SignedOut
from models import AccountTotp, PortalSession, Role, User
from models.schemas import email_problem
from models.types import utcnow

# A session ends after this long without use, and in any case this long after sign-in.
# The cookie that carries a browser's session token (set by portal/session_routes.py; the
# staff reporting endpoints of the API read it too).
SESSION_COOKIE = "questwall_session"
SESSION_IDLE = timedelta(hours=12)
SESSION_MAX = timedelta(days=7)
# Last-seen is written at most this often (a page view is not a write).
SESSION_TOUCH = timedelta(minutes=5)

PASSWORD_MIN = 10
PASSWORD_MAX = 128
COMMON_PASSWORDS = frozenset(
    {
        "password123",
        "1234567890",
        "qwertyuiop",
        "password1234",
        "iloveyou123",
        "letmein1234",
        "12345678910",
        "abcdefghij",
        "questwall123",
    }
)
ACCOUNT_DISABLED = (
    "This account is disabled. Ask Questwall staff to enable it again if you need it."
)


class AccountError(DomainError, ValueError):
    """A refused account operation; `field` names the form input it is about, if any."""


class LoginThrottled(AccountError):
    """Too many failed sign-ins for this address or IP; `retry_after` seconds to wait."""

    def __init__(self, retry_after: int):
        minutes = max(1, (retry_after + 59) // 60)
        super().__init__(
            f"Too many failed sign-ins. Try again in {minutes} minute{'s' * (minutes > 1)}."
        )
        self.retry_after = retry_after


@dataclass(frozen=True)
class SignedIn:
    """A right password: a session's `token`, or for an account with two-factor sign-in
    no token yet but a `challenge` to answer with a code (api/accounts/totp.py)."""

    user_id: str
    role: str
    token: str
    challenge: str = ""


@dataclass(frozen=True)
class Client:
    """Where a sign-in comes from."""

    ip: str | None
    user_agent: str | None = None
    country: str | None = None


def normalize_email(email: str) -> str:
    """The address as stored: validated syntax, lower-cased. Raises AccountError."""
    try:
        valid = validate_email(email.strip(), check_deliverability=False)
    except EmailNotValidError as exc:
        raise AccountError(email_problem(exc), "email") from None
    return valid.normalized.lower()


def password_problem(password: str, *, email: str = "") -> str | None:
    """Why a new password is refused, in words a user can act on; None if it is fine."""
    if len(password) < PASSWORD_MIN:
        return f"Use at least {PASSWORD_MIN} characters."
    if len(password) > PASSWORD_MAX:
        return f"Use at most {PASSWORD_MAX} characters."
    if len(set(password)) < 4:
        return "Use more than three different characters."
    if password.lower() in COMMON_PASSWORDS:
        return "This password is too common; choose another."
    local = email.split("@")[0].lower()
    if len(local) >= 4 and local in password.lower():
        return "Do not use your email address in the password."
    return None


def create_user(
    *,
    session: Session,
    email: str,
    password: str,
    role: Role,
    name: str = "",
    studio_id: str | None = None,
    offerwall_id: str | None = None,
    client: Client | None = None,
) -> User:
    """A new account. Designers belong to a studio, publishers to an offerwall. Recorded
    as `account.created` by the current actor (staff, a command), or for a signup
    (`client` given) by the new account itself from that client; call it last in the
    transaction."""
    problems = account_problems(session=session, email=email, password=password)
    if role == Role.DESIGNER and not studio_id:
        problems["studio"] = "A designer belongs to a studio."
    if problems:
        raise AccountError.several(problems)
    user = User(
        email=normalize_email(email),
        name=name.strip()[:200],
        password_hash=hash_password(password),
        role=role,
        studio_id=studio_id if role == Role.DESIGNER else None,
        offerwall_id=offerwall_id if role == Role.PUBLISHER else None,
    )
    session.add(user)
    session.flush()
    created = {
        "email": [None, user.email],
        "role": [None, str(user.role)],
        "studio_id": [None, user.studio_id],
        "offerwall_id": [None, user.offerwall_id],
    }
    created = {name: value for name, value in created.items() if value[1] is not None}
    actor = audit.current_actor()
    if client is not None:
        actor = events.actor_for(user, ip=client.ip, user_agent=client.user_agent)
    with audit.acting_as(actor):
        events.record(session, user, "account.created", created)
    return user


def account_problems(*, session: Session, email: str, password: str) -> dict[str, str]:
    """What is wrong with a new account's email and password, every input at once (a
    signup adds its own inputs' problems to these)."""
    problems: dict[str, str] = {}
    try:
        email = normalize_email(email)
    except AccountError as exc:
        problems["email"] = exc.message
    else:
        if session.exec(select(User.id).where(User.email == email)).first():
            problems["email"] = "An account with this email already exists."
    problem = password_problem(password, email=email)
    if problem:
        problems["password"] = problem
    return problems


def sign_in(
    *,
    engine: Engine,
    box: SecretBox,
    email: str,
    password: str,
    client_ip: str,
    ip_throttle: IpThrottle,
    user_agent: str = "",
    country: str | None = None,
) -> SignedIn:
    """Check the password and open a session (from `client_ip`, `user_agent` and the IP's
    `country`, which the account's Sessions page shows).

    Refused before the password is checked (LoginThrottled) when the client IP has too
    many failures, or when the address has (unless this IP signed in to it before: see
    api/accounts/throttle.py). The address's attempt is counted before the check, in its
    own transaction, so parallel attempts cannot overrun the limit; the Argon2 check runs
    outside any write transaction. Wrong password and unknown address answer alike. An
    account with two-factor sign-in gets no session yet, but a challenge for its code.

    The audit trail gets `account.signed_in`, or `account.sign_in_failed` with its reason
    (a wrong password, a disabled account) when the address has an account (an unknown
    address records nothing, nor does a throttled attempt), by the account itself from this
    client; what was typed as the password is never recorded."""
    now = utcnow()
    address = email.strip().lower()
    key = box.digest(address)
    origin = box.digest(f"{address}\n{client_ip}")
    wait = ip_throttle.retry_after(client_ip)
    if wait is not None:
        raise LoginThrottled(wait)
    with write_session(engine) as session:
        known = throttle.is_known_origin(session, key, origin, now)
        wait = throttle.claim_attempt(session, key, now)
        found = session.execute(
            sa.select(
                col(User.id),
                col(User.role),
                col(User.password_hash),
                col(User.disabled_at),
                col(User.studio_id),
                col(User.offerwall_id),
                sa.exists().where(col(AccountTotp.user_id) == col(User.id)),
            ).where(col(User.email) == address)
        ).first()
    user = None
    if found is not None:
        user = User(
            id=found[0],
            email=address,
            role=found[1],
            password_hash="",
            studio_id=found[4],
            offerwall_id=found[5],
        )
    client = Client(client_ip, user_agent[:512] or None, country)
    if wait is not None and not known:
        # Not recorded: the throttle counts these, and they are as many as anyone sends.
        raise LoginThrottled(wait)
    # Verify against a dummy hash when there is no such user: the same work either way.
    right = verify_password(password, found[2] if found else _dummy_hash())
    if found is None or user is None or not right:
        ip_throttle.failed(client_ip)
        if user is not None:
            _failed(engine, user, client, "wrong_password")
        raise AccountError("Wrong email or password.")
    # Said only to whoever knows the password, so it tells a guesser nothing.
    if found[3] is not None:
        _failed(engine, user, client, "disabled")
        raise AccountError(ACCOUNT_DISABLED)
    if found[6]:
        # The address's count is cleared when the code is right, not before.
        return SignedIn(found[0], found[1], "", challenge.issue(box, found[0], now))
    return SignedIn(found[0], found[1], _open_session(engine, user, key, origin, client, now))


def _failed(engine: Engine, user: User, client: Client, reason: str) -> None:
    with (
        audit.acting_as(events.actor_for(user, ip=client.ip, user_agent=client.user_agent)),
        write_session(engine) as session,
    ):
        events.record(session, user, "account.sign_in_failed", {"reason": [None, reason]})


def _open_session(
    engine: Engine, user: User, key: str, origin: str, client: Client, now: datetime
) -> str:
    """After a right password: clear the address's failures, remember the origin, and
    store a new session (its password entered now); returns its token."""
    token = new_token("qw_s_")
    opened = PortalSession(
        token_digest=token_digest(token),
        user_id=user.id,
        created_at=now,
        last_seen_at=now,
        ip=(client.ip or None) and client.ip[:45],
        user_agent=client.user_agent,
        country=client.country,
        password_confirmed_at=now,
    )
    actor = events.actor_for(user, ip=client.ip, user_agent=client.user_agent)
    with audit.acting_as(actor), write_session(engine) as session:
        throttle.forget_failures(session, key)
        throttle.remember_origin(session, key, origin, now)
        session.execute(sa.update(User).where(col(User.id) == user.id).values(last_login_at=now))
        session.add(opened)
        session.flush()
        changes = {"session_id": [None, opened.id], "ip": [None, opened.ip]}
        if client.country:
            changes["country"] = [None, client.country]
        events.record(session, user, "account.signed_in", changes)
    return token


def user_for_token(*, engine: Engine, token: str) -> User | None:
    """The account a browser's session token belongs to, if the session is still open.
    Marks the session as used (a short write, at most every few minutes)."""
    found = session_for_token(engine=engine, token=token)
    return found[1] if found else None


def session_for_token(*, engine: Engine, token: str) -> tuple[PortalSession, User] | None:
    """`user_for_token`, with the session itself."""
    if not token:
        return None
    with new_session(engine) as session:
        found = session.exec(
            select(PortalSession, User)
            .join(User, col(User.id) == col(PortalSession.user_id))
            .where(
                col(PortalSession.token_digest) == token_digest(token),
                col(User.disabled_at).is_(None),
            )
        ).first()
    if found is None:
        return None
    portal_session, user = found
    now = utcnow()
    if session_expired(portal_session, now):
        return None
    if now - portal_session.last_seen_at > SESSION_TOUCH:
        with write_session(engine) as session:
            session.execute(
                sa.update(PortalSession)
                .where(col(PortalSession.id) == portal_session.id)
                .values(last_seen_at=now)
            )
    return portal_session, user


def session_expired(portal_session: PortalSession, now: datetime) -> bool:
    return (
        now - portal_session.last_seen_at > SESSION_IDLE
        or now - portal_session.created_at > SESSION_MAX
    )


def sign_out(
    *, engine: Engine, token: str, ip: str | None = None, user_agent: str | None = None
) -> None:
    """End the session of `token`: `account.signed_out`, by the account from this client."""
    if not token:
        return
    with write_session(engine) as session:
        found = session.exec(
            select(PortalSession, User)
            .join(User, col(User.id) == col(PortalSession.user_id))
            .where(col(PortalSession.token_digest) == token_digest(token))
        ).first()
        if found is None:
            return
        ended, user = found
        session.execute(sa.delete(PortalSession).where(col(PortalSession.id) == ended.id))
        with audit.acting_as(events.actor_for(user, ip=ip, user_agent=user_agent)):
            events.record(session, user, "account.signed_out", {"session_id": [ended.id, None]})


def prune_sessions(*, session: Session) -> int:
    """Delete sessions past their lifetime, and sign-in counters and origins past theirs."""
    now = utcnow()
    sessions = session.execute(
        sa.delete(PortalSession).where(
            sa.or_(
                col(PortalSession.last_seen_at) < now - SESSION_IDLE,
                col(PortalSession.created_at) < now - SESSION_MAX,
            )
        )
    )
    return int(sessions.rowcount or 0) + throttle.prune(session, now)  # type: ignore[attr-defined]


def check_password(user: User, password: str) -> bool:
    """Whether the password is the account's (`reauthenticate`)."""
    return verify_password(password, user.password_hash)


def reauthenticate(*, session: Session, box: SecretBox, user_id: str, password: str) -> None:
    """Before a secret is shown (an API key or a signing secret, revealed or rotated): the
    account entered its password again.

    A wrong password counts against the sign-in limit of the account's address, and the
    password is refused while that limit holds, so a reveal is no way around it. The count
    is committed before the password is checked, so a refusal cannot roll it back. Raises
    SignedOut (no such account), LoginThrottled or AccountError (field "password")."""
    user = session.get(User, user_id)
    if user is None:
        raise SignedOut()
    key = box.digest(user.email)
    now = utcnow()
    wait = throttle.claim_attempt(session, key, now)
    session.commit()
    if wait is not None:
        raise LoginThrottled(wait)
    if not check_password(user, password):
        raise AccountError("Wrong password.", "password")
    throttle.forget_failures(session, key)


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return hash_password("not a real password: equalises sign-in timing")
