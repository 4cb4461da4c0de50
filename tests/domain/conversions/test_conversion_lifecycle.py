"""After the first postback: reversals reach the publisher after their conversion, every
postback is signed, a 410 is final, and an endpoint that keeps failing pauses and resumes
without losing a postback (SQLite and PostgreSQL, real deliveries to a local receiver)."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.conversions import ledger as conversions
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.postbacks import AlertSender
from api.postbacks import endpoint as endpoints
from api.postbacks import outbox as postbacks
from api.postbacks.signature import verify
from api.publishers import offerwalls
from models import Conversion, MailMessage, Offerwall, PostbackKind, PostbackStatus, Role
from models.types import utcnow
from tests.factories import (
    make_conversion,
    make_game,
    make_mission,
    make_paying_offerwall,
    make_user,
)
from tests.outbox import make_due, postback_rows, run_once
from tests.receiver import Receiver, running_receiver

TEMPLATE = "/pb?tx={transaction_id}&status={status}&why={reason}&amount={payout}&h={hash_key}"


@pytest.fixture
def private_ok(settings: Settings) -> Settings:
    return settings.model_copy(update={"postback_allow_private": True})


@pytest.fixture
def receiver():
    with running_receiver() as running:
        yield running


def _wall(engine: Engine, box: SecretBox, url: str | None) -> Offerwall:
    return make_paying_offerwall(engine, box, postback_url=url)


def _conversions(engine: Engine, box: SecretBox, wall: Offerwall, count: int = 1) -> list[str]:
    """`count` more conversions of a new mission through the offerwall; the transaction
    ids of every conversion so far, oldest first."""
    mission = make_mission(engine, make_game(engine, box).game_id)
    for n in range(count):
        make_conversion(engine, mission_id=mission.id, offerwall=wall, uid=f"player-{n}")
    with new_session(engine) as session:
        return list(
            session.scalars(
                sa.select(Conversion.transaction_id).order_by(Conversion.id)  # type: ignore[arg-type]
            )
        )


def _reverse(engine: Engine, transaction_id: str, reason: str = "chargeback") -> None:
    with write_session(engine) as session:
        conversions.reverse(
            session=session,
            transaction_id=transaction_id,
            reason=reason,
            actor="staff@example.com",
            studio_id=None,
        )


def _queries(receiver: Receiver) -> list[dict[str, str]]:
    return [dict(pairs) for pairs in receiver.queries()]


def _deliver_all(engine: Engine, box: SecretBox, settings: Settings, rounds: int = 6) -> None:
    for _ in range(rounds):
        make_due(engine)
        if run_once(engine, box, settings) == 0:
            return


def test_a_reversal_sends_one_postback_with_status_reversed(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    [tx] = _conversions(engine, box, wall)
    _deliver_all(engine, box, private_ok)
    _reverse(engine, tx, reason="refunded purchase")
    with pytest.raises(conversions.ConversionError, match="reversed"):
        _reverse(engine, tx)  # a second reversal is refused
    _deliver_all(engine, box, private_ok)

    first, second = _queries(receiver)
    assert (first["tx"], first["status"], first["why"]) == (tx, "approved", "")
    assert (second["tx"], second["status"], second["why"]) == (tx, "reversed", "refunded purchase")
    assert second["amount"] == first["amount"] == "150"  # positive, in the wall's Gems
    kinds = sorted(p.kind for p in postback_rows(engine))
    assert kinds == [PostbackKind.CONVERSION, PostbackKind.REVERSAL]


def test_a_reversal_waits_for_its_conversions_first_delivery(engine, box, private_ok, receiver):
    """Reversed while the approval is still being retried: the publisher gets the approval
    first, then the reversal, never the other way round."""
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    [tx] = _conversions(engine, box, wall)
    receiver.statuses = [503]
    assert run_once(engine, box, private_ok) == 1  # the approval fails once
    _reverse(engine, tx)
    make_due(engine)
    # Both are due; only the approval may go.
    assert run_once(engine, box, private_ok) == 1
    assert run_once(engine, box, private_ok) == 1
    statuses = [q["status"] for q in _queries(receiver)]
    assert statuses == ["approved", "approved", "reversed"]
    assert {p.status for p in postback_rows(engine)} == {PostbackStatus.DELIVERED}


def test_a_reversal_made_while_the_approval_is_in_flight_waits(engine, box, private_ok, receiver):
    """The approval is claimed (its request running) when the reversal is made: no
    dispatcher may take the reversal until the approval's attempt is recorded."""
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    [tx] = _conversions(engine, box, wall)
    in_flight = postbacks.claim(engine, limit=10, lease_seconds=60)
    assert len(in_flight) == 1
    _reverse(engine, tx)
    assert postbacks.claim(engine, limit=10, lease_seconds=60) == {}  # another dispatcher
    postbacks.release_leases(engine, list(in_flight))
    assert run_once(engine, box, private_ok) == 1
    assert run_once(engine, box, private_ok) == 1
    assert [q["status"] for q in _queries(receiver)] == ["approved", "reversed"]


def test_a_template_without_status_still_says_reversed(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + "/pb?tx={transaction_id}&h={hash_key}")
    [tx] = _conversions(engine, box, wall)
    _reverse(engine, tx)
    _deliver_all(engine, box, private_ok)
    approval, reversal = _queries(receiver)
    assert "status" not in approval  # the approval's URL is exactly as written
    assert reversal["status"] == "reversed" and reversal["tx"] == tx


def test_a_reversal_goes_to_the_reversal_url_when_set(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + "/pb?tx={transaction_id}")
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        offerwalls.set_reversal_url(
            session=session,
            offerwall=offerwall,
            url=receiver.url + "/rev?tx={transaction_id}&why={reason}",
        )
    [tx] = _conversions(engine, box, wall)
    _reverse(engine, tx, reason="fraud")
    _deliver_all(engine, box, private_ok)
    paths = [urlsplit(r).path for r in receiver.requests]
    assert paths == ["/pb", "/rev"]
    reversal = _queries(receiver)[1]
    assert reversal.pop("hash_key")  # appended, as to any template without {hash_key}
    assert reversal == {"tx": tx, "why": "fraud", "status": "reversed"}


def _secret(engine: Engine, box: SecretBox, wall: Offerwall) -> str:
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        return endpoints.reveal_signing_secret(session=session, box=box, offerwall=offerwall)


def test_every_postback_is_signed_with_the_offerwalls_secret(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    secret = _secret(engine, box, wall)
    [tx] = _conversions(engine, box, wall)
    _reverse(engine, tx)
    _deliver_all(engine, box, private_ok)
    assert len(receiver.requests) == 2
    for path, header in zip(receiver.requests, receiver.signatures, strict=True):
        url = receiver.url + path
        assert verify(header, url, secret)
        assert not verify(header, url.replace("status=", "status=x"), secret)  # tampered
        assert not verify(header, url, "qw_ps_another-secret")
        assert not verify(header, url, secret, now=time.time() + 301)  # too old
    with pytest.raises(endpoints.EndpointError, match="shown once"):
        _secret(engine, box, wall)


def test_a_rotated_secret_signs_beside_the_new_one_during_the_overlap(
    engine, box, private_ok, receiver
):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    old = _secret(engine, box, wall)
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        new = endpoints.rotate_signing_secret(
            session=session, box=box, offerwall=offerwall, overlap="1h"
        )
    _conversions(engine, box, wall)
    _deliver_all(engine, box, private_ok)
    [header] = receiver.signatures
    assert header.count("v1=") == 2
    url = receiver.url + receiver.requests[0]
    assert verify(header, url, old) and verify(header, url, new)

    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        newest = endpoints.rotate_signing_secret(
            session=session, box=box, offerwall=offerwall, overlap="none"
        )
    _conversions(engine, box, wall)
    _deliver_all(engine, box, private_ok)
    header, url = receiver.signatures[-1], receiver.url + receiver.requests[-1]
    assert header.count("v1=") == 1 and verify(header, url, newest) and not verify(header, url, new)


def test_a_410_answer_is_not_retried(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    _conversions(engine, box, wall)
    receiver.statuses = [410]
    _deliver_all(engine, box, private_ok)
    [postback] = postback_rows(engine)
    assert (postback.status, postback.attempts, len(receiver.requests)) == (
        PostbackStatus.FAILED,
        1,
        1,
    )


@pytest.fixture
def pausing(private_ok: Settings) -> Settings:
    """Pause after 3 failures in a row, however short the time they span."""
    return private_ok.model_copy(
        update={
            "postback_pause_after_seconds": 0,
            "postback_pause_min_failures": 3,
            "postback_resume_rate": 1000,
        }
    )


def _paused_at(engine: Engine, wall: Offerwall):
    with new_session(engine) as session:
        offerwall = session.get(Offerwall, wall.id)
        assert offerwall is not None
        return offerwall.deliveries_paused_at


def test_a_failing_endpoint_pauses_keeps_its_queue_and_resumes_in_order(
    engine, box, pausing, receiver
):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    make_user(engine, "pub@gemwall.example", role=Role.PUBLISHER, offerwall_id=wall.id)
    with running_receiver() as alerts:
        settings = pausing.model_copy(update={"alert_webhook_url": alerts.url + "/alert"})
        first = _conversions(engine, box, wall, count=1)
        receiver.statuses = [500, 500, 500]
        for _ in range(3):
            make_due(engine)
            assert run_once(engine, box, settings) == 1
        assert _paused_at(engine, wall) is not None
        # Paused: new postbacks (a reversal too) queue, nothing is claimed or dropped.
        more = _conversions(engine, box, wall, count=2)[1:]
        _reverse(engine, first[0])
        make_due(engine)
        assert run_once(engine, box, settings) == 0
        assert len(receiver.requests) == 3
        # The pause's alert was queued with it, and goes out from the alert outbox.
        alert_sender = AlertSender(engine=engine, settings=settings)
        assert alert_sender.run_once() == 1
        notice = json.loads(alerts.posts[0])
        assert notice["event"] == "endpoint.paused" and notice["consecutiveFailures"] == 3
        with new_session(engine) as session:
            [told] = session.scalars(sa.select(MailMessage)).all()
        assert told.to_address == "pub@gemwall.example" and "paused" in told.subject
        assert "HTTP 500" in told.body and "/publisher/postback" in told.body

        with write_session(engine) as session:
            offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
            assert [e.status_code for e in endpoints.last_errors(session, wall.id)] == [500] * 3
            assert [p.name for p in endpoints.paused_endpoints(session)] == [wall.name]
            queued, resumed = endpoints.resume(
                session=session, offerwall=offerwall, settings=settings
            )
        endpoints.announce([resumed])
        assert queued == 4  # the first conversion, two more, and the reversal
        # Released in order, one every 1/POSTBACK_RESUME_RATE s; one lane keeps that order.
        _wait_for(
            lambda: run_once(engine, box, settings, threads=2) == 0 and len(receiver.requests) == 7
        )
        assert alert_sender.run_once() == 1 and len(alerts.posts) == 2
        assert json.loads(alerts.posts[1])["event"] == "endpoint.resumed"

    delivered = [(q["tx"], q["status"]) for q in _queries(receiver)[3:]]
    assert delivered == [
        (first[0], "approved"),
        (more[0], "approved"),
        (more[1], "approved"),
        (first[0], "reversed"),
    ]
    assert {p.status for p in postback_rows(engine)} == {PostbackStatus.DELIVERED}
    assert _paused_at(engine, wall) is None
    with pytest.raises(endpoints.EndpointError), write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        endpoints.resume(session=session, offerwall=offerwall, settings=settings)


def test_a_delivery_resets_the_count_and_short_outages_do_not_pause(
    engine, box, private_ok, receiver
):
    """The default threshold is a day of failures: two failures and a success leave the
    endpoint flowing and its count at zero."""
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    _conversions(engine, box, wall)
    receiver.statuses = [500, 500]
    _deliver_all(engine, box, private_ok)
    with new_session(engine) as session:
        offerwall = session.get(Offerwall, wall.id)
        assert offerwall is not None
        assert (offerwall.consecutive_failures, offerwall.failing_since) == (0, None)
        assert offerwall.deliveries_paused_at is None


def test_a_long_outage_pauses_after_the_threshold(engine, box, private_ok, receiver):
    wall = _wall(engine, box, receiver.url + TEMPLATE)
    _conversions(engine, box, wall)
    receiver.statuses = [500] * 5
    for _ in range(3):
        make_due(engine)
        run_once(engine, box, private_ok)
    assert _paused_at(engine, wall) is None  # three failures, but not for a day yet
    with write_session(engine) as session:
        session.execute(
            sa.update(Offerwall)
            .where(Offerwall.id == wall.id)  # type: ignore[arg-type]
            .values(failing_since=utcnow() - timedelta(hours=24, seconds=1))
        )
    make_due(engine)
    run_once(engine, box, private_ok)
    assert _paused_at(engine, wall) is not None


def _wait_for(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_only_an_approved_conversion_is_reversed(engine, box, private_ok):
    wall = _wall(engine, box, None)
    [tx] = _conversions(engine, box, wall)
    with write_session(engine) as session:
        session.execute(
            sa.update(Conversion).values(status="pending")  # held for review
        )
    with pytest.raises(conversions.ConversionError, match="pending"):
        _reverse(engine, tx)
    with (
        pytest.raises(conversions.ConversionError, match="reason"),
        write_session(engine) as session,
    ):
        conversions.reverse(
            session=session, transaction_id=tx, reason=" x ", actor="a", studio_id=None
        )
    with pytest.raises(conversions.ConversionError, match="No such conversion"):
        _reverse(engine, "not-a-transaction")
    assert [p.kind for p in postback_rows(engine)] == [PostbackKind.CONVERSION]


def test_the_signature_covers_the_url_as_the_receiver_sees_it(engine, box, private_ok, receiver):
    """Credentials and a fragment in the template never reach the receiver, so they are
    not signed either: what the receiver rebuilds from its Host and request verifies."""
    with_credentials = receiver.url.replace("http://", "http://user:pass@")
    wall = _wall(engine, box, with_credentials + "/pb?tx={transaction_id}#part")
    secret = _secret(engine, box, wall)
    _conversions(engine, box, wall)
    _deliver_all(engine, box, private_ok)
    [path], [host], [header] = receiver.requests, receiver.hosts, receiver.signatures
    assert verify(header, f"http://{host}{path}", secret)
