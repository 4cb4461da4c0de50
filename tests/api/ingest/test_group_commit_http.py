"""SQLite's group commit (`ingestion.store_batch_grouped`): batches that arrive together
share one commit, each answered only after it, and one that fails at write time is
written alone without taking the others down. PostgreSQL writes each batch alone."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import sqlalchemy as sa

from api.app import create_api
from tests import aio
from tests.databases import only_sqlite
from tests.factories import FixedCountries, SignedClient, iso_now, make_game

# Group commit is SQLite's: on PostgreSQL each request's work runs alone in a thread.
pytestmark = only_sqlite

N = 8


@pytest.fixture
def app(engine, api_settings, box):
    return create_api(engine=engine, settings=api_settings, box=box, countries=FixedCountries())


def _bodies(game, count: int) -> list[bytes]:
    return [
        json.dumps(
            {
                "gameId": game.game_id,
                "events": [{"userId": f"p{n}", "event": "KILL_PLAYER", "time": iso_now()}],
            }
        ).encode()
        for n in range(count)
    ]


def _send_together(app, requests: list[tuple[bytes, dict[str, str]]]) -> list[httpx.Response]:
    """Send signed requests at once, so they wait for the event loop together."""

    async def send_all() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            return await asyncio.gather(
                *(
                    client.post("/v2/custom-events", content=body, headers=headers)
                    for body, headers in requests
                )
            )

    return aio.run(send_all())


def _stored_events(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM event")).scalar_one()


def test_batches_that_arrive_together_share_one_commit(app, engine, box):
    game = make_game(engine, box)
    signer = SignedClient(None, game)  # type: ignore[arg-type]
    commits: list[object] = []

    def count(conn) -> None:
        commits.append(conn)

    requests = [(body, signer.headers(body)) for body in _bodies(game, N)]
    sa.event.listen(engine, "commit", count)
    try:
        answers = _send_together(app, requests)
    finally:
        sa.event.remove(engine, "commit", count)
    assert [a.status_code for a in answers] == [200] * N
    assert _stored_events(engine) == N
    assert 1 <= len(commits) < N


def test_a_batch_that_fails_at_write_time_does_not_take_the_others_down(app, engine, box):
    game = make_game(engine, box)
    signer = SignedClient(None, game)  # type: ignore[arg-type]
    bodies = _bodies(game, N)
    # The same signed request twice in one group: the second fails on the record's
    # primary key at write time, is rolled back alone, and answers from the first.
    requests = [(body, signer.headers(body)) for body in bodies]
    answers = _send_together(app, [*requests, requests[0]])
    assert [a.status_code for a in answers] == [200] * (N + 1)
    replayed = [a.headers.get("questwall-replayed") for a in answers]
    assert replayed.count("true") == 1
    assert answers[0].json() == answers[-1].json()
    assert _stored_events(engine) == N  # the twin's event is stored once
