"""The publisher's use cases the portal calls: the API key reveal and the key and signing
secret rotations behind the password, and the resend of a postback, each refused for anyone but the offerwall's own, and for a
publisher whose offerwall is not approved (their application is all they reach)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import col, select

from api.accounts import (
    Account,
    AccountError,
    Forbidden,
    LoginThrottled,
    NotApproved,
    account_for,
    offerwall_for,
)
from api.accounts import sessions as accounts
from api.accounts.throttle import MAX_FAILURES
from api.core.db import new_session, write_session
from api.postbacks import delivery_log as deliveries
from api.postbacks import signing_secret
from api.postbacks.endpoint import EndpointError
from api.publishers import api_key as api_keys
from api.publishers import offerwalls
from models import PortalSession, Postback, PostbackStatus, Role, SignInThrottle
from models.types import utcnow
from tests.domain.accounts.test_accounts import PASSWORD, sign_in, signup
from tests.factories import make_paying_offerwall, make_postback

STAFF_PASSWORD = "amber-compass-2026"


def _publisher(engine, box, email="pub@example.com", company="Acme Rewards") -> Account:
    """A signed-up publisher whose offerwall staff approved; their portal account."""
    _, offerwall_id = signup(engine, email=email, company=company)
    with write_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        offerwalls.approve(session=session, box=box, offerwall=wall)
    signed = sign_in(engine=engine, box=box, email=email, password=PASSWORD)
    account = account_for(engine=engine, token=signed.token)
    assert account is not None
    return account


def _reveal(engine, box, account, password, requested=""):
    with write_session(engine) as session:
        return api_keys.reveal_api_key(
            session=session, box=box, account=account, password=password, requested=requested
        )


def test_the_right_password_reveals_the_offerwalls_key(engine, box):
    account = _publisher(engine, box)
    key = _reveal(engine, box, account, PASSWORD)
    with new_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=account.offerwall_id)
        assert key == api_keys.api_key(box=box, offerwall=wall)


def test_within_ten_minutes_of_the_password_a_reveal_asks_for_it_no_more(engine, box):
    account = _publisher(engine, box)  # signed in: the password was entered just now
    key = _reveal(engine, box, account, "")
    assert key == _reveal(engine, box, account, PASSWORD)
    with write_session(engine) as session:
        session.execute(
            sa.update(PortalSession)
            .where(col(PortalSession.id) == account.session_id)
            .values(password_confirmed_at=utcnow() - timedelta(minutes=10, seconds=1))
        )
    with pytest.raises(AccountError) as refused:
        _reveal(engine, box, account, "")
    assert refused.value.field == "password"
    # Entered again: the window opens anew.
    _reveal(engine, box, account, PASSWORD)
    assert _reveal(engine, box, account, "") == key


def test_a_wrong_password_is_refused_and_counted(engine, box):
    account = _publisher(engine, box)
    with pytest.raises(AccountError) as refused:
        _reveal(engine, box, account, "not the password")
    assert (refused.value.field, refused.value.message) == ("password", "Wrong password.")
    with new_session(engine) as session:
        [row] = session.exec(select(SignInThrottle)).all()
        assert row.failures == 1


def test_the_reveal_is_throttled_like_the_sign_in(engine, box):
    account = _publisher(engine, box)
    for _ in range(MAX_FAILURES):
        with pytest.raises(AccountError):
            _reveal(engine, box, account, "not the password")
    # Past the limit even the right password is refused: no guessing around it.
    with pytest.raises(LoginThrottled):
        _reveal(engine, box, account, PASSWORD)


def test_a_publisher_cannot_reveal_another_offerwalls_key(engine, box):
    mine = _publisher(engine, box)
    theirs = _publisher(engine, box, email="other@example.com", company="Other")
    with pytest.raises(Forbidden):
        _reveal(engine, box, mine, PASSWORD, requested=theirs.offerwall_id)


def test_another_publishers_postback_cannot_be_resent(engine, box):
    wall = make_paying_offerwall(engine, box, postback_url="https://receiver.example/pb")
    postback_id = make_postback(engine, box, wall)
    stranger = _publisher(engine, box, email="other@example.com", company="Other")
    with pytest.raises(EndpointError, match="No such postback"):
        deliveries.resend_postback(engine=engine, account=stranger, postback_id=postback_id)
    staff = Account("s", "staff@example.com", "Staff", Role.STAFF, None, None)
    with pytest.raises(EndpointError, match="No such postback"):
        deliveries.resend_postback(
            engine=engine, account=staff, postback_id=postback_id, requested=stranger.offerwall_id
        )


def test_the_offerwalls_own_postback_is_queued_again(engine, box):
    wall = make_paying_offerwall(engine, box, postback_url="https://receiver.example/pb")
    postback_id = make_postback(engine, box, wall)
    with write_session(engine) as session:
        session.get(Postback, postback_id).status = PostbackStatus.FAILED
    staff = Account("s", "staff@example.com", "Staff", Role.STAFF, None, None)
    deliveries.resend_postback(
        engine=engine, account=staff, postback_id=postback_id, requested=wall.id
    )
    with new_session(engine) as session:
        assert session.get(Postback, postback_id).status == PostbackStatus.PENDING


@pytest.mark.parametrize("status", ["pending", "rejected", "suspended"])
def test_a_publisher_not_approved_reaches_only_their_application(engine, box, status):
    _, offerwall_id = signup(engine, email="wait@example.com", company="Waiting Wall")
    with write_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        if status == "rejected":
            offerwalls.reject(session=session, offerwall=wall, reason="Not for us.")
        if status == "suspended":
            offerwalls.approve(session=session, box=box, offerwall=wall)
            offerwalls.suspend(session=session, offerwall=wall)
    signed = sign_in(engine=engine, box=box, email="wait@example.com", password=PASSWORD)
    account = account_for(engine=engine, token=signed.token)
    assert account is not None
    assert (account.offerwall_status, account.limited) == (status, True)
    with new_session(engine) as session:
        # Their application page reads the offerwall; every workspace use case is refused.
        assert offerwall_for(session=session, account=account, any_status=True).id == wall.id
        with pytest.raises(NotApproved):
            offerwall_for(session=session, account=account)
        staff = Account("s", "staff@example.com", "Staff", Role.STAFF, None, None)
        assert offerwall_for(session=session, account=staff, requested=wall.id).id == wall.id
    with pytest.raises(NotApproved):
        _reveal(engine, box, account, PASSWORD)
    # Once approved (again), the same account is a full one.
    with write_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        if status == "suspended":
            offerwalls.reinstate(session=session, offerwall=wall)
        else:
            offerwalls.approve(session=session, box=box, offerwall=wall)
    account = account_for(engine=engine, token=signed.token)
    assert account is not None and not account.limited


# Each rotation and the name of its grace period's argument.
_ROTATIONS = {
    "key": (api_keys.rotate_api_key, "grace"),
    "secret": (signing_secret.rotate_signing_secret, "overlap"),
}


def _rotate(what, engine, box, account, password, requested=""):
    rotation, period = _ROTATIONS[what]
    with write_session(engine) as session:
        value, _ = rotation(
            session=session,
            box=box,
            account=account,
            password=password,
            requested=requested,
            **{period: "1h"},
        )
        return value


def _sealed(engine, offerwall_id: str) -> tuple[str | None, str | None]:
    with new_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        return wall.api_key_sealed, wall.signing_secret_sealed


@pytest.mark.parametrize("what", list(_ROTATIONS))
def test_a_rotation_asks_for_the_password_and_shows_the_new_value(engine, box, what):
    account = _publisher(engine, box)
    assert account.offerwall_id is not None
    before = _sealed(engine, account.offerwall_id)
    with write_session(engine) as session:  # the sign-in's password was long ago
        session.execute(
            sa.update(PortalSession)
            .where(col(PortalSession.id) == account.session_id)
            .values(password_confirmed_at=utcnow() - timedelta(hours=1))
        )
    for password in ("", "not the password"):
        with pytest.raises(AccountError) as refused:
            _rotate(what, engine, box, account, password)
        assert refused.value.field == "password"
    assert _sealed(engine, account.offerwall_id) == before  # nothing was rotated
    new = _rotate(what, engine, box, account, PASSWORD)
    assert new.startswith(("qw_ak_", "qw_ps_"))
    assert _sealed(engine, account.offerwall_id) != before


@pytest.mark.parametrize("what", list(_ROTATIONS))
def test_a_rotation_is_throttled_with_the_reveal(engine, box, what):
    account = _publisher(engine, box)
    for _ in range(MAX_FAILURES - 1):
        with pytest.raises(AccountError):
            _reveal(engine, box, account, "not the password")
    with pytest.raises(AccountError):
        _rotate(what, engine, box, account, "not the password")
    # The reveal's failures and the rotation's count together: the right password waits.
    with pytest.raises(LoginThrottled):
        _rotate(what, engine, box, account, PASSWORD)


def test_staff_rotate_a_publishers_key_with_their_own_password(engine, box):
    publisher = _publisher(engine, box)
    with write_session(engine) as session:
        accounts.create_user(
            session=session, email="staff@example.com", password=STAFF_PASSWORD, role=Role.STAFF
        )
    signed = sign_in(engine=engine, box=box, email="staff@example.com", password=STAFF_PASSWORD)
    staff = account_for(engine=engine, token=signed.token)
    assert staff is not None and publisher.offerwall_id is not None
    wall_id = publisher.offerwall_id
    with pytest.raises(AccountError):  # the publisher's password is not the staff's
        _rotate("key", engine, box, staff, PASSWORD, requested=wall_id)
    key = _rotate("key", engine, box, staff, STAFF_PASSWORD, requested=wall_id)
    assert key == _reveal(engine, box, publisher, PASSWORD)


def test_a_publisher_cannot_rotate_another_offerwalls_key_or_secret(engine, box):
    mine = _publisher(engine, box)
    theirs = _publisher(engine, box, email="other@example.com", company="Other")
    assert theirs.offerwall_id is not None
    before = _sealed(engine, theirs.offerwall_id)
    for what in _ROTATIONS:
        with pytest.raises(Forbidden):
            _rotate(what, engine, box, mine, PASSWORD, requested=theirs.offerwall_id)
    assert _sealed(engine, theirs.offerwall_id) == before
