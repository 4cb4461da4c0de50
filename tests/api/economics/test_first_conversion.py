"""A first-conversion promotion under concurrency (docs/publisher-integration.md#promotions):
a player who completes two missions at the same moment, in two requests at once, gets
the promotion on exactly one of the two conversions, on PostgreSQL's parallel
transactions as on SQLite's single writer."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa

from api.core.db import write_session
from api.economics import PromotionIn, promotions
from api.ingest import SignedMessage, parse_batch, store_batch
from models.tables import conversion as _conversion
from models.types import utcnow
from tests.api.economics.test_economics_api import stored
from tests.api.missions.test_live_operations import import_file, iso, mission
from tests.api.steps import start
from tests.factories import now_ms

PLAYERS = 6


@pytest.fixture
def api_settings(api_settings):
    return api_settings.model_copy(update={"stale_event_hours": 0})


def _welcome(engine, offerwall_id: str) -> None:
    now = utcnow()
    with write_session(engine) as session:
        promotions.add(
            session,
            offerwall_id,
            PromotionIn(
                name="Welcome",
                multiplier="3",
                start=now - timedelta(minutes=1),
                end=now + timedelta(hours=1),
                firstConversionOnly=True,
            ),
            by="publisher@example.com",
        )


@pytest.mark.timeout(120)
def test_two_first_conversions_of_one_player_at_once_are_boosted_exactly_once(
    client, signed, game, wall, engine, box, api_settings
):
    # Two daily missions: each player's rows of a day are locked apart, so nothing but
    # the promotion's own rule keeps their two conversions from deciding at once.
    win, kill = import_file(
        engine,
        game.game_id,
        missions=[
            mission("Win", {"event": "WIN"}, recurrence={"every": "day"}),
            mission("Kill", {"event": "KILL"}, recurrence={"every": "day"}),
        ],
    )
    _welcome(engine, wall[0].id)
    users = [f"p{n}" for n in range(PLAYERS)]
    for user in users:
        start(client, signed, wall, win.id, user)
        start(client, signed, wall, kill.id, user)
    requests = []
    for n, (user, event) in enumerate((u, e) for u in users for e in ("WIN", "KILL")):
        body = json.dumps(
            {
                "gameId": game.game_id,
                "events": [{"userId": user, "event": event, "time": iso(utcnow())}],
            }
        ).encode()
        headers = signed.headers(body, timestamp=now_ms() + n)
        requests.append(
            SignedMessage(
                headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
            )
        )
    barrier = threading.Barrier(len(requests))
    statuses: list[int] = []

    def send(request: SignedMessage) -> None:
        barrier.wait()
        parsed = parse_batch(body=request.body, settings=api_settings)
        outcome = store_batch(
            engine=engine, box=box, settings=api_settings, request=request, parsed=parsed
        )
        statuses.append(outcome.status)

    threads = [threading.Thread(target=send, args=(r,)) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert statuses == [200] * len(requests)
    assert len(stored(engine)) == 2 * PLAYERS
    with engine.connect() as conn:
        per_player = conn.execute(
            sa.select(
                _conversion.c.platform_user_id,
                sa.func.count(),
                sa.func.sum(sa.case((_conversion.c.multiplier == 300, 1), else_=0)),
            ).group_by(_conversion.c.platform_user_id)
        ).all()
    # Each player: two conversions, one of them (whichever came first) boosted.
    counts = sorted((int(count), int(boosted)) for _, count, boosted in per_player)
    assert counts == [(2, 1)] * PLAYERS
