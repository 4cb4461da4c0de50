"""How many statements a batch costs the database (a count, not a timing), so the
one-statement-per-table write path of ingestion cannot quietly regress."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.db import new_session
from api.ingest import SignedMessage, parse_batch, store_batch
from tests.databases import only_postgres
from tests.factories import SignedClient, iso_now, make_game


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The SQL of every statement SQLAlchemy sends while the block runs."""
    seen: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        seen.append(" ".join(statement.split()))

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def _store(engine, box, settings, game, events: list[dict]) -> int:
    body = json.dumps({"gameId": game.game_id, "events": events}).encode()
    headers = SignedClient(None, game).headers(body)  # type: ignore[arg-type]
    request = SignedMessage(
        headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
    )
    parsed = parse_batch(body=body, settings=settings)
    return store_batch(
        engine=engine, box=box, settings=settings, request=request, parsed=parsed
    ).status


@only_postgres  # SQLite is in-process: its executemany has no round trip to save
def test_a_batch_of_events_is_one_insert_statement_on_postgres(engine, box, settings):
    game = make_game(engine, box)
    events = [
        {
            "userId": f"player-{i % 7}",
            "event": "KILL_PLAYER",
            "time": iso_now(),
            "value": None if i % 3 == 0 else float(i),
            "traits": {"map": "dust", "n": i} if i % 2 else None,
            "groupId": "g" if i % 5 == 0 else None,
        }
        for i in range(100)
    ]
    events = [{k: v for k, v in e.items() if v is not None} for e in events]
    with statements(engine) as seen:
        assert _store(engine, box, settings, game, events) == 200
    inserts = [s for s in seen if s.startswith("INSERT INTO event ")]
    assert len(inserts) == 1
    with new_session(engine) as session:
        stored = session.execute(
            sa.text("SELECT user_id, value, traits, group_id FROM event ORDER BY id")
        ).all()
    expected = [(e["userId"], e.get("value"), e.get("traits"), e.get("groupId")) for e in events]
    assert [tuple(row) for row in stored] == expected


@only_postgres  # SQLite is in-process: its statements cost no round trip
def test_a_batch_reads_its_credential_and_resend_record_in_one_statement_on_postgres(
    engine, box, settings
):
    game = make_game(engine, box)
    events = [{"userId": "p1", "event": "KILL_PLAYER", "time": iso_now()}]
    _store(engine, box, settings, game, events)  # warm: the mission index, the secret
    with statements(engine) as seen:
        assert _store(engine, box, settings, game, events) == 200
    verbs = [" ".join(s.split()[:3]) for s in seen]
    assert verbs == [
        "SELECT game_credential.game_id, game_credential.secret_sealed,",  # + the record
        "SELECT catalog_version.version FROM",
        "INSERT INTO event",
        "INSERT INTO signed_request",
    ]
