"""Postback delivery against a real local HTTP receiver (docs/contract.md#postbacks)."""

from __future__ import annotations

import hashlib
import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from api.core.db import build_engine, new_session, write_session
from api.services import offerwalls, postbacks
from models import Conversion, Postback, PostbackAttempt
from models.types import utcnow
from tests.api.test_missions import KILLS, at, start
from tests.factories import make_mission
from tests.receiver import running_receiver

TEMPLATE = (
    "{base}/pb?tx={transaction_id}&uid={uid}&mission={mission_id}&payout={payout}"
    "&usd={payout_usd}&cur={currency}&ts={timestamp}&sub={platform_sub1}&h={hash_key}"
)


@pytest.fixture
def pb_settings(api_settings):
    return api_settings.model_copy(
        update={
            "postback_allow_private": True,
            "postback_total_timeout": 1.5,
            "postback_connect_timeout": 1.0,
            "postback_lease_seconds": 30,
        }
    )


def _configure(engine, wall, template: str) -> None:
    with write_session(engine) as session:
        ow = offerwalls.get_offerwall(session=session, ref=wall[0].id)
        offerwalls.set_postback_url(session=session, offerwall=ow, url=template)
        offerwalls.set_currency(
            session=session, offerwall=ow, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )


def _convert(client, signed, game, wall, engine, user="p1") -> None:
    mission = make_mission(engine, game.game_id, **KILLS) if user == "p1" else None
    mission_id = mission.id if mission else _mission_id(engine)
    start(client, signed, wall, mission_id, user)
    signed.events({"userId": user, "event": "GAME_END", "time": at(1), "traits": {"kills": 11}})


def _mission_id(engine) -> str:
    from models import Mission

    with new_session(engine) as session:
        return session.exec(select(Mission.id)).first()


def _postbacks(engine) -> list[Postback]:
    with new_session(engine) as session:
        return list(session.exec(select(Postback).order_by(Postback.id)))


def _attempts(engine) -> list[PostbackAttempt]:
    with new_session(engine) as session:
        return list(session.exec(select(PostbackAttempt).order_by(PostbackAttempt.id)))


def _run(engine, box, settings) -> int:
    dispatcher = postbacks.Dispatcher(engine=engine, box=box, settings=settings, threads=4)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool, postbacks.http_client(settings) as http:
        return dispatcher.run_once(pool, http)


def _make_due(engine) -> None:
    with write_session(engine) as session:
        session.execute(
            sa.update(Postback.__table__).values(next_attempt_at=utcnow() - timedelta(seconds=1))
        )


def test_a_conversion_is_posted_back_with_every_value_and_a_valid_hash(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        [postback] = _postbacks(engine)
        assert postback.status == "pending" and postback.url is None
        assert _run(engine, box, pb_settings) == 1
    [query] = receiver.queries()
    values = dict(query)
    with new_session(engine) as session:
        conversion = session.exec(select(Conversion)).one()
    assert values["tx"] == conversion.transaction_id
    assert (values["uid"], values["payout"], values["usd"], values["cur"]) == (
        "pub-p1",
        "150",
        "1.5",
        "GEM",
    )
    assert values["ts"] == str(int(conversion.created_at.timestamp()))
    # The receiver recomputes the hash as documented.
    pairs = sorted((k, v) for k, v in query if k != "h")
    expected = hashlib.sha1(
        ("&".join(f"{k}={v}" for k, v in pairs) + "&" + wall[1]).encode()
    ).hexdigest()
    assert values["h"] == expected
    [postback] = _postbacks(engine)
    assert postback.status == "delivered" and postback.attempts == 1 and postback.url
    [attempt] = _attempts(engine)
    assert attempt.status_code == 200 and attempt.body_excerpt == "ok" and attempt.error is None


def test_500_then_200_is_delivered_on_the_retry(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        receiver.statuses = [500]
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        _run(engine, box, pb_settings)
        [postback] = _postbacks(engine)
        assert postback.status == "pending" and postback.attempts == 1
        wait = (postback.next_attempt_at - utcnow()).total_seconds()
        assert 3 < wait <= 5  # the first retry comes after 5 s
        assert _run(engine, box, pb_settings) == 0  # not due yet
        _make_due(engine)
        _run(engine, box, pb_settings)
    assert len(receiver.requests) == 2 and receiver.requests[0] == receiver.requests[1]
    assert [a.status_code for a in _attempts(engine)] == [500, 200]
    assert _postbacks(engine)[0].status == "delivered"


def test_receiver_down_then_up(client, signed, game, wall, engine, box, pb_settings):
    from tests.live import free_port

    port = free_port()
    _configure(engine, wall, TEMPLATE.replace("{base}", f"http://127.0.0.1:{port}"))
    _convert(client, signed, game, wall, engine)
    _run(engine, box, pb_settings)
    [down] = _attempts(engine)
    assert down.status_code is None and "ConnectError" in down.error
    _make_due(engine)
    with running_receiver(port) as receiver:
        _run(engine, box, pb_settings)
    assert len(receiver.requests) == 1
    assert _postbacks(engine)[0].status == "delivered"


def test_a_hanging_receiver_is_a_failed_attempt_at_the_timeout(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        receiver.hang_seconds = 3
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        _run(engine, box, pb_settings)
    [attempt] = _attempts(engine)
    assert attempt.status_code is None and attempt.error.startswith("timed out")
    assert 1400 <= attempt.duration_ms < 3000
    assert _postbacks(engine)[0].status == "pending"


def test_loopback_target_is_refused_unless_allowed(
    client, signed, game, wall, engine, box, pb_settings
):
    strict = pb_settings.model_copy(update={"postback_allow_private": False})
    with running_receiver() as receiver:
        _configure(
            engine, wall, TEMPLATE.replace("{base}", receiver.url.replace("127.0.0.1", "localhost"))
        )
        _convert(client, signed, game, wall, engine)
        _run(engine, box, strict)
        assert receiver.requests == []
        [attempt] = _attempts(engine)
        assert "not a public address" in attempt.error
        _make_due(engine)
        _run(engine, box, pb_settings)
        assert len(receiver.requests) == 1


def test_only_http_and_https(engine):
    assert postbacks.target_problem("ftp://example.com/x", allow_private=True)
    assert postbacks.target_problem("file:///etc/passwd", allow_private=True)
    assert postbacks.target_problem("http://10.0.0.1/pb", allow_private=False)
    assert postbacks.target_problem("http://169.254.169.254/latest", allow_private=False)
    assert postbacks.target_problem("http://[::1]:8000/", allow_private=False)


def test_a_dead_dispatchers_lease_expires_and_another_delivers(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        # A dispatcher claims it and dies before sending: the lease keeps others away...
        assert len(postbacks.claim(engine, limit=10, lease_seconds=1)) == 1
        assert _run(engine, box, pb_settings) == 0
        # ...until it expires.
        with write_session(engine) as session:
            session.execute(
                sa.update(Postback.__table__).values(lease_until=utcnow() - timedelta(seconds=1))
            )
        assert _run(engine, box, pb_settings) == 1
    assert len(receiver.requests) == 1


def test_after_the_last_retry_it_fails_and_a_resend_tries_again(
    client, signed, game, wall, engine, box, pb_settings
):
    with running_receiver() as receiver:
        receiver.statuses = [503] * postbacks.MAX_ATTEMPTS
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        for _ in range(postbacks.MAX_ATTEMPTS):
            _make_due(engine)
            _run(engine, box, pb_settings)
        [postback] = _postbacks(engine)
        assert postback.status == "failed" and postback.attempts == postbacks.MAX_ATTEMPTS
        postbacks.resend(engine, postback.id)
        _run(engine, box, pb_settings)
    assert _postbacks(engine)[0].status == "delivered"
    assert len(_attempts(engine)) == postbacks.MAX_ATTEMPTS + 1


def test_no_postback_url_fails_with_a_reason(client, signed, game, wall, engine, box, pb_settings):
    _convert(client, signed, game, wall, engine)
    _run(engine, box, pb_settings)
    [attempt] = _attempts(engine)
    assert attempt.error == "the offerwall has no postback URL"
    assert _postbacks(engine)[0].status == "failed"


def test_three_dispatchers_deliver_1000_postbacks_exactly_once(
    client, signed, game, wall, engine, box, pb_settings, db_url
):
    with running_receiver() as receiver:
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        with write_session(engine) as session:
            first = session.exec(select(Conversion)).one()
            rows = [
                {
                    k: getattr(first, k)
                    for k in (
                        "progress_id",
                        "mission_id",
                        "quest_id",
                        "platform_user_id",
                        "offerwall_id",
                        "click_id",
                        "payout_micros",
                        "created_at",
                    )
                }
                | {"transaction_id": f"tx-{i:04d}", "sequence": i + 2}
                for i in range(999)
            ]
            session.execute(sa.insert(Conversion.__table__), rows)
            ids = session.exec(select(Conversion.id).where(Conversion.id != first.id)).all()
            session.execute(
                sa.insert(Postback.__table__),
                [
                    {
                        "conversion_id": cid,
                        "offerwall_id": wall[0].id,
                        "status": "pending",
                        "attempts": 0,
                        "next_attempt_at": utcnow(),
                        "created_at": utcnow(),
                    }
                    for cid in ids
                ],
            )
        # Three dispatchers, each with its own engine (as separate processes would be).
        engines = [build_engine(db_url) for _ in range(3)]
        dispatchers = [
            postbacks.Dispatcher(
                engine=e, box=box, settings=pb_settings, threads=8, batch=25, idle_wait=0.05
            )
            for e in engines
        ]
        threads = [threading.Thread(target=d.run) for d in dispatchers]
        for t in threads:
            t.start()
        import time

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with new_session(engine) as session:
                left = session.execute(
                    sa.select(sa.func.count())
                    .select_from(Postback.__table__)
                    .where(Postback.__table__.c.status != "delivered")
                ).scalar_one()
            if left == 0:
                break
            time.sleep(0.2)
        for d in dispatchers:
            d.stop()
        for t in threads:
            t.join(timeout=30)
        for e in engines:
            e.dispose()
    transaction_ids = [dict(q)["tx"] for q in receiver.queries()]
    assert len(transaction_ids) == 1000
    assert len(set(transaction_ids)) == 1000
    states = {(p.status, p.attempts) for p in _postbacks(engine)}
    assert states == {("delivered", 1)}


def test_a_worker_killed_mid_delivery_is_replaced_after_its_lease(
    client, signed, game, wall, engine, box, db_url, tmp_path
):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.live import ROOT

    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SECRET_KEY": "test-master-key-not-for-production",
        "QUESTWALL_DATA_DIR": str(tmp_path / "data"),
        "POSTBACK_ALLOW_PRIVATE": "true",
        "POSTBACK_LEASE_SECONDS": "3",
    }

    def worker() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "api.cli", "worker", "--threads", "2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    with running_receiver() as receiver:
        receiver.hang_seconds = 8  # the first delivery is still in flight when its worker dies
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        first = worker()
        deadline = time.monotonic() + 30
        while not receiver.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.requests, "the first worker never sent the postback"
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        receiver.hang_seconds = 0
        assert _postbacks(engine)[0].status == "pending"  # nothing was recorded
        second = worker()
        try:
            deadline = time.monotonic() + 30
            while _postbacks(engine)[0].status != "delivered" and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            second.terminate()
            second.wait(timeout=20)
    [postback] = _postbacks(engine)
    assert postback.status == "delivered"
    # At least once: the receiver saw the same transaction twice and dedupes on it.
    transactions = [dict(q)["tx"] for q in receiver.queries()]
    assert len(transactions) == 2 and len(set(transactions)) == 1


def test_postbacks_leave_from_the_configured_source_address(
    client, signed, game, wall, engine, box, pb_settings
):
    # 127.0.0.2 is a local address of its own (the loopback range), so the receiver can tell.
    from_source = pb_settings.model_copy(update={"postback_source_address": "127.0.0.2"})
    with running_receiver() as receiver:
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        _run(engine, box, from_source)
    assert receiver.clients == ["127.0.0.2"]


def _add_postbacks(engine, offerwall_id: str, count: int, *, due_ago: float) -> list[int]:
    """`count` more conversions like the first one, each with a postback for the offerwall,
    due `due_ago` seconds ago."""
    table = Conversion.__table__
    with write_session(engine) as session:
        first = session.exec(select(Conversion).order_by(Conversion.id)).first()
        start_at = session.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
        keep = ("progress_id", "mission_id", "quest_id", "platform_user_id", "click_id")
        keep += ("offerwall_id", "payout_micros", "created_at")
        ids = []
        for i in range(count):
            n = start_at + i + 1
            row = {k: getattr(first, k) for k in keep}
            row |= {"transaction_id": f"tx-{offerwall_id[:6]}-{n}", "sequence": n + 1}
            conversion_id = session.execute(
                sa.insert(table).returning(table.c.id), [row]
            ).scalar_one()
            ids.append(
                session.execute(
                    sa.insert(Postback.__table__).returning(Postback.__table__.c.id),
                    [
                        {
                            "conversion_id": conversion_id,
                            "offerwall_id": offerwall_id,
                            "status": "pending",
                            "attempts": 0,
                            "next_attempt_at": utcnow() - timedelta(seconds=due_ago),
                            "created_at": utcnow(),
                        }
                    ],
                ).scalar_one()
            )
    return ids


def _wait_for(condition, seconds: float) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def _attempt_counts(engine, ids: list[int]) -> list[int]:
    return [p.attempts for p in _postbacks(engine) if p.id in ids]


def test_a_hanging_offerwall_does_not_hold_back_another_ones_postbacks(
    client, signed, game, wall, engine, box, pb_settings
):
    from tests.factories import make_offerwall

    settings = pb_settings.model_copy(update={"postback_total_timeout": 2.0})
    fast_wall = make_offerwall(engine, box, name="Fast wall")
    with running_receiver() as hanging, running_receiver() as fast:
        hanging.hang_seconds = 6  # longer than the 2 s timeout
        _configure(engine, wall, TEMPLATE.replace("{base}", hanging.url))
        _configure(engine, fast_wall, TEMPLATE.replace("{base}", fast.url))
        _convert(client, signed, game, wall, engine)
        # The hanging offerwall's postbacks are first in line, the fast one's behind them.
        _make_due(engine)
        slow_ids = [p.id for p in _postbacks(engine)]
        slow_ids += _add_postbacks(engine, wall[0].id, 5, due_ago=0.5)
        fast_ids = _add_postbacks(engine, fast_wall[0].id, 5, due_ago=0.1)
        dispatcher = postbacks.Dispatcher(
            engine=engine, box=box, settings=settings, threads=8, idle_wait=0.05
        )
        thread = threading.Thread(target=dispatcher.run)
        thread.start()
        try:
            # The fast offerwall's postbacks are delivered and recorded while the hanging
            # receiver still holds its requests: nothing waits for the slowest one.
            assert _wait_for(lambda: _attempt_counts(engine, fast_ids) == [1] * 5, 10)
            assert {p.status for p in _postbacks(engine) if p.id in fast_ids} == {"delivered"}
            assert _attempt_counts(engine, slow_ids) == [0] * 6
            # At most 4 requests of one offerwall at a time (POSTBACK_PER_OFFERWALL).
            assert len(hanging.requests) == 4
            # Then every hanging one times out, is recorded, and waits for its retry.
            assert _wait_for(lambda: _attempt_counts(engine, slow_ids) == [1] * 6, 20)
        finally:
            dispatcher.stop()
            thread.join(timeout=30)
    assert len(hanging.requests) == 6
    slow = [p for p in _postbacks(engine) if p.id in slow_ids]
    assert {p.status for p in slow} == {"pending"}
    assert all(p.next_attempt_at > utcnow() and p.lease_until is None for p in slow)
    errors = {a.error for a in _attempts(engine) if a.postback_id in slow_ids}
    assert errors == {"timed out: ReadTimeout"}
    assert len(fast.requests) == 5


def test_a_running_requests_lease_is_renewed_so_no_other_dispatcher_sends_it_again(
    client, signed, game, wall, engine, box, pb_settings, db_url
):
    # The lease (0.6 s) is shorter than the receiver's answer (1.5 s): without renewal a
    # second dispatcher would claim the postback while the first one's request runs.
    settings = pb_settings.model_copy(
        update={"postback_lease_seconds": 0.6, "postback_total_timeout": 4.0}
    )
    with running_receiver() as receiver:
        receiver.hang_seconds = 1.5
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        engines = [build_engine(db_url) for _ in range(2)]
        dispatchers = [
            postbacks.Dispatcher(engine=e, box=box, settings=settings, threads=2, idle_wait=0.05)
            for e in engines
        ]
        threads = [threading.Thread(target=d.run) for d in dispatchers]
        for t in threads:
            t.start()
        try:
            assert _wait_for(lambda: _postbacks(engine)[0].status == "delivered", 15)
        finally:
            for d in dispatchers:
                d.stop()
            for t in threads:
                t.join(timeout=30)
            for e in engines:
                e.dispose()
    assert len(receiver.requests) == 1
    assert _postbacks(engine)[0].attempts == 1 and len(_attempts(engine)) == 1


def test_a_stopping_dispatcher_hands_back_the_postbacks_it_has_not_sent(
    client, signed, game, wall, engine, box, pb_settings
):
    settings = pb_settings.model_copy(
        update={"postback_per_offerwall": 1, "postback_total_timeout": 4.0}
    )
    with running_receiver() as receiver:
        receiver.hang_seconds = 1.0
        _configure(engine, wall, TEMPLATE.replace("{base}", receiver.url))
        _convert(client, signed, game, wall, engine)
        _make_due(engine)
        _add_postbacks(engine, wall[0].id, 2, due_ago=0.5)
        dispatcher = postbacks.Dispatcher(
            engine=engine, box=box, settings=settings, threads=4, idle_wait=0.05
        )
        thread = threading.Thread(target=dispatcher.run)
        thread.start()
        try:
            # One lane for the offerwall: the first request runs, the other two are queued.
            assert _wait_for(lambda: len(receiver.requests) == 1, 10)
        finally:
            dispatcher.stop()
            thread.join(timeout=30)
    first, *queued = _postbacks(engine)
    assert first.status == "delivered" and len(receiver.requests) == 1
    # The queued ones go back to the outbox at once, for any dispatcher to take.
    assert [(p.status, p.attempts, p.lease_until) for p in queued] == [("pending", 0, None)] * 2


def test_with_few_threads_a_hanging_offerwalls_backlog_still_leaves_room_for_others(
    client, signed, game, wall, engine, box, pb_settings
):
    from tests.factories import make_offerwall

    settings = pb_settings.model_copy(update={"postback_total_timeout": 2.0})
    other_wall = make_offerwall(engine, box, name="Other wall")
    with running_receiver() as hanging, running_receiver() as other:
        hanging.hang_seconds = 6
        _configure(engine, wall, TEMPLATE.replace("{base}", hanging.url))
        _configure(engine, other_wall, TEMPLATE.replace("{base}", other.url))
        _convert(client, signed, game, wall, engine)
        _make_due(engine)
        # More of the hanging offerwall's postbacks, first in line, than the dispatcher
        # holds at once (4 × 4 threads), and as many lanes allowed as it has threads.
        _add_postbacks(engine, wall[0].id, 19, due_ago=0.5)
        other_ids = _add_postbacks(engine, other_wall[0].id, 3, due_ago=0.1)
        dispatcher = postbacks.Dispatcher(
            engine=engine, box=box, settings=settings, threads=4, idle_wait=0.05
        )
        thread = threading.Thread(target=dispatcher.run)
        thread.start()
        try:
            assert _wait_for(lambda: _attempt_counts(engine, other_ids) == [1] * 3, 10)
            # Delivered while the hanging offerwall's first requests still run, on 3 threads.
            assert len(hanging.requests) == 3 and len(_attempts(engine)) == 3
        finally:
            dispatcher.stop()
            thread.join(timeout=30)
    assert len(other.requests) == 3
