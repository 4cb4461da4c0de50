"""Saving live operations (api/missions/offers.py): a pool is defined before its missions,
a pooled mission stays out of quests, and an export gives the pools back."""

from __future__ import annotations

import pytest

from api.core.db import write_session
from api.missions import OfferError, offers
from models.offer_schemas import OffersFile
from tests.factories import make_game


def mission(**fields) -> dict:
    return {
        "title": "PvP",
        "payout": "1.00",
        "destinationUrl": "https://game.example/m",
        "rule": {"event": "WIN"},
        **fields,
    }


def test_a_mission_names_a_pool_of_its_game(engine, box):
    game = make_game(engine, box).game_id
    lonely = OffersFile.model_validate({"gameId": game, "missions": [mission(pool="daily")]})
    with pytest.raises(OfferError, match="no pool named daily"), write_session(engine) as s:
        offers.import_offers(session=s, data=lonely)
    pooled = {
        "gameId": game,
        "pools": [{"name": "daily", "size": 2, "every": "week", "timeZone": "Asia/Tokyo"}],
        "missions": [mission(pool="daily"), mission(title="Other", pool="daily")],
    }
    with write_session(engine) as session:
        offers.import_offers(session=session, data=OffersFile.model_validate(pooled))
        exported = offers.export_offers(session=session, game_id=game)
    assert [p.model_dump() for p in exported.pools] == [
        {
            "every": "week",
            "timeZone": "Asia/Tokyo",
            "weekStartsOn": "monday",
            "name": "daily",
            "size": 2,
        }
    ]
    assert [m.pool for m in exported.missions] == ["daily", "daily"]


def test_a_pooled_mission_is_not_put_in_a_quest(engine, box):
    game = make_game(engine, box).game_id
    data = {
        "gameId": game,
        "pools": [{"name": "daily", "size": 1}],
        "quests": [
            {
                "name": "Q",
                "destinationUrl": "https://game.example/q",
                "missions": [mission(pool="daily")],
            }
        ],
    }
    with pytest.raises(OfferError, match="offered on its own"), write_session(engine) as s:
        offers.import_offers(session=s, data=OffersFile.model_validate(data))
