"""An account's sessions (`api/accounts/devices.py`): listed with their device, IP and
country, this browser marked; one ended, or every other; staff end every session of an
account, behind the password; and the ten-minute re-authentication window of a session
(`api/accounts/reauth.py`), with the clock moved instead of waited for."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from api import audit
from api.accounts import (
    Account,
    AccountError,
    Forbidden,
    IpThrottle,
    PasswordRequired,
    account_for,
    confirm_password,
    devices,
)
from api.accounts import sessions as accounts
from api.accounts import staff as users
from api.core.db import new_session, write_session
from models import AuditEvent, PortalSession, Role
from models.types import utcnow
from tests.domain.accounts.test_account_events import people, user
from tests.factories import PASSWORD

__all__ = ["people"]  # the fixture, shared
FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)


def browser(engine, box, email="ada@example.com", agent=FIREFOX, ip="203.0.113.9") -> Account:
    signed = accounts.sign_in(
        engine=engine,
        box=box,
        email=email,
        password=PASSWORD,
        client_ip=ip,
        ip_throttle=IpThrottle(),
        user_agent=agent,
        country="DE",
    )
    account = account_for(engine=engine, token=signed.token)
    assert account is not None
    return account


def listed(engine, account: Account) -> list[devices.SessionRow]:
    with new_session(engine) as session:
        return devices.list_sessions(session=session, account=account)


def ended_events(engine) -> list[dict]:
    table = AuditEvent.__table__
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(table).where(table.c.action == "session.ended").order_by(table.c.id)
        )
        return [dict(r) for r in rows.mappings()]


def test_the_device_is_the_browser_and_system_the_user_agent_names():
    assert devices.device(FIREFOX) == "Firefox 140 on Linux"
    assert devices.device(IPHONE) == "Mobile Safari 17 on iOS"
    assert devices.device("") == "Unknown browser"
    assert devices.device("curl/8.5.0") == "curl 8"


def test_sessions_are_listed_with_this_browser_marked(engine, box, people):
    laptop = browser(engine, box)
    phone = browser(engine, box, agent=IPHONE, ip="2001:db8::7")
    browser(engine, box, "dee@example.com")  # another account's: not listed
    rows = listed(engine, phone)
    assert {r.id for r in rows} == {laptop.session_id, phone.session_id}
    mine = next(r for r in rows if r.current)
    assert (mine.id, mine.device, mine.ip, mine.country) == (
        phone.session_id,
        "Mobile Safari 17 on iOS",
        "2001:db8::7",
        "DE",
    )
    assert [r.current for r in listed(engine, laptop) if r.id == laptop.session_id] == [True]


def test_ending_one_session_signs_that_browser_out_only(engine, box, people):
    laptop, phone = browser(engine, box), browser(engine, box, agent=IPHONE)
    with write_session(engine) as session:
        devices.end_session(session=session, account=laptop, session_id=phone.session_id)
    assert [r.id for r in listed(engine, laptop)] == [laptop.session_id]
    (ended,) = ended_events(engine)
    assert ended["changes"]["session_id"] == [phone.session_id, None]
    assert ended["changes"]["ended_by"] == [None, "ended"]
    assert ended["target_id"] == laptop.id
    # This browser's own ends by signing out; a gone or another account's is refused alike.
    other = browser(engine, box, "dee@example.com")
    for session_id in (laptop.session_id, phone.session_id, other.session_id, "nope"):
        with pytest.raises(AccountError), write_session(engine) as session:
            devices.end_session(session=session, account=laptop, session_id=session_id)
    assert len(listed(engine, other)) == 1


def test_end_all_others_keeps_this_browser(engine, box, people):
    here = browser(engine, box)
    for _ in range(2):
        browser(engine, box, agent=IPHONE)
    with write_session(engine) as session:
        assert devices.end_other_sessions(session=session, account=here) == 2
    assert [r.id for r in listed(engine, here)] == [here.session_id]
    assert [e["changes"]["ended_by"][1] for e in ended_events(engine)] == ["others_ended"] * 2


def test_staff_end_every_session_of_an_account_only_behind_the_password(engine, box, people):
    boss = browser(engine, box, "boss@example.com")
    ada = [browser(engine, box), browser(engine, box)]
    target = user(engine, "ada@example.com").id
    with pytest.raises(Forbidden), write_session(engine) as session:  # not staff
        users.end_all_sessions(session=session, account=ada[0], user_id=target)

    def end(now):
        actor = audit.account_actor(boss.id, boss.email, boss.role)
        with audit.acting_as(actor), write_session(engine) as session:
            confirm_password(session=session, box=box, account=boss, now=now)
            users.end_all_sessions(session=session, account=boss, user_id=target)

    with pytest.raises(PasswordRequired):
        end(utcnow() + timedelta(minutes=11))
    assert len(listed(engine, ada[0])) == 2
    end(utcnow())
    assert listed(engine, ada[0]) == []
    found = ended_events(engine)
    assert [e["changes"]["ended_by"][1] for e in found] == ["ended_by_staff"] * 2
    assert all(e["actor_email"] == "boss@example.com" for e in found)


def test_the_window_is_ten_minutes_of_this_session_and_a_password_reopens_it(engine, box, people):
    here, there = browser(engine, box), browser(engine, box)
    start = utcnow()

    def gate(account, password="", minutes=0.0):
        with write_session(engine) as session:
            confirm_password(
                session=session,
                box=box,
                account=account,
                password=password,
                now=start + timedelta(minutes=minutes),
            )

    gate(here, minutes=9.9)  # signed in moments ago: no password asked
    with pytest.raises(PasswordRequired) as asked:
        gate(here, minutes=10.1)
    assert asked.value.field == "password"
    with pytest.raises(AccountError) as wrong:
        gate(here, "not my password", minutes=10.1)
    assert wrong.value.field == "password"
    gate(here, PASSWORD, minutes=10.1)  # entered again: the window opens anew, here only
    gate(here, minutes=20)
    with pytest.raises(PasswordRequired):
        gate(there, minutes=20)
    with pytest.raises(PasswordRequired):  # an account without a session has no window
        gate(Account(here.id, here.email, "", Role.PUBLISHER, None, None), minutes=0)
    with new_session(engine) as session:
        confirmed = session.get(PortalSession, here.session_id).password_confirmed_at
    assert confirmed == start + timedelta(minutes=10.1)


def test_a_session_of_another_account_opens_no_window(engine, box, people):
    ada = browser(engine, box)
    dee = browser(engine, box, "dee@example.com")
    borrowed = Account(dee.id, dee.email, "", Role.DESIGNER, None, None, None, ada.session_id)
    with pytest.raises(PasswordRequired), write_session(engine) as session:
        confirm_password(session=session, box=box, account=borrowed)
