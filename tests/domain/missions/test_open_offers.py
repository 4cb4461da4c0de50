"""The open-offer predicate: its SQL form and its Python form agree on every case."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session

from api.core.crypto import SecretBox
from api.missions import open_offers
from models import Mission, Quest
from models.tables import mission as _mission_table
from models.tables import quest as _quest_table
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


def _mission(n: int, game_id: str, active, expires, cap, conversions) -> Mission:
    return Mission(
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


def _quest(n: int, game_id: str, active, expires, start_cap, starts) -> Quest:
    return Quest(
        id=f"q{n}",
        game_id=game_id,
        name=f"case {n}",
        destination_url="https://g.example/",
        is_active=active,
        expiration_date=expires,
        start_cap=start_cap,
        starts=starts,
    )


@pytest.mark.parametrize(
    ("make", "model", "table", "in_sql", "in_python", "cases"),
    [
        (
            _mission,
            Mission,
            _mission_table,
            open_offers.mission_open_sql,
            open_offers.mission_open,
            MISSION_CASES,
        ),
        (
            _quest,
            Quest,
            _quest_table,
            open_offers.quest_open_sql,
            open_offers.quest_open,
            QUEST_CASES,
        ),
    ],
    ids=["mission", "quest"],
)
def test_the_sql_and_python_forms_agree(
    engine, game_id, make, model, table, in_sql, in_python, cases
):
    with Session(engine) as session:
        for n, case in enumerate(cases):
            session.add(make(n, game_id, *case[:-1]))
        session.commit()
        by_sql = set(session.scalars(sa.select(table.c.id).where(in_sql(table, NOW))))
        rows = session.scalars(sa.select(model)).all()
        by_python = {row.id for row in rows if in_python(row, NOW)}
    expected = {make(n, game_id, *case[:-1]).id for n, case in enumerate(cases) if case[-1]}
    assert by_sql == by_python == expected
