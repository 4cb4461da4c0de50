"""The outboxes as a worker's `/metrics` reads them at scrape time: messages due and
scheduled, the oldest one waiting, paused endpoints, and the database's and Redis's
answers; and the serving processes' database pools."""

from __future__ import annotations

import time
from datetime import timedelta

import sqlalchemy as sa
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from api.core.db import build_engine, write_session
from api.ops import OutboxCollector, watch_pool
from api.postbacks import outbox as postbacks
from api.webhooks import messages as webhook_messages
from models import Offerwall, Postback, PostbackKind
from models.types import utcnow
from tests.factories import make_offerwall, make_postback
from tests.live import free_port


def scraped(engine, redis_url: str = "") -> dict[tuple[str, tuple], float]:
    """What a worker's scrape reads (with the dispatchers' own idea of a sendable
    message)."""
    registry = CollectorRegistry()
    sendable = {"postback": postbacks.SENDABLE, "webhook": webhook_messages.SENDABLE}
    registry.register(OutboxCollector(engine, redis_url=redis_url, timeout=0.5, sendable=sendable))
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_waiting_messages_the_oldest_one_and_paused_endpoints_are_read(engine, box, wall):
    offerwall = wall[0]
    due, later = make_postback(engine, box, offerwall), make_postback(engine, box, offerwall)
    made = utcnow() - timedelta(minutes=7)
    with write_session(engine) as session:
        table = Postback.__table__
        session.execute(
            sa.update(table)
            .where(table.c.id == due)
            .values(next_attempt_at=utcnow() - timedelta(seconds=1), created_at=made)
        )
        session.execute(
            sa.update(table)
            .where(table.c.id == later)
            .values(next_attempt_at=utcnow() + timedelta(hours=1))
        )
        paused = session.get(Offerwall, offerwall.id)
        paused.deliveries_paused_at = utcnow()
        session.add(paused)
    found = scraped(engine)
    assert found[("questwall_outbox_messages", (("kind", "postback"), ("state", "due")))] == 1
    assert found[("questwall_outbox_messages", (("kind", "postback"), ("state", "scheduled")))] == 1
    assert found[("questwall_outbox_messages", (("kind", "mail"), ("state", "due")))] == 0
    oldest = found[("questwall_outbox_oldest_pending_timestamp_seconds", (("kind", "postback"),))]
    assert abs(oldest - made.timestamp()) < 1
    assert ("questwall_outbox_oldest_pending_timestamp_seconds", (("kind", "mail"),)) not in found
    assert found[("questwall_endpoints_paused", (("kind", "postback"),))] == 1
    assert found[("questwall_endpoints_paused", (("kind", "webhook"),))] == 0
    assert found[("questwall_dependency_up", (("dependency", "database"),))] == 1


def test_a_database_that_does_not_answer_is_a_zero_not_a_failed_scrape(tmp_path):
    gone = build_engine(f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nothing")
    try:
        found = scraped(gone)
    finally:
        gone.dispose()
    assert found == {("questwall_dependency_up", (("dependency", "database"),)): 0}


def up(found: dict[tuple[str, tuple], float], dependency: str) -> float | None:
    return found.get(("questwall_dependency_up", (("dependency", dependency),)))


def test_redis_is_up_when_it_answers_and_down_when_it_does_not(engine, redis_url):
    assert up(scraped(engine), "redis") is None  # no REDIS_URL: not a dependency
    assert up(scraped(engine, redis_url), "redis") == 1
    down = scraped(engine, f"redis://127.0.0.1:{free_port()}/0")
    assert up(down, "redis") == 0 and up(down, "database") == 1


def pool_reads(state: str) -> float | None:
    return REGISTRY.get_sample_value("questwall_db_pool_connections", {"state": state})


def test_the_pool_gauges_follow_the_connections_checked_out(db_url):
    engine = build_engine(db_url)
    stop = watch_pool(engine, every=0.02)
    assert stop is not None
    try:
        held = [engine.connect() for _ in range(3)]
        until(lambda: pool_reads("in_use") == 3)
        for conn in held:
            conn.close()
        until(lambda: pool_reads("in_use") == 0 and pool_reads("idle") == 3)
        assert pool_reads("overflow") == 0
    finally:
        stop.set()
        engine.dispose()


def until(condition, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the pool gauges never showed it"
        time.sleep(0.01)


def test_the_longest_due_message_is_one_a_worker_would_send_now(engine, box, wall):
    """A due postback of a paused offerwall waits for its resumption, not for a worker;
    one behind an earlier unsent postback of its conversion waits for that one; one
    scheduled for a later retry is not due."""
    live, (paused_wall, _) = wall[0], make_offerwall(engine, box, name="Paused")
    waiting = make_postback(engine, box, live)
    held = make_postback(engine, box, paused_wall)
    retried = make_postback(engine, box, live)
    table = Postback.__table__
    with write_session(engine) as session:
        for postback, due in ((waiting, -180), (held, -3600), (retried, 600)):
            session.execute(
                sa.update(table)
                .where(table.c.id == postback)
                .values(next_attempt_at=utcnow() + timedelta(seconds=due))
            )
        paused = session.get(Offerwall, paused_wall.id)
        paused.deliveries_paused_at = utcnow()
        session.add(paused)
    # A reversal's postback, due long ago, behind its conversion's own unsent one.
    with write_session(engine) as session:
        behind = session.execute(
            sa.select(table.c.conversion_id).where(table.c.id == waiting)
        ).scalar_one()
        postbacks.enqueue(
            session,
            conversion_id=behind,
            offerwall_id=live.id,
            now=utcnow() - timedelta(hours=2),
            kind=PostbackKind.REVERSAL,
        )
        session.execute(
            sa.update(table)
            .where(table.c.id == waiting)
            .values(next_attempt_at=utcnow() + timedelta(seconds=600))  # a retry, later
        )
    found = scraped(engine)
    assert ("questwall_outbox_oldest_due_timestamp_seconds", (("kind", "postback"),)) not in found
    with write_session(engine) as session:  # the conversion's own postback is due again
        session.execute(
            sa.update(table)
            .where(table.c.id == waiting)
            .values(next_attempt_at=utcnow() - timedelta(seconds=180))
        )
    found = scraped(engine)
    since = found[("questwall_outbox_oldest_due_timestamp_seconds", (("kind", "postback"),))]
    assert 170 <= utcnow().timestamp() - since <= 200
    assert ("questwall_outbox_oldest_due_timestamp_seconds", (("kind", "webhook"),)) not in found
