"""The workspace's postback endpoint use cases (`api/postbacks/signing_secret.py` and
`delivery_log.py` over `api/postbacks/endpoint.py`): the signing secret shown once behind the password, the
endpoint's health for the banner (failing, paused, what waits, the last errors), and a
resume that sends what waited to the URL the publisher fixed (SQLite and PostgreSQL, a
real local receiver)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from api.accounts import AccountError, Forbidden, LoginThrottled, NotApproved, account_for
from api.accounts.throttle import MAX_FAILURES
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.postbacks import delivery_log as deliveries
from api.postbacks import endpoint as endpoints
from api.postbacks import signing_secret
from api.publishers import offerwalls
from models import Offerwall, Postback, PostbackStatus
from portal.state.workspace import HealthLine, health_line
from tests.domain.accounts.test_accounts import PASSWORD, sign_in, signup
from tests.domain.publishers.test_publisher_use_cases import _publisher
from tests.factories import make_conversion, make_game, make_mission, make_paying_offerwall
from tests.outbox import make_due, run_once
from tests.receiver import running_receiver


@pytest.fixture
def pausing(settings: Settings) -> Settings:
    """A dispatcher that pauses an offerwall at its first failure (and may post to the
    receiver on 127.0.0.1)."""
    return settings.model_copy(
        update={
            "postback_allow_private": True,
            "postback_pause_after_seconds": 0,
            "postback_pause_min_failures": 1,
        }
    )


@pytest.fixture
def mission_id(engine: Engine, box: SecretBox) -> str:
    return make_mission(engine, make_game(engine, box).game_id).id


def _reveal_secret(engine, box, account, password, requested=""):
    with write_session(engine) as session:
        return signing_secret.reveal_signing_secret(
            session=session, box=box, account=account, password=password, requested=requested
        )


def _wall(engine: Engine, offerwall_id: str) -> Offerwall:
    with new_session(engine) as session:
        wall = session.get(Offerwall, offerwall_id)
        assert wall is not None
        return wall


def _health(engine: Engine, offerwall_id: str) -> HealthLine:
    """The endpoint's health as the workspace's banner says it."""
    with new_session(engine) as session:
        wall = session.get(Offerwall, offerwall_id)
        assert wall is not None
        return health_line(deliveries.endpoint_health(session=session, offerwall=wall))


def _deliver(engine: Engine, box: SecretBox, settings: Settings) -> None:
    while run_once(engine, box, settings, threads=2):
        pass


# --- the signing secret ------------------------------------------------------------


def test_the_signing_secret_is_shown_once_behind_the_password(engine, box):
    account = _publisher(engine, box)
    secret = _reveal_secret(engine, box, account, PASSWORD)
    wall = _wall(engine, account.offerwall_id)
    assert secret.startswith("qw_ps_") and endpoints.signing_secrets(box, wall) == (secret,)
    assert wall.signing_secret_shown_at is not None
    with pytest.raises(endpoints.EndpointError, match="shown once already"):
        _reveal_secret(engine, box, account, PASSWORD)
    # A rotation shows the next one; the reveal stays closed.
    with write_session(engine) as session:
        wall = offerwalls.get_offerwall(session=session, ref=account.offerwall_id)
        rotated = endpoints.rotate_signing_secret(
            session=session, box=box, offerwall=wall, overlap="1h"
        )
    assert endpoints.signing_secrets(box, _wall(engine, account.offerwall_id)) == (
        rotated,
        secret,
    )
    with pytest.raises(endpoints.EndpointError):
        _reveal_secret(engine, box, account, PASSWORD)


def test_a_wrong_password_shows_no_secret_and_counts_like_a_sign_in(engine, box):
    account = _publisher(engine, box)
    for _ in range(MAX_FAILURES):
        with pytest.raises(AccountError) as refused:
            _reveal_secret(engine, box, account, "not the password")
        assert refused.value.field == "password"
    with pytest.raises(LoginThrottled):
        _reveal_secret(engine, box, account, PASSWORD)
    # Nothing was shown: the secret is still there to reveal once the limit ends.
    assert _wall(engine, account.offerwall_id).signing_secret_shown_at is None


def test_only_the_offerwalls_own_publisher_or_staff_see_its_secret(engine, box):
    mine = _publisher(engine, box)
    theirs = _publisher(engine, box, email="other@example.com", company="Other")
    with pytest.raises(Forbidden):
        _reveal_secret(engine, box, mine, PASSWORD, requested=theirs.offerwall_id)
    assert _wall(engine, theirs.offerwall_id).signing_secret_shown_at is None
    signup(engine, email="wait@example.com", company="Waiting Wall")
    signed = sign_in(engine=engine, box=box, email="wait@example.com", password=PASSWORD)
    waiting = account_for(engine=engine, token=signed.token)
    with pytest.raises(NotApproved):
        _reveal_secret(engine, box, waiting, PASSWORD)


# --- health and resume --------------------------------------------------------------


def test_a_healthy_endpoint_has_nothing_to_say(engine, box):
    wall = make_paying_offerwall(engine, box)
    assert _health(engine, wall.id) == HealthLine("", "", 0, 0, [])


def test_failures_then_a_pause_show_what_waits_and_the_last_errors(
    engine, box, mission_id, settings, pausing
):
    with running_receiver() as broken:
        broken.statuses = [500] * 20
        wall = make_paying_offerwall(
            engine, box, name="Broken", postback_url=broken.url + "/pb?tx={transaction_id}"
        )
        make_conversion(engine, mission_id=mission_id, offerwall=wall, uid="first")
        # Failing, not yet paused: the count and the errors, nothing said to wait.
        _deliver(engine, box, settings.model_copy(update={"postback_allow_private": True}))
        failing = _health(engine, wall.id)
        assert (failing.paused_since, failing.failures, failing.waiting) == ("", 1, 0)
        assert failing.failing_since.endswith(" UTC")
        assert [(e.answer, e.detail) for e in failing.errors] == [("HTTP 500", "try again")]

        make_conversion(engine, mission_id=mission_id, offerwall=wall, uid="second")
        _deliver(engine, box, pausing)
    paused = _health(engine, wall.id)
    assert paused.paused_since.endswith(" UTC") and paused.failures == 2
    assert paused.waiting == 2  # both are queued; none was dropped
    assert [e.answer for e in paused.errors] == ["HTTP 500", "HTTP 500"]
    assert paused.errors[0].at >= paused.errors[1].at  # newest first


def test_a_postback_that_ran_out_of_attempts_while_failing_waits_too(
    engine, box, mission_id, pausing
):
    wall = make_paying_offerwall(engine, box, postback_url="http://127.0.0.1:9/pb")
    ids = [
        make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=f"p{i}")
        for i in range(2)
    ]
    _deliver(engine, box, pausing)
    with write_session(engine) as session:
        ran_out = session.get(Postback, ids[0])
        assert ran_out is not None
        ran_out.status = PostbackStatus.FAILED
    health = _health(engine, wall.id)
    assert health.waiting == 2 and health.errors[0].answer == "No answer"


def test_a_resume_sends_what_waited_to_the_fixed_url_once(engine, box, mission_id, pausing):
    with running_receiver() as broken, running_receiver() as fixed:
        broken.statuses = [500] * 20
        wall = make_paying_offerwall(
            engine, box, name="Broken", postback_url=broken.url + "/pb?tx={transaction_id}"
        )
        ids = [
            make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=f"p{i}")
            for i in range(3)
        ]
        _deliver(engine, box, pausing)
        assert _wall(engine, wall.id).deliveries_paused_at is not None
        assert len(broken.requests) == 3
        with write_session(engine) as session:
            paused = offerwalls.get_offerwall(session=session, ref=wall.id)
            offerwalls.set_postback_url(
                session=session,
                offerwall=paused,
                url=fixed.url + "/ok?tx={transaction_id}",
            )
            released, notice = endpoints.resume(session=session, offerwall=paused, settings=pausing)
        assert (released, notice.event) == (3, "endpoint.resumed")
        make_due(engine)  # the release is spread at POSTBACK_RESUME_RATE a second
        _deliver(engine, box, pausing)
        assert len(broken.requests) == 3  # nothing more to the URL that failed
    assert sorted(r.split("?")[0] for r in fixed.requests) == ["/ok"] * 3
    assert len(set(fixed.requests)) == 3  # each postback once
    with new_session(engine) as session:
        assert {session.get(Postback, i).status for i in ids} == {PostbackStatus.DELIVERED}
    assert _health(engine, wall.id) == HealthLine("", "", 0, 0, [])
