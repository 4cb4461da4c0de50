"""Accounts: password rules, sign-in, throttling, sessions, publisher signup."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from api.accounts import (
    AccountError,
    Forbidden,
    IpThrottle,
    LoginThrottled,
    account_for,
    offerwall_for,
    require,
    throttle,
)
from api.accounts import sessions as accounts
from api.core.db import write_session
from api.core.refusals import SignedOut
from api.publishers import signup_publisher
from models import Offerwall, OfferwallStatus, PortalSession, Role, SignInThrottle, User
from tests.factories import PASSWORD, make_user

CLIENT_IP = "203.0.113.5"


def sign_in(**kwargs):
    """accounts.sign_in from one client IP, with a throttle of the test's own."""
    kwargs.setdefault("client_ip", CLIENT_IP)
    kwargs.setdefault("ip_throttle", IpThrottle())
    return accounts.sign_in(**kwargs)


def signup(engine, email="pub@example.com", company="Acme Rewards"):
    with write_session(engine) as session:
        user = signup_publisher(
            session=session,
            company=company,
            website="https://acme.example",
            contact="Ada Lovelace",
            email=email,
            password=PASSWORD,
        )
        return user.id, user.offerwall_id


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short1", "at least 10"),
        ("aaaaaaaaaaaa", "more than three different"),
        ("Password123", "too common"),
        ("x" * 129, "at most 128"),
        ("my-pubmaster-2026", "email address"),
    ],
)
def test_password_rules_explain_the_refusal(password, message):
    assert message in (accounts.password_problem(password, email="pubmaster@example.com") or "")


def test_a_good_password_passes():
    assert accounts.password_problem(PASSWORD, email="a@example.com") is None


def test_signup_creates_a_pending_offerwall_and_its_publisher(engine):
    user_id, offerwall_id = signup(engine, email="Pub@Example.COM")
    with write_session(engine) as session:
        user = session.get(User, user_id)
        wall = session.get(Offerwall, offerwall_id)
        assert user.email == "pub@example.com"
        assert user.role == Role.PUBLISHER
        assert user.password_hash.startswith("$argon2id$")
        assert (wall.name, wall.status, wall.owid, wall.api_key_sealed) == (
            "Acme Rewards",
            OfferwallStatus.PENDING,
            None,
            None,
        )


@pytest.mark.parametrize(
    ("field", "overrides"),
    [
        ("company", {"company": " "}),
        ("website", {"website": "acme.example"}),
        ("contact", {"contact": ""}),
        ("email", {"email": "not-an-email"}),
        ("password", {"password": "short"}),
    ],
)
def test_signup_names_the_field_it_refuses(engine, field, overrides):
    data = {
        "company": "Acme",
        "website": "https://acme.example",
        "contact": "Ada",
        "email": "a@example.com",
        "password": PASSWORD,
    } | overrides
    with pytest.raises(AccountError) as refused, write_session(engine) as session:
        signup_publisher(session=session, **data)
    assert refused.value.field == field
    with write_session(engine) as session:
        assert session.exec(select(Offerwall)).all() == []


def test_signup_names_every_refused_field_at_once(engine):
    signup(engine, email="taken@example.com")
    with pytest.raises(AccountError) as refused, write_session(engine) as session:
        signup_publisher(
            session=session,
            company="A",
            website="acme.example",
            contact="",
            email="TAKEN@example.com",
            password="short",
            confirm="other",
        )
    assert refused.value.field_errors() == {
        "company": "Enter your company's name (2 to 200 characters).",
        "website": "Enter your website as a full URL, e.g. https://example.com.",
        "contact": "Enter the name of a contact person.",
        "email": "An account with this email already exists.",
        "password": "Use at least 10 characters.",
        "confirm": "The two passwords differ.",
    }


def test_one_account_per_email(engine):
    signup(engine)
    with pytest.raises(AccountError, match="already exists"):
        signup(engine, email="PUB@example.com", company="Other")


def test_sign_in_opens_a_session_the_token_finds(engine, box):
    signup(engine)
    signed = sign_in(engine=engine, box=box, email="pub@example.com", password=PASSWORD)
    with write_session(engine) as session:
        account = account_for(engine=engine, token=signed.token)
        stored = session.exec(select(PortalSession)).one()
    assert account is not None and account.email == "pub@example.com"
    assert signed.token not in stored.token_digest  # only the digest is kept
    accounts.sign_out(engine=engine, token=signed.token)
    assert account_for(engine=engine, token=signed.token) is None


def test_wrong_password_and_unknown_email_get_the_same_answer(engine, box):
    signup(engine)
    for email in ("pub@example.com", "nobody@example.com"):
        with pytest.raises(AccountError, match=r"^Wrong email or password\.$"):
            sign_in(engine=engine, box=box, email=email, password="wrong pass 1")


def test_five_failures_pause_sign_in_even_with_the_right_password(engine, box):
    signup(engine)
    for _ in range(throttle.MAX_FAILURES):
        with pytest.raises(AccountError):
            sign_in(engine=engine, box=box, email="pub@example.com", password="nope 1234")
    with pytest.raises(LoginThrottled) as throttled:
        sign_in(engine=engine, box=box, email="pub@example.com", password=PASSWORD)
    assert 0 < throttled.value.retry_after <= 15 * 60
    assert "Try again in 15 minutes" in str(throttled.value)
    # The window passes: sign-in works again and clears the counter.
    with write_session(engine) as session:
        counter = session.exec(select(SignInThrottle)).one()
        counter.window_start -= throttle.FAILURE_WINDOW
        session.add(counter)
    sign_in(engine=engine, box=box, email="pub@example.com", password=PASSWORD)
    with write_session(engine) as session:
        assert session.exec(select(SignInThrottle)).all() == []


def test_sessions_expire_when_idle_and_at_their_maximum_age(engine, box):
    signup(engine)
    tokens = []
    for _ in range(2):
        signed = sign_in(engine=engine, box=box, email="pub@example.com", password=PASSWORD)
        tokens.append(signed.token)
    with write_session(engine) as session:
        idle, old = session.exec(select(PortalSession).order_by(PortalSession.created_at)).all()
        idle.last_seen_at -= accounts.SESSION_IDLE + timedelta(seconds=1)
        old.created_at -= accounts.SESSION_MAX + timedelta(seconds=1)
        session.add_all([idle, old])
    with write_session(engine) as session:
        assert [account_for(engine=engine, token=t) for t in tokens] == [None, None]
        assert accounts.prune_sessions(session=session) == 2


def test_a_publisher_acts_only_on_their_own_offerwall(engine, box):
    _, mine = signup(engine)
    _, theirs = signup(engine, email="other@example.com", company="Other")
    token = sign_in(engine=engine, box=box, email="pub@example.com", password=PASSWORD).token
    with write_session(engine) as session:
        account = account_for(engine=engine, token=token)
        # Still pending: only their application page may open it (any_status).
        assert offerwall_for(session=session, account=account, any_status=True).id == mine
        own = offerwall_for(session=session, account=account, requested=mine, any_status=True)
        assert own.id == mine
        with pytest.raises(Forbidden):
            offerwall_for(session=session, account=account, requested=theirs, any_status=True)
        with pytest.raises(Forbidden):
            require(account, Role.STAFF)
        with pytest.raises(SignedOut):
            require(None)


def test_staff_act_on_any_offerwall_they_name(engine, box):
    _, wall = signup(engine)
    make_user(engine, "staff@example.com")
    token = sign_in(engine=engine, box=box, email="staff@example.com", password=PASSWORD).token
    with write_session(engine) as session:
        account = account_for(engine=engine, token=token)
        assert offerwall_for(session=session, account=account, requested=wall).id == wall
        with pytest.raises(Forbidden, match="No such publisher"):
            offerwall_for(session=session, account=account, requested="nope")
