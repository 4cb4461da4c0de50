"""Every account action is one audit event (`account.*`, `session.ended`), by the right
actor, on the account (its id and email), scoped to its studio or offerwall, with what
changed before and after; and no password or token anyone typed or was given ever
appears in a row."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from sqlmodel import select

from api import audit
from api.accounts import Account, Client, IpThrottle, account_for, devices, passwords
from api.accounts import sessions as accounts
from api.accounts import staff as users
from api.accounts.sessions import AccountError
from api.core.db import new_session, write_session
from api.publishers import signup_publisher
from models import AuditEvent, MailMessage, Role, User
from tests.factories import PASSWORD, make_studio, make_user

_event = AuditEvent.__table__
IP, AGENT = "203.0.113.9", "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
NEW = "a brand new passphrase"
WRONG = "not the right password at all"
STAFF = audit.account_actor("staff-1", "boss@example.com", "staff", ip="198.51.100.1")


def events(engine) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(_event).order_by(_event.c.id)).mappings().all()
    return [dict(row) for row in rows]


def since(engine, mark: int) -> list[dict]:
    return [e for e in events(engine) if e["id"] > mark]


def last_id(engine) -> int:
    found = events(engine)
    return found[-1]["id"] if found else 0


def user(engine, email: str) -> User:
    with new_session(engine) as session:
        return session.exec(select(User).where(User.email == email)).one()


def sign_in(engine, box, email: str, password: str = PASSWORD):
    return accounts.sign_in(
        engine=engine,
        box=box,
        email=email,
        password=password,
        client_ip=IP,
        ip_throttle=IpThrottle(),
        user_agent=AGENT,
        country="FR",
    )


def signed_in(engine, box, email: str) -> tuple[Account, str]:
    token = sign_in(engine, box, email).token
    account = account_for(engine=engine, token=token)
    assert account is not None
    return account, token


def staff_account(engine) -> Account:
    u = user(engine, "boss@example.com")
    return Account(u.id, u.email, u.name, u.role, None, None)


@pytest.fixture
def people(engine):
    """Staff, a designer of Northwind and a publisher (who signed up), made before the
    test's own events."""
    studio = make_studio(engine, "Northwind")
    make_user(engine, "boss@example.com")
    make_user(engine, "dee@example.com", role=Role.DESIGNER, studio_id=studio, name="Dee")
    with write_session(engine) as session:
        signup_publisher(
            session=session,
            company="Acme Rewards",
            website="https://acme.example",
            contact="Ada",
            email="ada@example.com",
            password=PASSWORD,
            client=Client(IP, AGENT),
        )
    return studio


def only(found: list[dict], action: str) -> dict:
    matching = [e for e in found if e["action"] == action]
    assert len(matching) == 1, [e["action"] for e in found]
    return matching[0]


def assert_on(event: dict, u: User) -> None:
    assert (event["target_type"], event["target_id"], event["target_name"]) == (
        "account",
        u.id,
        u.email,
    )
    if u.role == Role.DESIGNER:
        assert (event["scope_type"], event["scope_id"]) == ("studio", u.studio_id)
    elif u.role == Role.PUBLISHER:
        assert (event["scope_type"], event["scope_id"]) == ("offerwall", u.offerwall_id)
    else:
        assert (event["scope_type"], event["scope_id"]) == (None, None)


def by_itself(event: dict, u: User) -> None:
    assert (event["actor_kind"], event["actor_id"], event["actor_email"]) == (
        "account",
        u.id,
        u.email,
    )
    assert (event["actor_ip"], event["user_agent"]) == (IP, AGENT)


def test_new_accounts_are_recorded_by_who_made_them(engine, people):
    found = events(engine)
    created = [e for e in found if e["action"] == "account.created"]
    assert len(created) == 3
    staff_made, designer_made, signup = created
    designer, publisher = user(engine, "dee@example.com"), user(engine, "ada@example.com")
    assert_on(designer_made, designer)
    assert designer_made["changes"] == {
        "email": [None, "dee@example.com"],
        "role": [None, "designer"],
        "studio_id": [None, people],
    }
    assert staff_made["actor_kind"] == "system"  # made outside any portal or command
    assert_on(signup, publisher)
    by_itself(signup, publisher)  # a signup is the new account's own doing
    assert signup["changes"]["offerwall_id"] == [None, publisher.offerwall_id]


def test_sign_in_and_sign_out_are_the_accounts_own_from_its_browser(engine, box, people):
    mark = last_id(engine)
    token = sign_in(engine, box, "dee@example.com").token
    accounts.sign_out(engine=engine, token=token, ip=IP, user_agent=AGENT)
    found = since(engine, mark)
    assert [e["action"] for e in found] == ["account.signed_in", "account.signed_out"]
    designer = user(engine, "dee@example.com")
    for event in found:
        assert_on(event, designer)
        by_itself(event, designer)
    signed, out = found
    assert signed["changes"]["ip"] == [None, IP]
    assert signed["changes"]["country"] == [None, "FR"]
    assert out["changes"] == {"session_id": [signed["changes"]["session_id"][1], None]}


def test_a_failed_sign_in_is_recorded_for_an_account_only(engine, box, people):
    mark = last_id(engine)
    for email in ("ada@example.com", "nobody@example.com"):
        with pytest.raises(AccountError):
            sign_in(engine, box, email, WRONG)
    failed = only(since(engine, mark), "account.sign_in_failed")
    assert len(since(engine, mark)) == 1  # the unknown address recorded nothing
    publisher = user(engine, "ada@example.com")
    assert_on(failed, publisher)
    by_itself(failed, publisher)
    assert failed["changes"] == {"reason": [None, "wrong_password"]}


def test_a_disabled_accounts_sign_in_is_a_failure_with_its_reason(engine, box, people):
    with write_session(engine) as session:
        users.disable(
            session=session,
            account=staff_account(engine),
            user_id=user(engine, "dee@example.com").id,
        )
    mark = last_id(engine)
    with pytest.raises(AccountError):
        sign_in(engine, box, "dee@example.com")
    assert only(since(engine, mark), "account.sign_in_failed")["changes"] == {
        "reason": [None, "disabled"]
    }


def test_a_password_change_is_recorded_and_ends_the_other_sessions(engine, box, people):
    account, token = signed_in(engine, box, "ada@example.com")
    other, _ = signed_in(engine, box, "ada@example.com")
    mark = last_id(engine)
    with write_session(engine) as session:
        passwords.change_password(
            session=session,
            box=box,
            account=account,
            current=PASSWORD,
            password=NEW,
            confirm=NEW,
            keep_token=token,
        )
    found = since(engine, mark)
    assert [e["action"] for e in found] == ["account.password_changed", "session.ended"]
    changed, ended = found
    publisher = user(engine, "ada@example.com")
    assert_on(changed, publisher)
    assert changed["changes"] == {}
    assert ended["changes"] == {
        "session_id": [other.session_id, None],
        "ip": [IP, None],
        "ended_by": [None, "account.password_changed"],
    }
    with new_session(engine) as session:
        assert devices.list_sessions(session=session, account=account)[0].id == (account.session_id)


def test_a_reset_by_mail_is_asked_then_done_and_ends_every_session(engine, box, people):
    signed_in(engine, box, "ada@example.com")
    mark = last_id(engine)
    passwords.forgot_password(
        engine=engine,
        email="ada@example.com",
        client_ip=IP,
        ip_throttle=IpThrottle(),
        user_agent=AGENT,
    )
    with new_session(engine) as session:
        mail = session.exec(select(MailMessage)).all()[-1]
    token = mail.body.split("#token=")[1].split()[0]
    with write_session(engine) as session:
        passwords.reset_password(
            session=session,
            box=box,
            token=token,
            password=NEW,
            confirm=NEW,
            client=Client(IP, AGENT),
        )
    found = since(engine, mark)
    assert [e["action"] for e in found] == [
        "account.password_reset_requested",
        "account.password_reset",
        "session.ended",
    ]
    publisher = user(engine, "ada@example.com")
    for event in found:
        assert_on(event, publisher)
        by_itself(event, publisher)
    assert token not in json.dumps(events(engine), default=str)


def test_staff_disable_enable_move_and_send_a_link(engine, box, people):
    staff = staff_account(engine)
    dee = user(engine, "dee@example.com")
    signed_in(engine, box, "dee@example.com")
    elsewhere = make_studio(engine, "Southwind")
    mark = last_id(engine)
    with audit.acting_as(STAFF), write_session(engine) as session:
        users.disable(session=session, account=staff, user_id=dee.id)
    with audit.acting_as(STAFF), write_session(engine) as session:
        users.disable(session=session, account=staff, user_id=dee.id)  # already: nothing
    with audit.acting_as(STAFF), write_session(engine) as session:
        users.enable(session=session, account=staff, user_id=dee.id)
    with audit.acting_as(STAFF), write_session(engine) as session:
        users.move_to_studio(session=session, account=staff, user_id=dee.id, studio_id=elsewhere)
    with audit.acting_as(STAFF), write_session(engine) as session:
        users.send_reset(session=session, account=staff, user_id=dee.id)
    found = since(engine, mark)
    assert [e["action"] for e in found] == [
        "account.disabled",
        "session.ended",
        "account.enabled",
        "account.studio_changed",
        "account.password_reset_requested",
    ]
    for event in found:
        assert (event["actor_email"], event["actor_role"]) == ("boss@example.com", "staff")
        assert event["target_id"] == dee.id
    disabled, ended, enabled, moved, _ = found
    assert disabled["changes"] == {"status": ["active", "disabled"]}
    assert ended["changes"]["ended_by"] == [None, "account.disabled"]
    assert enabled["changes"] == {"status": ["disabled", "active"]}
    assert moved["changes"] == {"studio_id": [people, elsewhere]}
    assert (moved["scope_type"], moved["scope_id"]) == ("studio", elsewhere)


def test_no_password_or_token_is_ever_in_the_trail(engine, box, people):
    account, token = signed_in(engine, box, "ada@example.com")
    _, other_token = signed_in(engine, box, "ada@example.com")
    with pytest.raises(AccountError):
        sign_in(engine, box, "ada@example.com", WRONG)
    with write_session(engine) as session:
        passwords.change_password(
            session=session,
            box=box,
            account=account,
            current=PASSWORD,
            password=NEW,
            confirm=NEW,
            keep_token=token,
        )
    with write_session(engine) as session:
        devices.end_other_sessions(session=session, account=account)
    accounts.sign_out(engine=engine, token=token)
    text = json.dumps(events(engine), default=str)
    for secret in (PASSWORD, NEW, WRONG, token, other_token):
        assert secret not in text
    with new_session(engine) as session:
        digests = [u.password_hash for u in session.exec(select(User)).all()]
    assert all(d not in text for d in digests)


def test_a_staff_account_made_by_the_command_line_is_the_commands(
    engine, db_url, monkeypatch, tmp_path
):
    from click.testing import CliRunner

    from api.cli import main
    from tests.conftest import MASTER_KEY
    from tests.live import forget_process_settings

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("SECRET_KEY", MASTER_KEY)
    monkeypatch.setenv("QUESTWALL_DATA_DIR", str(tmp_path / "data"))
    forget_process_settings()
    try:
        made = CliRunner().invoke(
            main,
            ["user", "create-staff", "ops@example.com", "--password-stdin"],
            input=NEW + "\n",
            catch_exceptions=False,
        )
    finally:
        forget_process_settings()
    assert made.exit_code == 0, made.stderr
    created = only(events(engine), "account.created")
    assert created["actor_kind"] == "cli" and created["actor_email"]
    assert_on(created, user(engine, "ops@example.com"))
    assert created["changes"] == {"email": [None, "ops@example.com"], "role": [None, "staff"]}
    assert NEW not in json.dumps(events(engine), default=str)


def test_sign_out_everywhere_ends_each_session_once_in_the_trail(engine, box, people):
    account, _ = signed_in(engine, box, "dee@example.com")
    other, _ = signed_in(engine, box, "dee@example.com")
    mark = last_id(engine)
    with write_session(engine) as session:
        assert passwords.sign_out_everywhere(session=session, account=account) == 2
    found = since(engine, mark)
    assert [e["action"] for e in found] == ["session.ended", "session.ended"]
    assert {e["changes"]["session_id"][0] for e in found} == {account.session_id, other.session_id}
    assert {e["changes"]["ended_by"][1] for e in found} == {"signed_out_everywhere"}
    for event in found:
        assert_on(event, user(engine, "dee@example.com"))
