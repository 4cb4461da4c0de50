"""A progress past its time limit reads `expired` from the moment the limit passes, before
any further event stores it so, and every reader agrees (`models.tracking.status_at`): the
offers API with uid, the progress endpoint (the wall reads the same `player_progress`), the
designers' funnels and a ticket's facts. Time is moved by the `now` each reader takes
(SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.listing import OfferFilters, list_for_player, progress_document
from api.listing.keys import approved_offerwall
from api.listing.offers import ListingOfferwall, OfferPage
from api.missions.funnels import mission_funnels
from api.tickets.snapshot import _mission_facts
from models import Mission
from models.tables import progress as _progress
from tests.factories import make_click, make_game, make_mission, make_offerwall

RULE = {
    "event": "GAME_END",
    "conditions": [{"field": "traits.kills", "op": ">=", "value": 1}],
    "completion": {"kind": "count", "threshold": 3},
}


@dataclass(frozen=True)
class Limited:
    game_id: str
    mission: Mission
    wall: ListingOfferwall
    expires_at: datetime


@pytest.fixture
def limited(engine: Engine, box: SecretBox) -> Limited:
    """Alice clicked a one-hour mission and made one of its three steps."""
    game = make_game(engine, box, "Timed").game_id
    mission = make_mission(engine, game, title="Within the hour", rule=RULE, timeLimitSeconds=3600)
    wall, key = make_offerwall(engine, box, name="Timed wall")
    make_click(engine, offer_id=mission.id, offerwall=wall, uid="alice")
    with write_session(engine) as session:
        session.execute(sa.update(_progress).values(count=1))
        expires_at = session.execute(sa.select(_progress.c.expires_at)).scalar_one()
    with engine.connect() as conn:
        listing = approved_offerwall(conn=conn, box=box, api_key=key)
    return Limited(game, mission, listing, expires_at)


def _read(engine: Engine, limited: Limited, now: datetime) -> dict[str, Any]:
    """What each reader says of alice's progress at `now`."""
    with engine.connect() as conn:
        document = orjson.loads(
            progress_document(conn=conn, offerwall=limited.wall, uid="alice", now=now)
        )
        offers = orjson.loads(
            list_for_player(
                conn=conn,
                offerwall=limited.wall,
                page=OfferPage(limit=20, offset=0),
                base_url="https://qw.example",
                filters=OfferFilters(),
                uid="alice",
                now=now,
            )
        )
    with new_session(engine) as session:
        funnel = mission_funnels(session=session, game_id=limited.game_id, now=now)
        row = dict(session.execute(sa.select(_progress)).one()._mapping)
    (mission,) = document["data"]["missions"]
    return {
        "endpoint": mission["progress"]["status"],
        "counts": document["counts"],
        "offers": [m["progress"]["status"] for m in offers["data"]["missions"]],
        "in_progress": funnel[limited.mission.id].in_progress,
        "started": funnel[limited.mission.id].started,
        "ticket": _mission_facts(limited.mission, row, None, now)["progress"]["status"],
    }


def test_at_the_limit_itself_every_reader_still_says_started(engine, limited):
    # The engine still counts an event timed at the limit.
    assert _read(engine, limited, limited.expires_at) == {
        "endpoint": "started",
        "counts": {"started": 1, "completed": 0, "expired": 0, "ended": 0},
        "offers": ["started"],
        "in_progress": 1,
        "started": 1,
        "ticket": "started",
    }


def test_once_the_limit_passes_every_reader_says_expired_without_another_event(engine, limited):
    later = limited.expires_at + timedelta(microseconds=1)
    assert _read(engine, limited, later) == {
        "endpoint": "expired",
        "counts": {"started": 0, "completed": 0, "expired": 1, "ended": 0},
        "offers": [],  # nothing left to do: the offers API no longer lists it for alice
        "in_progress": 0,
        "started": 1,  # the funnel still counts alice among those who started
        "ticket": "expired",
    }
    # Nothing was written: the row still says started until an event arrives.
    with new_session(engine) as session:
        assert session.execute(sa.select(_progress.c.status)).scalar_one() == "started"
