"""The alert outbox (`api/postbacks/alerts.py`): ALERT_WEBHOOK_URL's notices are stored with
the pause or resume that made them, then posted to a real local receiver, retried after
their pauses when it fails, and reached only through the postbacks' egress checks; every
attempt is kept with its answer, staff see the failed and failing ones and send one again
(staff only), and old ones go with their attempts."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Forbidden
from api.core.config import Settings
from api.core.db import new_session, write_session
from api.core.refusals import SignedOut
from api.postbacks import alerts
from api.postbacks import endpoint as endpoints
from api.postbacks.alerts import RETRY_DELAYS, AlertSender
from api.publishers import offerwalls
from models import AlertAttempt, AlertMessage, MailStatus, Offerwall, Role
from models.types import utcnow
from tests.factories import make_account, make_offerwall
from tests.receiver import running_receiver


def _alerting(settings: Settings, url: str, *, allow_private: bool = True) -> Settings:
    """Pause at the first failure; alerts to `url`."""
    return settings.model_copy(
        update={
            "alert_webhook_url": url,
            "postback_allow_private": allow_private,
            "postback_pause_after_seconds": 0,
            "postback_pause_min_failures": 1,
        }
    )


def _pause(engine: Engine, settings: Settings, wall: Offerwall) -> endpoints.Notice:
    with write_session(engine) as session:
        failed = endpoints.Outcome(wall.id, utcnow(), True, "HTTP 500")
        [notice] = endpoints.record_outcomes(session, [failed], settings, utcnow())
    return notice


def _alerts(engine: Engine) -> list[AlertMessage]:
    with new_session(engine) as session:
        return list(session.scalars(sa.select(AlertMessage).order_by(AlertMessage.id)))


def _attempts(engine: Engine) -> list[tuple[int | None, str | None, str | None, bool]]:
    """Every attempt, first to last: (status code, answer's start, error, sent)."""
    with new_session(engine) as session:
        return [
            (a.status_code, a.body_excerpt, a.error, a.sent)
            for a in session.scalars(sa.select(AlertAttempt).order_by(AlertAttempt.id))
        ]


def test_an_alert_the_webhook_refuses_lands_once_after_its_retries(engine, box, settings):
    wall, _ = make_offerwall(engine, box, name="Flaky Wall")
    with running_receiver() as receiver:
        receiver.post_statuses = [500, 503]
        settings = _alerting(settings, receiver.url + "/alerts")
        notice = _pause(engine, settings, wall)
        sender = AlertSender(engine=engine, settings=settings)
        now = utcnow()
        assert sender.run_once(now) == 1  # 500
        assert sender.run_once(now) == 0  # it waits for its pause, not sent again at once
        now += RETRY_DELAYS[0]
        assert sender.run_once(now) == 1  # 503
        now += RETRY_DELAYS[1]
        assert sender.run_once(now) == 1  # 204: it landed
        assert sender.run_once(now + timedelta(days=1)) == 0
    assert receiver.post_answers == [500, 503, 204]
    assert [json.loads(body) for body in receiver.posts] == [notice.json()] * 3
    [alert] = _alerts(engine)
    assert (alert.status, alert.attempts, alert.last_error) == (MailStatus.SENT, 3, None)
    # Every attempt is kept with the webhook's answer.
    assert [code for code, *_ in _attempts(engine)] == [500, 503, 204]
    assert all(sent and error is None for _, _, error, sent in _attempts(engine))


def test_each_attempt_keeps_the_first_kib_of_the_answer(engine, box, settings):
    wall, _ = make_offerwall(engine, box)
    with running_receiver() as receiver:
        receiver.post_statuses = [500]
        receiver.post_replies = [b"Sorry: " + b"x" * 5000]
        settings = _alerting(settings, receiver.url + "/hook?token=s3cret")
        _pause(engine, settings, wall)
        assert AlertSender(engine=engine, settings=settings).run_once() == 1
    [(code, answer, error, sent)] = _attempts(engine)
    assert (code, error, sent) == (500, None, True)
    assert answer is not None and answer.startswith("Sorry: xx") and len(answer) == 1024
    [alert] = _alerts(engine)
    assert (alert.status, alert.last_error) == (MailStatus.QUEUED, "HTTP 500")
    assert "s3cret" not in repr(_attempts(engine))  # the URL's token is kept nowhere


def test_an_alert_is_given_up_after_its_last_attempt(engine, box, settings):
    wall, _ = make_offerwall(engine, box)
    with running_receiver() as receiver:
        receiver.post_statuses = [500] * (alerts.MAX_ATTEMPTS + 1)
        settings = _alerting(settings, receiver.url)
        _pause(engine, settings, wall)
        sender = AlertSender(engine=engine, settings=settings)
        now = utcnow()
        for delay in (timedelta(0), *RETRY_DELAYS):
            now += delay
            assert sender.run_once(now) == 1
        assert sender.run_once(now + timedelta(days=1)) == 0
    assert len(receiver.posts) == alerts.MAX_ATTEMPTS
    [alert] = _alerts(engine)
    assert (alert.status, alert.last_error) == (MailStatus.FAILED, "HTTP 500")


def test_a_private_webhook_address_is_refused_unless_allowed(engine, box, settings):
    wall, _ = make_offerwall(engine, box)
    with running_receiver() as receiver:
        settings = _alerting(settings, receiver.url, allow_private=False)
        _pause(engine, settings, wall)
        assert AlertSender(engine=engine, settings=settings).run_once() == 1
    assert receiver.posts == []  # refused at connect time: nothing was sent
    [alert] = _alerts(engine)
    assert alert.status == MailStatus.QUEUED and "not a public address" in (alert.last_error or "")
    [(code, answer, error, sent)] = _attempts(engine)
    assert (code, answer, sent) == (None, None, False) and "not a public address" in (error or "")


def test_a_resume_queues_its_alert_in_its_own_transaction(engine, box, settings):
    wall, _ = make_offerwall(engine, box)
    with running_receiver() as receiver:
        settings = _alerting(settings, receiver.url)
        _pause(engine, settings, wall)
        try:
            with write_session(engine) as session:
                paused = offerwalls.get_offerwall(session=session, ref=wall.id)
                endpoints.resume(session=session, offerwall=paused, settings=settings)
                raise RuntimeError("the resume fails after it queued its alert")
        except RuntimeError:
            pass
        assert [a.event for a in _alerts(engine)] == ["endpoint.paused"]  # rolled back
        with write_session(engine) as session:
            paused = offerwalls.get_offerwall(session=session, ref=wall.id)
            endpoints.resume(session=session, offerwall=paused, settings=settings)
        assert AlertSender(engine=engine, settings=settings).run_once() == 2
    assert [json.loads(body)["event"] for body in receiver.posts] == [
        "endpoint.paused",
        "endpoint.resumed",
    ]


def test_without_a_webhook_no_alert_is_stored(engine, box, settings):
    wall, _ = make_offerwall(engine, box)
    _pause(engine, _alerting(settings, ""), wall)
    assert _alerts(engine) == []


def _failed_alert(engine: Engine, box, settings: Settings, receiver) -> int:
    """A pause's alert that the receiver refused at every attempt: failed. Its id."""
    wall, _ = make_offerwall(engine, box, name="Broken Wall")
    receiver.post_statuses = [502] * alerts.MAX_ATTEMPTS
    receiver.post_replies = [b"bad gateway"] * alerts.MAX_ATTEMPTS
    _pause(engine, settings, wall)
    sender = AlertSender(engine=engine, settings=settings)
    now = utcnow()
    for delay in (timedelta(0), *RETRY_DELAYS):
        now += delay
        assert sender.run_once(now) == 1
    [alert] = [a for a in _alerts(engine) if a.status == MailStatus.FAILED]
    assert alert.id is not None
    return alert.id


def _failing(engine: Engine) -> tuple[list[alerts.FailingAlert], int]:
    with new_session(engine) as session:
        return alerts.failing(session=session)


def test_staff_see_failed_and_retried_alerts_with_their_attempts(engine, box, settings):
    with running_receiver() as receiver:
        settings = _alerting(settings, receiver.url)
        failed = _failed_alert(engine, box, settings, receiver)
        # Another offerwall's pause: refused once, retried later.
        other, _ = make_offerwall(engine, box, name="Flaky Wall")
        receiver.post_statuses, receiver.post_replies = [500], [b"busy"]
        _pause(engine, settings, other)
        assert AlertSender(engine=engine, settings=settings).run_once() == 1
        # A third one lands at once: not listed.
        third, _ = make_offerwall(engine, box, name="Fine Wall")
        _pause(engine, settings, third)
        assert AlertSender(engine=engine, settings=settings).run_once() == 1
    listed, count = _failing(engine)
    assert count == 2
    retried, given_up = listed  # newest first
    assert (retried.offerwall, retried.status, retried.last_error) == (
        "Flaky Wall",
        MailStatus.QUEUED,
        "HTTP 500",
    )
    assert retried.next_attempt_at is not None
    assert [(a.status_code, a.answer) for a in retried.attempts] == [(500, "busy")]
    assert (given_up.id, given_up.event, given_up.status) == (
        failed,
        "endpoint.paused",
        MailStatus.FAILED,
    )
    assert given_up.next_attempt_at is None
    assert [(a.status_code, a.answer, a.sent) for a in given_up.attempts] == [
        (502, "bad gateway", True)
    ] * alerts.MAX_ATTEMPTS
    with new_session(engine) as session:
        assert [a.id for a in alerts.failing(session=session, limit=1)[0]] == [retried.id]


def test_staff_send_a_failed_alert_again_and_it_lands(engine, box, settings):
    staff = make_account(Role.STAFF)
    with running_receiver() as receiver:
        settings = _alerting(settings, receiver.url)
        failed = _failed_alert(engine, box, settings, receiver)
        sender = AlertSender(engine=engine, settings=settings)
        assert sender.run_once(utcnow() + timedelta(days=1)) == 0  # given up: not tried
        with write_session(engine) as session:
            alerts.send_again(session=session, account=staff, alert_id=failed, now=utcnow())
        assert sender.run_once() == 1  # due now, and this time the webhook takes it
    assert receiver.post_answers == [502] * alerts.MAX_ATTEMPTS + [204]
    [alert] = _alerts(engine)
    assert (alert.status, alert.last_error) == (MailStatus.SENT, None)
    assert len(_attempts(engine)) == alerts.MAX_ATTEMPTS + 1  # every attempt kept
    assert _failing(engine) == ([], 0)
    with write_session(engine) as session, pytest.raises(alerts.AlertError, match="delivered"):
        alerts.send_again(session=session, account=staff, alert_id=failed, now=utcnow())


def test_an_alert_sent_again_that_fails_has_failed_again(engine, box, settings):
    with running_receiver() as receiver:
        settings = _alerting(settings, receiver.url)
        failed = _failed_alert(engine, box, settings, receiver)
        with write_session(engine) as session:
            alerts.send_again(
                session=session, account=make_account(Role.STAFF), alert_id=failed, now=utcnow()
            )
        receiver.post_statuses = [503]
        assert AlertSender(engine=engine, settings=settings).run_once() == 1
    [alert] = _alerts(engine)
    assert (alert.status, alert.last_error) == (MailStatus.FAILED, "HTTP 503")  # one more try


@pytest.mark.parametrize("role", [Role.PUBLISHER, Role.DESIGNER, None])
def test_only_staff_send_an_alert_again(engine, box, settings, role):
    with running_receiver() as receiver:
        failed = _failed_alert(engine, box, _alerting(settings, receiver.url), receiver)
    account = None if role is None else make_account(role)
    refused = SignedOut if role is None else Forbidden
    with write_session(engine) as session, pytest.raises(refused):
        alerts.send_again(session=session, account=account, alert_id=failed, now=utcnow())
    [alert] = _alerts(engine)
    assert alert.status == MailStatus.FAILED


def test_an_unknown_alert_or_one_being_sent_is_not_sent_again(engine, box, settings):
    staff = make_account(Role.STAFF)
    with write_session(engine) as session, pytest.raises(alerts.AlertError, match="No such"):
        alerts.send_again(session=session, account=staff, alert_id=12345, now=utcnow())
    wall, _ = make_offerwall(engine, box)
    _pause(engine, _alerting(settings, "http://127.0.0.1:9/alerts"), wall)
    [claimed] = alerts.claim(engine, utcnow())  # a sender holds it now
    with write_session(engine) as session, pytest.raises(alerts.AlertError, match="right now"):
        alerts.send_again(session=session, account=staff, alert_id=claimed.id, now=utcnow())


def test_old_alerts_go_with_their_attempts(engine, box, settings):
    with running_receiver() as receiver:
        _failed_alert(engine, box, _alerting(settings, receiver.url), receiver)
    assert len(_attempts(engine)) == alerts.MAX_ATTEMPTS
    with write_session(engine) as session:
        assert alerts.prune(session, utcnow() + alerts.KEPT_FOR + timedelta(days=1)) == 1
    assert _alerts(engine) == [] and _attempts(engine) == []
