"""Postback delivery against a real local HTTP receiver (docs/contract.md#postbacks)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import select

from api.core.db import build_engine, new_session, write_session
from api.postbacks import Dispatcher, transport
from api.postbacks import outbox as postbacks
from models import Conversion, Offerwall, Postback
from models.types import utcnow
from tests.factories import make_conversion, make_game, make_mission, make_offerwall
from tests.outbox import TEMPLATE, attempt_rows, configure, make_due, postback_rows, run_once
from tests.receiver import running_receiver


@pytest.fixture
def pb_settings(settings):
    return settings.model_copy(
        update={
            "postback_allow_private": True,
            "postback_total_timeout": 1.5,
            "postback_connect_timeout": 1.0,
            "postback_lease_seconds": 30,
        }
    )


@pytest.fixture
def wall(engine, box) -> Offerwall:
    """An approved offerwall; each test points it at its receiver."""
    return make_offerwall(engine, box)[0]


def _convert(engine, box, wall: Offerwall) -> None:
    """A conversion of a new game's mission through the offerwall, its postback queued."""
    mission = make_mission(engine, make_game(engine, box).game_id)
    make_conversion(engine, mission_id=mission.id, offerwall=wall)


def test_500_then_200_is_delivered_on_the_retry(wall, engine, box, pb_settings):
    with running_receiver() as receiver:
        receiver.statuses = [500]
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        before = utcnow()
        run_once(engine, box, pb_settings)
        after = utcnow()
        [postback] = postback_rows(engine)
        assert postback.status == "pending" and postback.attempts == 1
        # The first retry comes 5 s after the attempt, which ran between before and after
        # (however long a busy machine made that).
        attempted = postback.next_attempt_at - timedelta(seconds=5)
        assert before - timedelta(milliseconds=1) <= attempted <= after
        assert run_once(engine, box, pb_settings) == 0  # not due yet
        make_due(engine)
        run_once(engine, box, pb_settings)
    assert len(receiver.requests) == 2 and receiver.requests[0] == receiver.requests[1]
    assert [a.status_code for a in attempt_rows(engine)] == [500, 200]
    assert postback_rows(engine)[0].status == "delivered"


def test_receiver_down_then_up(wall, engine, box, pb_settings):
    from tests.live import free_port

    port = free_port()
    configure(engine, wall.id, TEMPLATE.replace("{base}", f"http://127.0.0.1:{port}"))
    _convert(engine, box, wall)
    run_once(engine, box, pb_settings)
    [down] = attempt_rows(engine)
    assert down.status_code is None and "ConnectError" in down.error
    make_due(engine)
    with running_receiver(port) as receiver:
        run_once(engine, box, pb_settings)
    assert len(receiver.requests) == 1
    assert postback_rows(engine)[0].status == "delivered"


def test_a_hanging_receiver_is_a_failed_attempt_at_the_timeout(wall, engine, box, pb_settings):
    with running_receiver() as receiver:
        receiver.hang_seconds = 3
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        run_once(engine, box, pb_settings)
    [attempt] = attempt_rows(engine)
    assert attempt.status_code is None and attempt.error.startswith("timed out")
    assert 1400 <= attempt.duration_ms < 3000
    assert postback_rows(engine)[0].status == "pending"


def test_loopback_target_is_refused_unless_allowed(wall, engine, box, pb_settings):
    strict = pb_settings.model_copy(update={"postback_allow_private": False})
    with running_receiver() as receiver:
        configure(
            engine,
            wall.id,
            TEMPLATE.replace("{base}", receiver.url.replace("127.0.0.1", "localhost")),
        )
        _convert(engine, box, wall)
        run_once(engine, box, strict)
        assert receiver.requests == []
        [attempt] = attempt_rows(engine)
        assert "not a public address" in attempt.error
        make_due(engine)
        run_once(engine, box, pb_settings)
        assert len(receiver.requests) == 1


def test_only_http_and_https(engine):
    assert transport.target_problem("ftp://example.com/x", allow_private=True)
    assert transport.target_problem("file:///etc/passwd", allow_private=True)
    assert transport.target_problem("http://10.0.0.1/pb", allow_private=False)
    assert transport.target_problem("http://169.254.169.254/latest", allow_private=False)
    assert transport.target_problem("http://[::1]:8000/", allow_private=False)


def test_a_dead_dispatchers_lease_expires_and_another_delivers(wall, engine, box, pb_settings):
    with running_receiver() as receiver:
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        # A dispatcher claims it and dies before sending: the lease keeps others away...
        assert len(postbacks.claim(engine, limit=10, lease_seconds=1)) == 1
        assert run_once(engine, box, pb_settings) == 0
        # ...until it expires.
        with write_session(engine) as session:
            session.execute(
                sa.update(Postback.__table__).values(lease_until=utcnow() - timedelta(seconds=1))
            )
        assert run_once(engine, box, pb_settings) == 1
    assert len(receiver.requests) == 1


def test_after_the_last_retry_it_fails_and_a_resend_tries_again(wall, engine, box, pb_settings):
    with running_receiver() as receiver:
        receiver.statuses = [503] * postbacks.MAX_ATTEMPTS
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        for _ in range(postbacks.MAX_ATTEMPTS):
            make_due(engine)
            run_once(engine, box, pb_settings)
        [postback] = postback_rows(engine)
        assert postback.status == "failed" and postback.attempts == postbacks.MAX_ATTEMPTS
        # The receiver is healthy again. Under load an attempt can time out before the
        # receiver answers it, leaving one of its 503s unspent for the resend.
        receiver.statuses = []
        postbacks.resend(engine, postback.id)
        run_once(engine, box, pb_settings)
    assert postback_rows(engine)[0].status == "delivered"
    assert len(attempt_rows(engine)) == postbacks.MAX_ATTEMPTS + 1


def test_no_postback_url_fails_with_a_reason(wall, engine, box, pb_settings):
    _convert(engine, box, wall)
    run_once(engine, box, pb_settings)
    [attempt] = attempt_rows(engine)
    assert attempt.error == "the offerwall has no postback URL"
    assert postback_rows(engine)[0].status == "failed"


def test_three_dispatchers_deliver_300_postbacks_exactly_once(
    wall, engine, box, pb_settings, db_url
):
    # 12 batches of 25 for three dispatchers of 8 threads: each claims several batches
    # while the others do, which is where a postback could go out twice.
    total = 300
    with running_receiver() as receiver:
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
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
                for i in range(total - 1)
            ]
            session.execute(sa.insert(Conversion.__table__), rows)
            ids = session.exec(select(Conversion.id).where(Conversion.id != first.id)).all()
            session.execute(
                sa.insert(Postback.__table__),
                [
                    {
                        "conversion_id": cid,
                        "offerwall_id": wall.id,
                        "status": "pending",
                        "attempts": 0,
                        "next_attempt_at": utcnow(),
                        "created_at": utcnow(),
                    }
                    for cid in ids
                ],
            )
        # Three dispatchers, each with its own engine (as separate processes would be).
        with _engines(db_url, 3) as engines:
            dispatchers = [
                Dispatcher(
                    engine=e, box=box, settings=pb_settings, threads=8, batch=25, idle_wait=0.05
                )
                for e in engines
            ]
            with _running(*dispatchers):
                _wait_for(lambda: _undelivered(engine) == 0, 120, every=0.2)
    transaction_ids = [dict(q)["tx"] for q in receiver.queries()]
    assert len(transaction_ids) == total
    assert len(set(transaction_ids)) == total
    states = {(p.status, p.attempts) for p in postback_rows(engine)}
    assert states == {("delivered", 1)}


def test_postbacks_leave_from_the_configured_source_address(wall, engine, box, pb_settings):
    # 127.0.0.2 is a local address of its own (the loopback range), so the receiver can tell.
    from_source = pb_settings.model_copy(update={"postback_source_address": "127.0.0.2"})
    with running_receiver() as receiver:
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        run_once(engine, box, from_source)
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


@contextmanager
def _running(*dispatchers: Dispatcher) -> Iterator[None]:
    """The dispatchers' loops, each on a thread of its own; stopped and joined on exit."""
    threads = [threading.Thread(target=d.run) for d in dispatchers]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for dispatcher in dispatchers:
            dispatcher.stop()
        for thread in threads:
            thread.join(timeout=30)


@contextmanager
def _engines(db_url: str, count: int) -> Iterator[list[Engine]]:
    """Engines of their own, as separate processes would have; disposed on exit."""
    engines = [build_engine(db_url) for _ in range(count)]
    try:
        yield engines
    finally:
        for engine in engines:
            engine.dispose()


def _undelivered(engine: Engine) -> int:
    with new_session(engine) as session:
        return session.execute(
            sa.select(sa.func.count())
            .select_from(Postback.__table__)
            .where(Postback.__table__.c.status != "delivered")
        ).scalar_one()


def _wait_for(condition, seconds: float, *, every: float = 0.02) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return condition()


def _attempt_counts(engine, ids: list[int]) -> list[int]:
    return [p.attempts for p in postback_rows(engine) if p.id in ids]


def test_a_hanging_offerwall_does_not_hold_back_another_ones_postbacks(
    wall, engine, box, pb_settings
):
    settings = pb_settings.model_copy(update={"postback_total_timeout": 2.0})
    fast_wall, _ = make_offerwall(engine, box, name="Fast wall")
    with running_receiver() as hanging, running_receiver() as fast:
        hanging.hang_seconds = 6  # longer than the 2 s timeout
        configure(engine, wall.id, TEMPLATE.replace("{base}", hanging.url))
        configure(engine, fast_wall.id, TEMPLATE.replace("{base}", fast.url))
        _convert(engine, box, wall)
        # The hanging offerwall's postbacks are first in line, the fast one's behind them.
        make_due(engine)
        slow_ids = [p.id for p in postback_rows(engine)]
        slow_ids += _add_postbacks(engine, wall.id, 5, due_ago=0.5)
        fast_ids = _add_postbacks(engine, fast_wall.id, 5, due_ago=0.1)
        dispatcher = Dispatcher(
            engine=engine, box=box, settings=settings, threads=8, idle_wait=0.05
        )
        with _running(dispatcher):
            # The fast offerwall's postbacks are delivered and recorded while the hanging
            # receiver still holds its requests: nothing waits for the slowest one.
            assert _wait_for(lambda: _attempt_counts(engine, fast_ids) == [1] * 5, 10)
            assert {p.status for p in postback_rows(engine) if p.id in fast_ids} == {"delivered"}
            assert _attempt_counts(engine, slow_ids) == [0] * 6
            # At most 4 requests of one offerwall at a time (POSTBACK_PER_OFFERWALL).
            assert len(hanging.requests) == 4
            # Then every hanging one times out, is recorded, and waits for its retry.
            assert _wait_for(lambda: _attempt_counts(engine, slow_ids) == [1] * 6, 20)
    assert len(hanging.requests) == 6
    slow = [p for p in postback_rows(engine) if p.id in slow_ids]
    assert {p.status for p in slow} == {"pending"}
    assert all(p.next_attempt_at > utcnow() and p.lease_until is None for p in slow)
    errors = {a.error for a in attempt_rows(engine) if a.postback_id in slow_ids}
    assert errors == {"timed out: ReadTimeout"}
    assert len(fast.requests) == 5


def test_a_running_requests_lease_is_renewed_so_no_other_dispatcher_sends_it_again(
    wall, engine, box, pb_settings, db_url
):
    # The lease (0.6 s) is shorter than the receiver's answer (1.5 s): without renewal a
    # second dispatcher would claim the postback while the first one's request runs.
    settings = pb_settings.model_copy(
        update={"postback_lease_seconds": 0.6, "postback_total_timeout": 4.0}
    )
    with running_receiver() as receiver:
        receiver.hang_seconds = 1.5
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        with _engines(db_url, 2) as engines:
            dispatchers = [
                Dispatcher(engine=e, box=box, settings=settings, threads=2, idle_wait=0.05)
                for e in engines
            ]
            with _running(*dispatchers):
                assert _wait_for(lambda: postback_rows(engine)[0].status == "delivered", 15)
    assert len(receiver.requests) == 1
    assert postback_rows(engine)[0].attempts == 1 and len(attempt_rows(engine)) == 1


def test_a_stopping_dispatcher_hands_back_the_postbacks_it_has_not_sent(
    wall, engine, box, pb_settings
):
    settings = pb_settings.model_copy(
        update={"postback_per_offerwall": 1, "postback_total_timeout": 4.0}
    )
    with running_receiver() as receiver:
        receiver.hang_seconds = 1.0
        configure(engine, wall.id, TEMPLATE.replace("{base}", receiver.url))
        _convert(engine, box, wall)
        make_due(engine)
        _add_postbacks(engine, wall.id, 2, due_ago=0.5)
        dispatcher = Dispatcher(
            engine=engine, box=box, settings=settings, threads=4, idle_wait=0.05
        )
        with _running(dispatcher):
            # One lane for the offerwall: the first request runs, the other two are queued.
            assert _wait_for(lambda: len(receiver.requests) == 1, 10)
    first, *queued = postback_rows(engine)
    assert first.status == "delivered" and len(receiver.requests) == 1
    # The queued ones go back to the outbox at once, for any dispatcher to take.
    assert [(p.status, p.attempts, p.lease_until) for p in queued] == [("pending", 0, None)] * 2


def test_with_few_threads_a_hanging_offerwalls_backlog_still_leaves_room_for_others(
    wall, engine, box, pb_settings
):
    settings = pb_settings.model_copy(update={"postback_total_timeout": 2.0})
    other_wall, _ = make_offerwall(engine, box, name="Other wall")
    with running_receiver() as hanging, running_receiver() as other:
        hanging.hang_seconds = 6
        configure(engine, wall.id, TEMPLATE.replace("{base}", hanging.url))
        configure(engine, other_wall.id, TEMPLATE.replace("{base}", other.url))
        _convert(engine, box, wall)
        make_due(engine)
        # More of the hanging offerwall's postbacks, first in line, than the dispatcher
        # holds at once (4 × 4 threads), and as many lanes allowed as it has threads.
        _add_postbacks(engine, wall.id, 19, due_ago=0.5)
        other_ids = _add_postbacks(engine, other_wall.id, 3, due_ago=0.1)
        dispatcher = Dispatcher(
            engine=engine, box=box, settings=settings, threads=4, idle_wait=0.05
        )
        with _running(dispatcher):
            assert _wait_for(lambda: _attempt_counts(engine, other_ids) == [1] * 3, 10)
            # Delivered while the hanging offerwall's first requests still run, on 3 threads.
            assert len(hanging.requests) == 3 and len(attempt_rows(engine)) == 3
    assert len(other.requests) == 3
