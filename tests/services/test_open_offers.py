"""The open-offer predicate: its SQL form and its Python form agree on every case."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session

from api.core.crypto import SecretBox
from api.services import open_offers
from models import Mission, Quest
from models.tables import mission as _mission
from models.tables import quest as _quest
from tests.factories import make_game

NOW = datetime(2027, 6, 1, 12, 0, tzinfo=UTC)
PAST, FUTURE = NOW - timedelta(seconds=1), NOW + timedelta(days=1)

# (active, expiration, cap, conversions) → open?
MISSION_CASES = [
    (True, None, None, 0, True),
    (True, FUTURE, None, 5, True),
    (True, NOW, None, 0, False),  # expiring now is expired
    (True, PAST, None, 0, False),
    (False, None, None, 0, False),
    (True, None, 3, 2, True),
    (True, None, 3, 3, False),
    (True, None, 3, 4, False),
    (False, FUTURE, 3, 2, False),
]
# (active, expiration, start cap, starts) → open?
QUEST_CASES = [
    (True, None, None, 0, True),
    (True, FUTURE, 10, 9, True),
    (True, None, 10, 10, False),
    (True, PAST, None, 0, False),
    (False, None, None, 0, False),
]


@pytest.fixture
def game_id(engine: Engine, box: SecretBox) -> str:
    return make_game(engine, box).game_id


def test_the_mission_predicate_agrees_in_sql_and_python(engine, game_id):
    with Session(engine) as session:
        for n, (active, expires, cap, conversions, _) in enumerate(MISSION_CASES):
            session.add(
                Mission(
                    id=f"m{n}",
                    game_id=game_id,
                    title=f"case {n}",
                    destination_url="https://g.example/",
                    is_active=active,
                    expiration_date=expires,
                    cap=cap,
                    conversions=conversions,
                    rule_event="E",
                )
            )
        session.commit()
        in_sql = set(
            session.scalars(
                sa.select(_mission.c.id).where(open_offers.mission_open_sql(_mission, NOW))
            )
        )
        rows = {m.id: m for m in session.scalars(sa.select(Mission))}
    in_python = {i for i, m in rows.items() if open_offers.mission_open(m, NOW)}
    expected = {f"m{n}" for n, case in enumerate(MISSION_CASES) if case[-1]}
    assert in_sql == in_python == expected


def test_the_quest_predicate_agrees_in_sql_and_python(engine, game_id):
    with Session(engine) as session:
        for n, (active, expires, start_cap, starts, _) in enumerate(QUEST_CASES):
            session.add(
                Quest(
                    id=f"q{n}",
                    game_id=game_id,
                    name=f"case {n}",
                    destination_url="https://g.example/",
                    is_active=active,
                    expiration_date=expires,
                    start_cap=start_cap,
                    starts=starts,
                )
            )
        session.commit()
        in_sql = set(
            session.scalars(sa.select(_quest.c.id).where(open_offers.quest_open_sql(_quest, NOW)))
        )
        rows = {q.id: q for q in session.scalars(sa.select(Quest))}
    in_python = {i for i, q in rows.items() if open_offers.quest_open(q, NOW)}
    expected = {f"q{n}" for n, case in enumerate(QUEST_CASES) if case[-1]}
    assert in_sql == in_python == expected
