"""The alert outbox (`api/postbacks/alerts.py`): ALERT_WEBHOOK_URL's notices are stored with
the pause or resume that made them, then posted to a real local receiver, retried after
their pauses when it fails, and reached only through the postbacks' egress checks."""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.config import Settings
from api.core.db import new_session, write_session
from api.postbacks import alerts
from api.postbacks import endpoint as endpoints
from api.postbacks.alerts import RETRY_DELAYS, AlertSender
from api.publishers import offerwalls
from models import AlertMessage, MailStatus, Offerwall
from models.types import utcnow
from tests.factories import make_offerwall
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
