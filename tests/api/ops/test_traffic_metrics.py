"""Known traffic moves each domain metric by exactly that traffic, on both databases:
ingested items by kind and outcome, refused signed requests, clicks, conversions and
completions (once their transaction commits), and postback attempts by outcome."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from prometheus_client import REGISTRY

from api.core.db import write_session
from models import Postback, PostbackStatus
from models.types import utcnow
from tests.api.steps import KILLS, at, start
from tests.api.tracking_helpers import click
from tests.factories import make_mission, make_postback
from tests.outbox import TEMPLATE, configure, make_due, run_once
from tests.receiver import running_receiver


def value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


class Moved:
    """The change of every sample asked for, between `__init__` and `of`."""

    def __init__(self, *samples: tuple[str, dict[str, str]]):
        self.before = {
            (name, tuple(sorted(labels.items()))): value(name, **labels) for name, labels in samples
        }

    def of(self) -> dict[tuple[str, tuple], float]:
        return {key: value(key[0], **dict(key[1])) - was for key, was in self.before.items()}


def sample(name: str, **labels: str) -> tuple[str, dict[str, str]]:
    return name, labels


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"postback_allow_private": True})


def test_known_traffic_moves_each_metric_by_exactly_that_traffic(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(engine, game.game_id, **KILLS)
    samples = [
        sample("questwall_ingest_items_total", kind="event", outcome="accepted"),
        sample("questwall_ingest_items_total", kind="identifier", outcome="accepted"),
        sample("questwall_ingest_items_total", kind="event", outcome="invalid_time"),
        sample("questwall_signed_requests_refused_total", reason="invalid_signature"),
        sample("questwall_clicks_total", outcome="redirected"),
        sample("questwall_clicks_total", outcome="unknown_offer"),
        sample("questwall_conversions_total", status="approved"),
        sample("questwall_mission_completions_total"),
        sample("questwall_delivery_attempts_total", kind="postback", outcome="delivered"),
        sample("questwall_delivery_attempt_duration_seconds_count", kind="postback"),
        sample("questwall_delivery_lag_seconds_count", kind="postback"),
    ]
    moved = Moved(*samples)

    start(client, signed, wall, mission.id, "p1")  # a click and an identifier
    bad_time = {"userId": "p1", "event": "GAME_END", "time": "yesterday"}
    playing = {"userId": "p1", "event": "GAME_START", "time": at(0)}
    answer = signed.events(playing, bad_time, playing | {"time": at(0.5)})
    assert answer.status_code == 207, answer.text
    assert signed.events(playing, secret="not-the-secret").status_code == 401
    assert click(client, "mission", "no-such-offer", wall[0].owid, uid="p2").status_code == 404
    kills = {"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 11}}
    assert signed.events(kills).status_code == 200  # completes the mission: a conversion
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        make_due(engine)
        assert run_once(engine, box, api_settings) == 1
        assert len(receiver.requests) == 1

    assert moved.of() == {
        (name, tuple(sorted(labels.items()))): expected
        for (name, labels), expected in zip(samples, [3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], strict=True)
    }


def test_delivery_lag_is_the_time_to_the_first_success_counted_once(
    engine, box, wall, api_settings
):
    made = utcnow() - timedelta(minutes=7)
    postback = make_postback(engine, box, wall[0])
    with write_session(engine) as session:
        session.execute(
            sa.update(Postback.__table__)
            .where(Postback.__table__.c.id == postback)
            .values(created_at=made)
        )
    count = sample("questwall_delivery_lag_seconds_count", kind="postback")
    total = sample("questwall_delivery_lag_seconds_sum", kind="postback")
    moved = Moved(count, total)
    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        make_due(engine)
        assert run_once(engine, box, api_settings) == 1
        # Sent again (as a publisher's resend does): delivered again, not first again.
        with write_session(engine) as session:
            session.execute(sa.update(Postback.__table__).values(status=PostbackStatus.PENDING))
        make_due(engine)
        assert run_once(engine, box, api_settings) == 1
        assert len(receiver.requests) == 2
    changed = moved.of()
    assert changed[(count[0], tuple(count[1].items()))] == 1
    assert 7 * 60 <= changed[(total[0], tuple(total[1].items()))] < 8 * 60
