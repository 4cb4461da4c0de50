"""The offerwall lifecycle: apply, approve, reject with a reason, suspend, reinstate, rotate
the key. Every step from every status, allowed or refused, as the CLI and the portal see it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlmodel import Session, select

from api.core.crypto import SecretBox
from api.core.db import write_session
from api.publishers import OfferwallError, offerwalls
from models import Offerwall, OfferwallStatus

PENDING, APPROVED = OfferwallStatus.PENDING, OfferwallStatus.APPROVED
REJECTED, SUSPENDED = OfferwallStatus.REJECTED, OfferwallStatus.SUSPENDED
REASON = "Your website lists no games."


def wall_in(session: Session, box: SecretBox, status: OfferwallStatus) -> Offerwall:
    """An offerwall brought to `status` through the lifecycle itself."""
    wall = offerwalls.create_offerwall(session=session, name="Acme Rewards")
    if status == REJECTED:
        offerwalls.reject(session=session, offerwall=wall, reason=REASON)
    if status in (APPROVED, SUSPENDED):
        offerwalls.approve(session=session, box=box, offerwall=wall)
    if status == SUSPENDED:
        offerwalls.suspend(session=session, offerwall=wall)
    assert wall.status == status
    return wall


def wall_with_key(session: Session, box: SecretBox, api_key: str) -> Offerwall | None:
    """The offerwall this API key belongs to (by keyed digest), whatever its status."""
    digests = box.candidate_digests(api_key)
    return session.exec(select(Offerwall).where(Offerwall.api_key_digest.in_(digests))).first()  # type: ignore[union-attr]


STEPS: dict[str, Callable[[Session, SecretBox, Offerwall], Any]] = {
    "approve": lambda s, b, o: offerwalls.approve(session=s, box=b, offerwall=o),
    "reject": lambda s, _b, o: offerwalls.reject(session=s, offerwall=o, reason=REASON),
    "suspend": lambda s, _b, o: offerwalls.suspend(session=s, offerwall=o),
    "reinstate": lambda s, _b, o: offerwalls.reinstate(session=s, offerwall=o),
    "rotate_key": lambda s, b, o: offerwalls.rotate_key(session=s, box=b, offerwall=o),
}
# (step, from) -> the status after it; every pair not listed is refused.
ALLOWED = {
    ("approve", PENDING): APPROVED,
    ("approve", REJECTED): APPROVED,
    ("reject", PENDING): REJECTED,
    ("suspend", APPROVED): SUSPENDED,
    ("reinstate", SUSPENDED): APPROVED,
    ("rotate_key", APPROVED): APPROVED,
    ("rotate_key", SUSPENDED): SUSPENDED,
}
EVERY_PAIR = [(step, status) for step in STEPS for status in OfferwallStatus]


@pytest.mark.parametrize(("step", "start"), [p for p in EVERY_PAIR if p in ALLOWED])
def test_an_allowed_step_reaches_its_status(engine, box, step, start):
    with write_session(engine) as session:
        wall = wall_in(session, box, start)
        STEPS[step](session, box, wall)
        wall_id = wall.id
    with write_session(engine) as session:
        assert offerwalls.get_offerwall(session=session, ref=wall_id).status == ALLOWED[step, start]


@pytest.mark.parametrize(("step", "start"), [p for p in EVERY_PAIR if p not in ALLOWED])
def test_a_step_that_makes_no_sense_is_refused_and_changes_nothing(engine, box, step, start):
    with write_session(engine) as session:
        wall = wall_in(session, box, start)
        before = (wall.status, wall.owid, wall.api_key_digest, wall.rejection_reason)
        with pytest.raises(OfferwallError, match=f"This offerwall is {start}: only one that is"):
            STEPS[step](session, box, wall)
        assert (wall.status, wall.owid, wall.api_key_digest, wall.rejection_reason) == before


def test_applying_creates_a_pending_offerwall_without_owid_or_key(engine):
    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name="  Acme Rewards ")
        assert (wall.name, wall.status, wall.owid, wall.api_key_digest) == (
            "Acme Rewards",
            PENDING,
            None,
            None,
        )
        with pytest.raises(OfferwallError, match="1 to 200 characters"):
            offerwalls.create_offerwall(session=session, name="   ")


def test_approving_issues_an_owid_and_a_key_that_finds_the_offerwall(engine, box):
    with write_session(engine) as session:
        wall = wall_in(session, box, PENDING)
        issued = offerwalls.approve(session=session, box=box, offerwall=wall)
        assert issued.owid == wall.owid and issued.owid.startswith("ow")
        assert wall_with_key(session, box, issued.api_key) == wall


def test_approving_a_rejected_offerwall_clears_its_old_reason(engine, box):
    with write_session(engine) as session:
        wall = wall_in(session, box, REJECTED)
        assert wall.rejection_reason == REASON
        offerwalls.approve(session=session, box=box, offerwall=wall)
        wall_id = wall.id
    with write_session(engine) as session:
        assert offerwalls.get_offerwall(session=session, ref=wall_id).rejection_reason is None


def test_the_rejection_reason_is_stored_stripped(engine, box):
    with write_session(engine) as session:
        wall = wall_in(session, box, PENDING)
        offerwalls.reject(session=session, offerwall=wall, reason=f"  {REASON}\n")
        assert wall.rejection_reason == REASON


@pytest.mark.parametrize("reason", ["", "   ", "no", " ab ", "x" * 1001])
def test_a_rejection_without_a_real_reason_is_refused(engine, box, reason):
    with write_session(engine) as session:
        wall = wall_in(session, box, PENDING)
        with pytest.raises(OfferwallError, match=r"reason \(3 to 1000 characters\)"):
            offerwalls.reject(session=session, offerwall=wall, reason=reason)
        assert (wall.status, wall.rejection_reason) == (PENDING, None)


def test_the_longest_reason_is_accepted():
    assert offerwalls.rejection_reason_problem("x" * 1000) is None
    assert offerwalls.rejection_reason_problem("abc") is None


def test_reinstating_keeps_the_owid_and_the_key(engine, box):
    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name="Paused")
        issued = offerwalls.approve(session=session, box=box, offerwall=wall)
        offerwalls.suspend(session=session, offerwall=wall)
        offerwalls.reinstate(session=session, offerwall=wall)
        assert wall.owid == issued.owid
        assert wall_with_key(session, box, issued.api_key) == wall


def test_a_rotated_key_replaces_the_old_one(engine, box):
    with write_session(engine) as session:
        wall = offerwalls.create_offerwall(session=session, name="Rotating")
        old = offerwalls.approve(session=session, box=box, offerwall=wall).api_key
        new = offerwalls.rotate_key(session=session, box=box, offerwall=wall).api_key
        assert new != old
        assert wall_with_key(session, box, old) is None
        assert wall_with_key(session, box, new) == wall


def _applied(session: Session) -> Offerwall:
    """A publisher's application as the signup makes it: an offerwall and its account."""
    from api.publishers import signup_publisher
    from tests.factories import PASSWORD

    user = signup_publisher(
        session=session,
        company="Acme Rewards",
        website="https://acme.example",
        contact="Ada",
        email="ada@acme.example",
        password=PASSWORD,
    )
    wall = session.get(Offerwall, user.offerwall_id)
    assert wall is not None
    return wall


def _mails(session: Session) -> list:
    from models import MailMessage

    return list(session.exec(select(MailMessage)).all())


def test_approval_mails_the_publisher_the_owid_and_the_workspace_never_the_key(engine, box):
    with write_session(engine) as session:
        wall = _applied(session)
        issued = offerwalls.approve(session=session, box=box, offerwall=wall)
        [message] = _mails(session)
    assert message.to_address == "ada@acme.example"
    assert message.subject == "Acme Rewards is approved on Questwall"
    assert issued.owid in message.body
    assert "http://localhost:8000/publisher\n" in message.body
    assert issued.api_key not in message.body and "qw_ak_" not in message.body


def test_rejection_mails_the_publisher_the_reason(engine, box):
    with write_session(engine) as session:
        offerwalls.reject(session=session, offerwall=_applied(session), reason=f" {REASON} ")
        [message] = _mails(session)
    assert message.to_address == "ada@acme.example"
    assert f"The reason:\n\n{REASON}\n" in message.body
    assert "http://localhost:8000/account/application" in message.body


def test_an_offerwall_without_an_account_is_approved_without_mail(engine, box):
    with write_session(engine) as session:
        wall_in(session, box, APPROVED)
        assert _mails(session) == []
