"""Forgotten passwords (a single-use, hashed, one-hour link by mail), the account page's
change, and ending sessions."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from api.accounts import (
    Account,
    AccountError,
    IpThrottle,
    LoginThrottled,
    ResetThrottled,
    account_for,
    passwords,
)
from api.accounts import sessions as accounts
from api.core.crypto import token_digest
from api.core.db import new_session, write_session
from models import MailMessage, PasswordReset, PortalSession, Role, User
from models.types import utcnow
from tests.factories import PASSWORD, make_user

NEW = "a brand new passphrase"
IP = "203.0.113.7"


def forgot(engine, email="ada@example.com", *, ips: IpThrottle | None = None, ip=IP) -> None:
    passwords.forgot_password(
        engine=engine,
        email=email,
        client_ip=ip,
        ip_throttle=ips or passwords.reset_throttle(key_prefix="test"),
    )


def mails(engine) -> list[MailMessage]:
    with new_session(engine) as session:
        return list(session.exec(select(MailMessage).order_by(MailMessage.id)).all())


def token_in(message: MailMessage) -> str:
    [token] = re.findall(r"/reset-password#token=(\S+)", message.body)
    return token


def reset(engine, box, token: str, password: str = NEW, confirm: str | None = None) -> str:
    with write_session(engine) as session:
        return passwords.reset_password(
            session=session,
            box=box,
            token=token,
            password=password,
            confirm=password if confirm is None else confirm,
        )


def sign_in(engine, box, email="ada@example.com", password=NEW):
    return accounts.sign_in(
        engine=engine,
        box=box,
        email=email,
        password=password,
        client_ip=IP,
        ip_throttle=IpThrottle(),
    )


def test_a_reset_link_is_mailed_and_only_its_hash_is_stored(engine):
    make_user(engine, "ada@example.com")
    forgot(engine, " Ada@Example.com ")
    [message] = mails(engine)
    token = token_in(message)
    assert message.to_address == "ada@example.com"
    assert message.sensitive and message.expires_at is not None
    assert message.body.count("http://localhost:8000/reset-password#token=") == 1
    with new_session(engine) as session:
        [stored] = session.exec(select(PasswordReset)).all()
    assert stored.token_digest == token_digest(token) and token not in stored.token_digest
    assert stored.expires_at - stored.created_at == timedelta(hours=1)


def test_an_unknown_or_disabled_address_gets_no_mail_and_the_same_answer(engine):
    make_user(engine, "gone@example.com")
    with write_session(engine) as session:
        session.execute(sa.update(User).values(disabled_at=utcnow()))
    assert forgot(engine, "nobody@example.com") is None
    assert forgot(engine, "gone@example.com") is None
    assert mails(engine) == []


def test_the_link_sets_the_new_password_once_and_ends_every_session(engine, box):
    make_user(engine, "ada@example.com")
    before = sign_in(engine, box, password=PASSWORD)
    forgot(engine)
    token = token_in(mails(engine)[0])
    assert reset(engine, box, token) == "ada@example.com"
    assert account_for(engine=engine, token=before.token) is None  # signed out
    with pytest.raises(AccountError, match="Wrong email or password"):
        sign_in(engine, box, password=PASSWORD)
    assert sign_in(engine, box).role == Role.STAFF
    with pytest.raises(AccountError) as used:
        reset(engine, box, token, "yet another passphrase")
    assert used.value.message == passwords.INVALID_LINK


def test_an_expired_or_made_up_link_is_refused(engine, box):
    make_user(engine, "ada@example.com")
    forgot(engine)
    token = token_in(mails(engine)[0])
    with write_session(engine) as session:
        session.execute(sa.update(PasswordReset).values(expires_at=utcnow() - timedelta(seconds=1)))
    for attempt in (token, "qw_r_made-up", ""):
        with pytest.raises(AccountError) as refused:
            reset(engine, box, attempt)
        assert (refused.value.message, refused.value.field) == (passwords.INVALID_LINK, None)


@pytest.mark.parametrize(
    ("password", "confirm", "field"),
    [("short", "short", "password"), ("questwall123", None, "password"), (NEW, "other", "confirm")],
)
def test_the_new_password_follows_the_sign_up_rules_and_the_link_still_works_after(
    engine, box, password, confirm, field
):
    make_user(engine, "ada@example.com")
    forgot(engine)
    token = token_in(mails(engine)[0])
    with pytest.raises(AccountError) as refused:
        reset(engine, box, token, password, confirm)
    assert refused.value.field == field
    assert reset(engine, box, token) == "ada@example.com"


def test_an_account_gets_at_most_three_links_an_hour(engine):
    make_user(engine, "ada@example.com")
    for _ in range(passwords.RESETS_PER_ACCOUNT + 2):
        forgot(engine)
    assert len(mails(engine)) == passwords.RESETS_PER_ACCOUNT


def test_one_ip_may_ask_ten_times_in_fifteen_minutes(engine):
    ips = passwords.reset_throttle(key_prefix="test")
    for n in range(10):
        forgot(engine, f"someone{n}@example.com", ips=ips)
    with pytest.raises(ResetThrottled, match=r"Too many requests\. Try again in 15 minutes"):
        forgot(engine, "someone@example.com", ips=ips)
    forgot(engine, "someone@example.com", ips=ips, ip="198.51.100.1")  # another IP may


def test_a_malformed_address_is_refused_beside_the_field(engine):
    with pytest.raises(AccountError) as refused:
        forgot(engine, "not an address")
    assert refused.value.field == "email"


def _account(engine, email="ada@example.com"):
    with new_session(engine) as session:
        user = session.exec(select(User).where(User.email == email)).one()
    return Account(user.id, user.email, user.name, user.role, user.studio_id, user.offerwall_id)


def change(engine, box, account, current=PASSWORD, password=NEW, confirm=None, keep=""):
    with write_session(engine) as session:
        passwords.change_password(
            session=session,
            box=box,
            account=account,
            current=current,
            password=password,
            confirm=password if confirm is None else confirm,
            keep_token=keep,
        )


def test_changing_the_password_keeps_this_browser_and_signs_out_the_others(engine, box):
    make_user(engine, "ada@example.com")
    here = sign_in(engine, box, password=PASSWORD)
    elsewhere = sign_in(engine, box, password=PASSWORD)
    change(engine, box, _account(engine), keep=here.token)
    assert account_for(engine=engine, token=here.token) is not None
    assert account_for(engine=engine, token=elsewhere.token) is None
    assert sign_in(engine, box).role == Role.STAFF


def test_a_wrong_current_password_counts_against_the_sign_in_limit(engine, box):
    make_user(engine, "ada@example.com")
    account = _account(engine)
    for _ in range(5):
        with pytest.raises(AccountError) as refused:
            change(engine, box, account, current="not my password")
        assert refused.value.field == "current"
    with pytest.raises(LoginThrottled):
        change(engine, box, account)  # even the right one waits now
    with pytest.raises(LoginThrottled):
        sign_in(engine, box, password=PASSWORD)


@pytest.mark.parametrize(
    ("password", "confirm", "field"),
    [(PASSWORD, None, "password"), ("short", None, "password"), (NEW, "different", "confirm")],
)
def test_the_new_password_must_be_new_valid_and_repeated(engine, box, password, confirm, field):
    make_user(engine, "ada@example.com")
    with pytest.raises(AccountError) as refused:
        change(engine, box, _account(engine), password=password, confirm=confirm)
    assert refused.value.field == field
    sign_in(engine, box, password=PASSWORD)  # unchanged


def test_sign_out_everywhere_ends_every_session_of_the_account_only(engine, box):
    make_user(engine, "ada@example.com")
    make_user(engine, "bob@example.com")
    mine = [sign_in(engine, box, password=PASSWORD) for _ in range(2)]
    theirs = sign_in(engine, box, "bob@example.com", PASSWORD)
    with write_session(engine) as session:
        ended = passwords.sign_out_everywhere(session=session, account=_account(engine))
    assert ended == 2
    assert all(account_for(engine=engine, token=s.token) is None for s in mine)
    assert account_for(engine=engine, token=theirs.token) is not None
    with new_session(engine) as session:
        assert len(session.exec(select(PortalSession)).all()) == 1


def test_prune_removes_expired_links(engine):
    make_user(engine, "ada@example.com")
    forgot(engine)
    with write_session(engine) as session:
        assert passwords.prune(session) == 0
        session.execute(sa.update(PasswordReset).values(expires_at=utcnow()))
    with write_session(engine) as session:
        assert passwords.prune(session) == 1
