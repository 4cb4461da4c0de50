"""Two-factor sign-in (docs/operations.md#two-factor-sign-in): a code from an
authenticator app (TOTP, RFC 6238, with `pyotp`) after the password, or one of ten
single-use recovery codes instead.

- Enrolment: `begin_enrolment` makes a secret and its QR code and writes nothing (the
  portal keeps the sealed secret until it is confirmed); `confirm_enrolment` takes a
  first valid code, stores the secret sealed (crypto.seal_totp_secret) and hands back
  the ten recovery codes, shown once and stored Argon2-hashed.
- Sign-in: `sign_in_with_code` takes the challenge that the password step issued
  (api/accounts/challenge.py) and a code. A code is accepted once: the account keeps the
  time step of the last code accepted, and a code of that step or an earlier one is
  refused (RFC 6238 section 5.2). Attempts count against the address's sign-in limit and
  the client IP's, as passwords do (api/accounts/throttle.py).
- `regenerate_recovery_codes` and `disable` ask for the password (reauth.confirm_password);
  `reset` (`questwall user mfa-reset`) clears every factor of an account.

Each change is an audit event on the account; a secret or a code is never a value.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

import pyotp
import segno
import sqlalchemy as sa
from pyotp.utils import strings_equal
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from api import audit
from api.accounts import challenge, events, throttle
from api.accounts.reauth import Signed, confirm_password
from api.accounts.sessions import (
    ACCOUNT_DISABLED,
    AccountError,
    Client,
    LoginThrottled,
    SignedIn,
    _failed,
    _open_session,
)
from api.accounts.throttle import IpThrottle
from api.core.crypto import (
    SecretBox,
    hash_password,
    open_totp_secret,
    seal_totp_secret,
    verify_password,
)
from api.core.db import write_session
from api.core.refusals import SignedOut
from models import AccountTotp, RecoveryCode, User
from models.types import utcnow

ISSUER = "Questwall"
DIGITS = 6
STEP_SECONDS = 30
# A code of the step before or after the current one is accepted too (clocks drift).
VALID_WINDOW = 1
RECOVERY_CODES = 10
# Recovery codes: two groups of five from an alphabet without look-alikes (0/o, 1/l).
_RECOVERY_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"


class CodeRefused(AccountError):
    """A wrong, expired or replayed code (field "code")."""

    def __init__(
        self, message: str = "That code is not right, or was used already. Enter a new one."
    ) -> None:
        super().__init__(message, "code")


class ChallengeEnded(AccountError):
    """The password step's challenge is missing, not ours, or past its lifetime."""

    def __init__(self) -> None:
        super().__init__("This sign-in took too long. Enter your password again.")


log = logging.getLogger("questwall.accounts")


@dataclass(frozen=True)
class Enrolment:
    """What the account page shows while enrolling: the secret in text, the QR code (SVG
    markup to place inline, made here: no request leaves the server, and the page's
    Content-Security-Policy needs no data: images) and the sealed secret that
    `confirm_enrolment` takes back."""

    secret: str
    sealed: str
    uri: str
    qr_svg: str


def enrolled(session: Session, user_id: str) -> bool:
    return session.get(AccountTotp, user_id) is not None


def recovery_codes_left(session: Session, user_id: str) -> int:
    found = session.execute(
        sa.select(sa.func.count()).where(
            col(RecoveryCode.user_id) == user_id, col(RecoveryCode.used_at).is_(None)
        )
    ).scalar_one()
    return int(found)


def begin_enrolment(*, box: SecretBox, user: User) -> Enrolment:
    """A new secret for `user` (nothing is stored until a first code confirms it)."""
    secret = pyotp.random_base32()
    uri = pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS).provisioning_uri(
        name=user.email, issuer_name=ISSUER
    )
    qr = segno.make(uri, error="m").svg_inline(scale=5, border=2, omitsize=False)
    return Enrolment(secret, seal_totp_secret(box, secret, user_id=user.id), uri, qr)


def start_enrolment(*, session: Session, box: SecretBox, account: Signed) -> Enrolment:
    """`begin_enrolment` for the signed-in account."""
    return begin_enrolment(box=box, user=_user(session, account))


def confirm_enrolment(
    *,
    session: Session,
    box: SecretBox,
    account: Signed,
    sealed: str,
    code: str,
    now: datetime | None = None,
) -> list[str]:
    """Store the secret once `code` is valid for it; returns the ten recovery codes (shown
    once). Raises AccountError (already enrolled, or a secret not sealed for this account)
    or CodeRefused. Recorded as `account.mfa_enrolled`."""
    now = now or utcnow()
    user = _user(session, account)
    if enrolled(session, user.id):
        raise AccountError("Two-factor sign-in is already on for this account.")
    try:
        secret = open_totp_secret(box, sealed, user_id=user.id)
    except ValueError:
        raise AccountError("Start the set-up again.") from None
    step = _matching_step(secret, code, now)
    if step is None:
        raise CodeRefused()
    session.add(AccountTotp(user_id=user.id, secret_sealed=sealed, enrolled_at=now, last_step=step))
    codes = _new_recovery_codes(session, user.id, now)
    session.flush()
    events.record(
        session,
        user,
        "account.mfa_enrolled",
        {"mfa": [None, "totp"], "recovery_codes": [None, len(codes)]},
    )
    return codes


def regenerate_recovery_codes(
    *,
    session: Session,
    box: SecretBox,
    account: Signed,
    password: str = "",
    now: datetime | None = None,
) -> list[str]:
    """Ten new recovery codes in place of the old ones, behind the password (raises
    PasswordRequired, AccountError). Recorded as `account.recovery_codes_regenerated`."""
    now = now or utcnow()
    confirm_password(session=session, box=box, account=account, password=password, now=now)
    user = _user(session, account)
    if not enrolled(session, user.id):
        raise AccountError("Two-factor sign-in is off for this account.")
    left = recovery_codes_left(session, user.id)
    session.execute(sa.delete(RecoveryCode).where(col(RecoveryCode.user_id) == user.id))
    codes = _new_recovery_codes(session, user.id, now)
    session.flush()
    events.record(
        session,
        user,
        "account.recovery_codes_regenerated",
        {"recovery_codes": [left, len(codes)]},
    )
    return codes


def disable(
    *,
    session: Session,
    box: SecretBox,
    account: Signed,
    password: str = "",
    now: datetime | None = None,
) -> None:
    """Turn two-factor sign-in off, behind the password. Recorded as `account.mfa_disabled`."""
    confirm_password(session=session, box=box, account=account, password=password, now=now)
    user = _user(session, account)
    if not _clear(session, user.id):
        raise AccountError("Two-factor sign-in is already off for this account.")
    events.record(session, user, "account.mfa_disabled", {"mfa": ["totp", None]})


def reset(*, session: Session, user: User) -> bool:
    """Clear every factor of `user` (`questwall user mfa-reset`): its next sign-in asks for
    the password only. Whether there was any. Recorded as `account.mfa_reset` by the
    current actor."""
    if not _clear(session, user.id):
        return False
    events.record(session, user, "account.mfa_reset", {"mfa": ["totp", None]})
    return True


def _user(session: Session, account: Signed) -> User:
    user = session.get(User, account.id)
    if user is None:
        raise SignedOut()
    return user


def _clear(session: Session, user_id: str) -> bool:
    had = session.execute(sa.delete(AccountTotp).where(col(AccountTotp.user_id) == user_id))
    session.execute(sa.delete(RecoveryCode).where(col(RecoveryCode.user_id) == user_id))
    return bool(had.rowcount)  # type: ignore[attr-defined]


def sign_in_with_code(
    *,
    engine: Engine,
    box: SecretBox,
    challenge_token: str,
    code: str,
    client_ip: str,
    ip_throttle: IpThrottle,
    user_agent: str = "",
    country: str | None = None,
) -> SignedIn:
    """The second step: a code from the app (or a recovery code) for the account the
    challenge names; opens the session. Raises ChallengeEnded, LoginThrottled or
    CodeRefused (recorded as `account.sign_in_failed`, reason `wrong_code`)."""
    now = utcnow()
    user_id = challenge.account_of(box, challenge_token, now)
    if user_id is None:
        raise ChallengeEnded()
    wait = ip_throttle.retry_after(client_ip)
    if wait is not None:
        raise LoginThrottled(wait)
    with write_session(engine) as session:
        user = session.get(User, user_id)
        factor = session.get(AccountTotp, user_id)
        if user is None or factor is None:
            raise ChallengeEnded()
        session.expunge(user)
        key = box.digest(user.email)
        wait = throttle.claim_attempt(session, key, now)
        sealed = factor.secret_sealed
    client = Client(client_ip, user_agent[:512] or None, country)
    if wait is not None:
        raise LoginThrottled(wait)
    if user.disabled_at is not None:
        raise AccountError(ACCOUNT_DISABLED)
    typed = _normalized(code)
    if len(typed) == DIGITS and typed.isascii() and typed.isdigit():
        step = _matching_step(open_totp_secret(box, sealed, user_id=user_id), typed, now)
        right = step is not None and _accept_step(engine, user_id, step)
    else:
        right = _use_recovery_code(engine, user, typed, client, now)
    if not right:
        ip_throttle.failed(client_ip)
        _failed(engine, user, client, "wrong_code")
        log.info("second factor refused for account %s", user.id)
        raise CodeRefused()
    origin = box.digest(f"{user.email}\n{client_ip}")
    return SignedIn(user.id, user.role, _open_session(engine, user, key, origin, client, now))


def _normalized(code: str) -> str:
    return "".join(code.split()).replace("-", "").lower()[:64]


def _matching_step(secret: str, code: str, now: datetime) -> int | None:
    """The time step (of the current one and its neighbours) whose code `code` is; every
    step is compared, in constant time, whether an earlier one matched or not."""
    code = _normalized(code)
    if len(code) != DIGITS or not (code.isascii() and code.isdigit()):
        return None
    totp = pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS)
    current = totp.timecode(now)
    found = None
    for step in range(current - VALID_WINDOW, current + VALID_WINDOW + 1):
        if strings_equal(code, totp.generate_otp(step)) and found is None:
            found = step
    return found


def _accept_step(engine: Engine, user_id: str, step: int) -> bool:
    """Record `step` as the last one accepted, unless it or a later one already was (one
    conditional UPDATE, so two requests with the same code cannot both pass)."""
    with write_session(engine) as session:
        done = session.execute(
            sa.update(AccountTotp)
            .where(
                col(AccountTotp.user_id) == user_id,
                sa.or_(col(AccountTotp.last_step).is_(None), col(AccountTotp.last_step) < step),
            )
            .values(last_step=step)
        )
    return bool(done.rowcount)  # type: ignore[attr-defined]


def _use_recovery_code(
    engine: Engine, user: User, typed: str, client: Client, now: datetime
) -> bool:
    """Use one unused recovery code that `typed` is (each is Argon2-hashed, so each is
    checked, outside any write transaction); `account.recovery_code_used`."""
    if len(typed) != 10 or any(c not in _RECOVERY_ALPHABET for c in typed):
        return False
    with write_session(engine) as session:
        unused = session.exec(
            select(RecoveryCode.id, RecoveryCode.code_hash).where(
                col(RecoveryCode.user_id) == user.id, col(RecoveryCode.used_at).is_(None)
            )
        ).all()
    matched = [row_id for row_id, hashed in unused if verify_password(typed, hashed)]
    if not matched:
        return False
    actor = events.actor_for(user, ip=client.ip, user_agent=client.user_agent)
    with audit.acting_as(actor), write_session(engine) as session:
        used = session.execute(
            sa.update(RecoveryCode)
            .where(col(RecoveryCode.id) == matched[0], col(RecoveryCode.used_at).is_(None))
            .values(used_at=now)
        )
        if not used.rowcount:  # type: ignore[attr-defined]
            return False  # another request used it first
        left = recovery_codes_left(session, user.id)
        events.record(
            session, user, "account.recovery_code_used", {"recovery_codes": [left + 1, left]}
        )
    return True


def _new_recovery_codes(session: Session, user_id: str, now: datetime) -> list[str]:
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(10))
        session.add(RecoveryCode(user_id=user_id, code_hash=hash_password(raw), created_at=now))
        codes.append(f"{raw[:5]}-{raw[5:]}")
    return codes
