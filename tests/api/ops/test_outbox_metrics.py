"""The outboxes as a worker's `/metrics` reads them at scrape time: messages due and
scheduled, the oldest one waiting, paused endpoints, and the database's answer."""

from __future__ import annotations

from datetime import timedelta

import sqlalchemy as sa
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from api.core.db import build_engine, write_session
from api.ops import OutboxCollector
from models import Offerwall, Postback
from models.types import utcnow
from tests.factories import make_postback
from tests.live import free_port


def scraped(engine) -> dict[tuple[str, tuple], float]:
    registry = CollectorRegistry()
    registry.register(OutboxCollector(engine))
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
