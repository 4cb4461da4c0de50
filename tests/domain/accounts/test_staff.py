"""Staff manage accounts (`api/accounts/staff.py`): the list, disabling and enabling, the
reset link, a designer's studio; and every function refuses an account that is not staff."""

from __future__ import annotations

import pytest
from sqlmodel import select

from api.accounts import Account, Forbidden, IpThrottle, account_for
from api.accounts import sessions as accounts
from api.accounts import staff as users
from api.accounts.sessions import ACCOUNT_DISABLED, AccountError
from api.core.db import new_session, write_session
from api.publishers import signup_publisher
from models import MailMessage, Role, User
from portal.accounts.users_state import UserLine, user_line
from tests.factories import PASSWORD, make_studio, make_user


def account_of(engine, email: str) -> Account:
    with new_session(engine) as session:
        u = session.exec(select(User).where(User.email == email)).one()
    return Account(u.id, u.email, u.name, u.role, u.studio_id, u.offerwall_id)


def sign_in(engine, box, email: str, password: str = PASSWORD):
    return accounts.sign_in(
        engine=engine,
        box=box,
        email=email,
        password=password,
        client_ip="203.0.113.8",
        ip_throttle=IpThrottle(),
    )


@pytest.fixture
def people(engine):
    """Staff, a designer of Northwind and a publisher; returns their accounts by role."""
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
        )
    return {
        "staff": account_of(engine, "boss@example.com"),
        "designer": account_of(engine, "dee@example.com"),
        "publisher": account_of(engine, "ada@example.com"),
    }


def act(engine, fn, **kwargs):
    with write_session(engine) as session:
        return fn(session=session, **kwargs)


def listed(engine, staff, **filters) -> dict[str, UserLine]:
    """The accounts as the Users page lists them."""
    with new_session(engine) as session:
        window = users.list_users(session=session, account=staff, **filters)
    return {row.email: user_line(row) for row in window.rows}


def test_staff_see_every_account_with_its_studio_or_company_and_status(engine, box, people):
    sign_in(engine, box, "dee@example.com")
    rows = listed(engine, people["staff"])
    assert set(rows) == {"boss@example.com", "dee@example.com", "ada@example.com"}
    dee = rows["dee@example.com"]
    assert (dee.role, dee.belongs_to, dee.status, dee.name) == (
        "designer",
        "Northwind",
        "active",
        "Dee",
    )
    assert dee.last_login_at.endswith("UTC") and rows["ada@example.com"].last_login_at == "never"
    assert rows["ada@example.com"].belongs_to == "Acme Rewards"
    assert set(listed(engine, people["staff"], role="publisher")) == {"ada@example.com"}
    assert set(listed(engine, people["staff"], search="NORTH")) == {"dee@example.com"}


def test_a_disabled_account_is_signed_out_and_told_why_only_with_its_password(engine, box, people):
    session_token = sign_in(engine, box, "dee@example.com").token
    act(engine, users.disable, account=people["staff"], user_id=people["designer"].id)
    assert account_for(engine=engine, token=session_token) is None
    with pytest.raises(AccountError) as told:
        sign_in(engine, box, "dee@example.com")
    assert told.value.message == ACCOUNT_DISABLED
    with pytest.raises(AccountError, match="Wrong email or password"):
        sign_in(engine, box, "dee@example.com", "a wrong password")
    assert listed(engine, people["staff"])["dee@example.com"].status == "disabled"
    act(engine, users.enable, account=people["staff"], user_id=people["designer"].id)
    assert sign_in(engine, box, "dee@example.com").role == Role.DESIGNER


def test_staff_cannot_disable_their_own_account(engine, people):
    staff = people["staff"]
    with pytest.raises(AccountError, match="your own account"):
        act(engine, users.disable, account=staff, user_id=staff.id)
    assert listed(engine, staff)["boss@example.com"].status == "active"


def test_staff_send_a_reset_link_they_cannot_read_themselves(engine, people):
    act(engine, users.send_reset, account=people["staff"], user_id=people["publisher"].id)
    with new_session(engine) as session:
        [message] = session.exec(select(MailMessage)).all()
    assert message.to_address == "ada@example.com" and message.sensitive
    act(engine, users.disable, account=people["staff"], user_id=people["publisher"].id)
    with pytest.raises(AccountError, match="enable it first"):
        act(engine, users.send_reset, account=people["staff"], user_id=people["publisher"].id)


def test_a_designer_moves_to_another_studio_and_only_a_designer(engine, people):
    southwind = make_studio(engine, "Southwind")
    moved = act(
        engine,
        users.move_to_studio,
        account=people["staff"],
        user_id=people["designer"].id,
        studio_id=southwind,
    )
    assert moved == "Southwind"
    assert account_of(engine, "dee@example.com").studio_id == southwind
    with pytest.raises(AccountError, match="Only designers"):
        act(
            engine,
            users.move_to_studio,
            account=people["staff"],
            user_id=people["publisher"].id,
            studio_id=southwind,
        )
    with pytest.raises(AccountError) as unknown:
        act(
            engine,
            users.move_to_studio,
            account=people["staff"],
            user_id=people["designer"].id,
            studio_id="no-such-studio",
        )
    assert unknown.value.field == "studio"


@pytest.mark.parametrize("role", ["designer", "publisher"])
def test_every_function_refuses_an_account_that_is_not_staff(engine, people, role):
    me, target = people[role], people["staff"].id
    calls = [
        lambda s: users.list_users(session=s, account=me),
        lambda s: users.studio_choices(session=s, account=me),
        lambda s: users.disable(session=s, account=me, user_id=target),
        lambda s: users.enable(session=s, account=me, user_id=target),
        lambda s: users.send_reset(session=s, account=me, user_id=target),
        lambda s: users.move_to_studio(session=s, account=me, user_id=target, studio_id=""),
    ]
    for call in calls:
        with pytest.raises(Forbidden), write_session(engine) as session:
            call(session)
    assert listed(engine, people["staff"])["boss@example.com"].status == "active"
