"""A click does not wait for batches that merely point at its player (PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from api.core.crypto import SecretBox
from api.core.db import build_engine
from api.tracking import ClickIn, record_click
from models.types import utcnow
from tests.conftest import MASTER_KEY, empty_postgres
from tests.factories import FixedCountries, make_game, make_mission, make_offerwall


@pytest.fixture
def pg_engine(postgres_server_url: str) -> Iterator[Engine]:
    engine = build_engine(postgres_server_url)
    yield engine
    empty_postgres(engine)
    engine.dispose()


def _click(mission_id: str, owid: str) -> ClickIn:
    return ClickIn(
        kind="mission",
        offer_id=mission_id,
        owid=owid,
        uid="u1",
        clickid=None,
        subs=(None, None, None),
        ip="203.0.113.7",
        user_agent="test",
    )


@pytest.mark.postgres
@pytest.mark.timeout(30)
def test_a_click_does_not_wait_for_a_transaction_linking_a_game_user_to_its_player(
    pg_engine: Engine, postgres_server_url: str
) -> None:
    box = SecretBox([MASTER_KEY])
    game = make_game(pg_engine, box)
    wall, _ = make_offerwall(pg_engine, box)
    mission = make_mission(pg_engine, game.game_id)
    click = _click(mission.id, wall.owid)
    player = record_click(engine=pg_engine, click=click, countries=FixedCountries())
    # A click that has to wait for a row lock fails after 2 s instead of waiting.
    impatient_url = make_url(postgres_server_url).update_query_dict(
        {"options": "-c lock_timeout=2000"}
    )
    impatient = build_engine(impatient_url.render_as_string(hide_password=False))
    try:
        with pg_engine.connect() as linking:
            # An open ingestion transaction linking a game user to the player: its
            # foreign key check holds a KEY SHARE lock on the player's row.
            now = utcnow()
            linking.execute(
                sa.text(
                    "INSERT INTO game_user (game_id, user_id, platform_user_id, created_at,"
                    " updated_at) VALUES (:game, 'g1', :player, :now, :now)"
                ),
                {"game": game.game_id, "player": player.platform_user_id, "now": now},
            )
            again = record_click(engine=impatient, click=click, countries=FixedCountries())
            linking.rollback()
    finally:
        impatient.dispose()
    assert again.platform_user_id == player.platform_user_id
    with pg_engine.connect() as conn:
        clicks = conn.execute(sa.text("SELECT count(*) FROM click")).scalar()
    assert clicks == 2
