"""The in-memory mission index follows changes made by another process."""

from __future__ import annotations

from sqlmodel import select

from api.core.db import build_engine, new_session, write_session
from api.missions import INDEX, offers
from models import Conversion
from tests.api.steps import KILLS, at, start
from tests.factories import make_mission


def test_a_change_from_another_process_is_followed(client, signed, game, wall, engine, db_url):
    mission = make_mission(engine, game.game_id, **KILLS)
    start(client, signed, wall, mission.id, "p1")
    with new_session(engine) as session:
        assert mission.id in INDEX.current(session).missions  # this process has it loaded
    # "Another process": its own engine (so its own index), same database.
    other = build_engine(db_url)
    with write_session(other) as session:
        offers.set_active(session=session, kind="mission", offer_id=mission.id, active=False)
    other.dispose()
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 50}})
    with new_session(engine) as session:
        assert session.exec(select(Conversion)).all() == []
        assert mission.id not in INDEX.current(session).missions
