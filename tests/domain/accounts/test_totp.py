"""Two-factor sign-in (api/accounts/totp.py): enrolment confirmed by a first code, a code
after the password, a code accepted once, wrong codes throttled like passwords, single-use
recovery codes, their regeneration and turning off behind the password, the command's
reset, the master key rotation; every change an audit event with no secret or code."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyotp
import pytest
import sqlalchemy as sa
from sqlmodel import select

from api.accounts import (
    Account,
    ChallengeEnded,
    CodeRefused,
    IpThrottle,
    LoginThrottled,
    PasswordRequired,
    account_for,
    challenge,
    totp,
)
from api.accounts import sessions as accounts
from api.accounts.sessions import AccountError
from api.accounts.throttle import MAX_FAILURES
from api.cli.server import rotate_master_key as rotate_secrets
from api.core.crypto import SecretBox, open_totp_secret
from api.core.db import new_session, write_session
from models import AccountTotp, AuditEvent, RecoveryCode, User
from tests.conftest import MASTER_KEY
from tests.factories import PASSWORD, make_user

IP = "203.0.113.7"
EMAIL = "owner@example.com"
# The start of a 30-second step: no test runs across a step's end.
MOMENT = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
_event = AuditEvent.__table__


@pytest.fixture
def at_step(clock):
    clock.set(MOMENT)
    return MOMENT


def _user(engine, email: str = EMAIL) -> User:
    with new_session(engine) as session:
        return session.exec(select(User).where(User.email == email)).one()


def _signed(engine, box, email: str = EMAIL) -> Account:
    signed = accounts.sign_in(
        engine=engine, box=box, email=email, password=PASSWORD, client_ip=IP,
        ip_throttle=IpThrottle(),
    )  # fmt: skip
    assert signed.token, "signed in with the password alone"
    account = account_for(engine=engine, token=signed.token)
    assert account is not None
    return account


def _enrol(engine, box, account: Account, now: datetime) -> tuple[str, list[str]]:
    """Enrol the account; its secret and its recovery codes."""
    user = _user(engine, account.email)
    started = totp.begin_enrolment(box=box, user=user)
    with write_session(engine) as session:
        codes = totp.confirm_enrolment(
            session=session,
            box=box,
            account=account,
            sealed=started.sealed,
            code=pyotp.TOTP(started.secret).at(now),
            now=now,
        )
    return started.secret, codes


def _password_step(engine, box, throttle=None) -> str:
    signed = accounts.sign_in(
        engine=engine, box=box, email=EMAIL, password=PASSWORD, client_ip=IP,
        ip_throttle=throttle or IpThrottle(),
    )  # fmt: skip
    assert signed.token == "" and signed.challenge
    return signed.challenge


def _code_step(engine, box, challenge_token: str, code: str, throttle=None):
    return totp.sign_in_with_code(
        engine=engine, box=box, challenge_token=challenge_token, code=code, client_ip=IP,
        ip_throttle=throttle or IpThrottle(),
    )  # fmt: skip


def _events(engine) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(_event).order_by(_event.c.id)).mappings().all()
    return [dict(row) for row in rows]


def _actions(engine) -> list[str]:
    return [e["action"] for e in _events(engine)]


def test_enrolment_is_confirmed_by_a_first_code_and_stored_sealed(engine, box, at_step):
    make_user(engine)
    account = _signed(engine, box)
    user = _user(engine)
    started = totp.begin_enrolment(box=box, user=user)
    assert started.qr_svg.startswith("<svg") and "<script" not in started.qr_svg
    assert started.uri.startswith("otpauth://totp/Questwall:owner%40example.com?secret=")
    with write_session(engine) as session:
        with pytest.raises(CodeRefused):
            totp.confirm_enrolment(
                session=session, box=box, account=account, sealed=started.sealed, code="000000"
            )
        assert not totp.enrolled(session, user.id)  # nothing stored until a right code
    _, codes = _enrol(engine, box, account, at_step)
    assert len(codes) == len(set(codes)) == 10
    with new_session(engine) as session:
        stored = session.get(AccountTotp, user.id)
        assert stored is not None and started.secret not in stored.secret_sealed
        hashes = session.exec(select(RecoveryCode.code_hash)).all()
    assert len(hashes) == 10 and not any(c.replace("-", "") in "".join(hashes) for c in codes)
    with write_session(engine) as session, pytest.raises(AccountError, match="already on"):
        totp.confirm_enrolment(
            session=session, box=box, account=account, sealed=started.sealed, code="123456"
        )
    enrolled = [e for e in _events(engine) if e["action"] == "account.mfa_enrolled"]
    assert len(enrolled) == 1 and enrolled[0]["target_id"] == user.id


def test_a_secret_sealed_for_another_account_does_not_enrol(engine, box, at_step):
    make_user(engine)
    make_user(engine, "other@example.com")
    account = _signed(engine, box)
    theirs = totp.begin_enrolment(box=box, user=_user(engine, "other@example.com"))
    with write_session(engine) as session, pytest.raises(AccountError, match="set-up again"):
        totp.confirm_enrolment(
            session=session, box=box, account=account, sealed=theirs.sealed,
            code=pyotp.TOTP(theirs.secret).at(at_step),
        )  # fmt: skip


def test_sign_in_asks_for_a_code_and_accepts_it_once(engine, box, at_step):
    make_user(engine)
    secret, _ = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    pending = _password_step(engine, box)
    code = pyotp.TOTP(secret).at(at_step)
    signed = _code_step(engine, box, pending, code)
    assert signed.token and account_for(engine=engine, token=signed.token) is not None
    # The same code again (a replay within its window) is refused, and so is an older one.
    with pytest.raises(CodeRefused):
        _code_step(engine, box, _password_step(engine, box), code)
    with pytest.raises(CodeRefused):
        _code_step(engine, box, pending, pyotp.TOTP(secret).at(at_step - timedelta(seconds=30)))
    # The next step's code is fine.
    later = pyotp.TOTP(secret).at(at_step + timedelta(seconds=30))
    assert _code_step(engine, box, pending, later).token
    failed = [e for e in _events(engine) if e["action"] == "account.sign_in_failed"]
    assert [e["changes"]["reason"][1] for e in failed] == ["wrong_code"] * 2


def test_a_challenge_ends_and_cannot_be_forged(engine, box, clock, at_step):
    make_user(engine)
    secret, _ = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    pending = _password_step(engine, box)
    user = _user(engine)
    sealed = pending.split(".", 1)[1]
    flipped = sealed[:20] + ("A" if sealed[20] != "A" else "B") + sealed[21:]
    for forged in ("", "nonsense", f"{user.id}.abc", f"{user.id}.{flipped}", f"x.{sealed}"):
        with pytest.raises(ChallengeEnded):
            _code_step(engine, box, forged, "123456")
    other = SecretBox(["another master key"])
    with pytest.raises(ChallengeEnded):
        _code_step(engine, box, challenge.issue(other, user.id, at_step), "123456")
    later = at_step + challenge.LIFETIME + timedelta(seconds=1)
    clock.set(later)
    with pytest.raises(ChallengeEnded):
        _code_step(engine, box, pending, pyotp.TOTP(secret).at(later))


def test_wrong_codes_are_throttled_like_passwords(engine, box, at_step):
    make_user(engine)
    secret, _ = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    pending = _password_step(engine, box)  # the password step counts one attempt
    for _ in range(MAX_FAILURES - 1):
        with pytest.raises(CodeRefused):
            _code_step(engine, box, pending, "000000")
    with pytest.raises(LoginThrottled):
        _code_step(engine, box, pending, pyotp.TOTP(secret).at(at_step))
    # The client's IP counts its failures too.
    ip_throttle = IpThrottle()
    for _ in range(20):
        ip_throttle.failed(IP)
    with pytest.raises(LoginThrottled):
        _code_step(engine, box, pending, "000000", ip_throttle)


BAD_CODES = ("", "12345", "1234567", "abcdef", "x" * 5000, "12 34 5a", "🔑🔑🔑🔑🔑🔑", "\u0661" * 6)


def test_bad_input_is_a_refusal(engine, box, at_step):
    make_user(engine)
    secret, _ = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    for typed in BAD_CODES:
        assert totp._matching_step(secret, typed, at_step) is None
    pending = _password_step(engine, box)
    for typed in BAD_CODES[3:7]:  # within the address's limit
        with pytest.raises(CodeRefused):
            _code_step(engine, box, pending, typed)


def test_a_recovery_code_works_once(engine, box, at_step):
    make_user(engine)
    _, codes = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    assert _code_step(engine, box, _password_step(engine, box), codes[3].upper()).token
    with pytest.raises(CodeRefused):
        _code_step(engine, box, _password_step(engine, box), codes[3])
    # Typed without its dash, or with spaces, it is the same code.
    assert _code_step(engine, box, _password_step(engine, box), codes[4].replace("-", " ")).token
    with new_session(engine) as session:
        assert totp.recovery_codes_left(session, _user(engine).id) == 8
    used = [e for e in _events(engine) if e["action"] == "account.recovery_code_used"]
    assert [e["changes"]["recovery_codes"] for e in used] == [[10, 9], [9, 8]]


def test_regenerate_and_disable_ask_for_the_password(engine, box, clock, at_step):
    make_user(engine)
    account = _signed(engine, box)
    _, old = _enrol(engine, box, account, at_step)
    later = at_step + timedelta(minutes=11)  # the sign-in's password window has passed
    clock.set(later)
    with write_session(engine) as session, pytest.raises(PasswordRequired):
        totp.regenerate_recovery_codes(session=session, box=box, account=account)
    with write_session(engine) as session, pytest.raises(AccountError, match="Wrong password"):
        totp.regenerate_recovery_codes(
            session=session, box=box, account=account, password="not the password"
        )
    with write_session(engine) as session:
        new = totp.regenerate_recovery_codes(
            session=session, box=box, account=account, password=PASSWORD
        )
    assert len(new) == 10 and not set(new) & set(old)
    with pytest.raises(CodeRefused):  # the old codes are gone
        _code_step(engine, box, _password_step(engine, box), old[0])
    assert _code_step(engine, box, _password_step(engine, box), new[0]).token
    clock.set(later + timedelta(minutes=11))
    with write_session(engine) as session, pytest.raises(PasswordRequired):
        totp.disable(session=session, box=box, account=account)
    with write_session(engine) as session:
        totp.disable(session=session, box=box, account=account, password=PASSWORD)
    with new_session(engine) as session:
        assert not totp.enrolled(session, account.id)
        assert session.exec(select(RecoveryCode)).all() == []
    assert accounts.sign_in(
        engine=engine, box=box, email=EMAIL, password=PASSWORD, client_ip=IP,
        ip_throttle=IpThrottle(),
    ).token  # fmt: skip
    assert {"account.recovery_codes_regenerated", "account.mfa_disabled"} <= set(_actions(engine))


def test_reset_clears_every_factor(engine, box, at_step):
    make_user(engine)
    _enrol(engine, box, _signed(engine, box), at_step)
    with write_session(engine) as session:
        assert totp.reset(session=session, user=session.get(User, _user(engine).id))
    with write_session(engine) as session:
        assert not totp.reset(session=session, user=session.get(User, _user(engine).id))
    assert _actions(engine).count("account.mfa_reset") == 1
    assert accounts.sign_in(
        engine=engine, box=box, email=EMAIL, password=PASSWORD, client_ip=IP,
        ip_throttle=IpThrottle(),
    ).token  # fmt: skip


def test_rotate_secrets_reseals_the_totp_secret(engine, box, at_step):
    make_user(engine)
    secret, _ = _enrol(engine, box, _signed(engine, box), at_step - timedelta(seconds=60))
    rotating = SecretBox(["the next master key", MASTER_KEY])
    done = rotate_secrets(engine=engine, box=rotating)
    assert done.resealed == 1
    assert rotate_secrets(engine=engine, box=rotating).resealed == 0
    user_id = _user(engine).id
    with new_session(engine) as session:
        sealed = session.get(AccountTotp, user_id).secret_sealed
    only_new = SecretBox(["the next master key"])
    assert open_totp_secret(only_new, sealed, user_id=user_id) == secret
    pending = _password_step(engine, only_new)
    assert _code_step(engine, only_new, pending, pyotp.TOTP(secret).at(at_step)).token


def test_no_secret_or_code_in_any_audit_row(engine, box, at_step):
    make_user(engine)
    account = _signed(engine, box)
    secret, codes = _enrol(engine, box, account, at_step - timedelta(seconds=60))
    pending = _password_step(engine, box)
    typed = [pyotp.TOTP(secret).at(at_step), "000000", codes[0]]
    with pytest.raises(CodeRefused):
        _code_step(engine, box, pending, typed[1])
    _code_step(engine, box, pending, typed[0])
    _code_step(engine, box, _password_step(engine, box), typed[2])
    with write_session(engine) as session:
        again = totp.regenerate_recovery_codes(session=session, box=box, account=account)
    with write_session(engine) as session:
        totp.reset(session=session, user=session.get(User, account.id))
    rows = json.dumps(_events(engine), default=str)
    # ("000000" is left out: it is part of any timestamp at the top of a second.)
    for value in [secret, *codes, *again, typed[0], *(c.replace("-", "") for c in codes)]:
        assert value not in rows
    assert {
        "account.mfa_enrolled",
        "account.sign_in_failed",
        "account.recovery_code_used",
        "account.recovery_codes_regenerated",
        "account.mfa_reset",
    } <= set(_actions(engine))


@pytest.fixture
def questwall(db_url, tmp_path, monkeypatch):
    """`questwall …` in this process on this test's database (as in test_review.py)."""
    from click.testing import CliRunner

    from api.cli import main
    from tests.live import forget_process_settings as clear

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("SECRET_KEY", MASTER_KEY)
    monkeypatch.setenv("QUESTWALL_DATA_DIR", str(tmp_path / "data"))
    clear()
    yield lambda *args: CliRunner().invoke(main, list(args), catch_exceptions=False)
    clear()


def test_the_command_resets_an_accounts_factors(engine, box, at_step, questwall):
    make_user(engine)
    _enrol(engine, box, _signed(engine, box), at_step)
    done = questwall("user", "mfa-reset", "Owner@Example.com")
    assert done.exit_code == 0 and "is off" in done.output
    again = questwall("user", "mfa-reset", EMAIL)
    assert again.exit_code == 0 and "nothing changed" in again.output
    missing = questwall("user", "mfa-reset", "nobody@example.com")
    assert missing.exit_code == 1 and "No account uses nobody@example.com" in missing.output
    reset = [e for e in _events(engine) if e["action"] == "account.mfa_reset"]
    assert len(reset) == 1 and reset[0]["actor_kind"] == "cli"
    with new_session(engine) as session:
        assert not totp.enrolled(session, _user(engine).id)
