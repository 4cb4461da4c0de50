"""The editor's saves (api/missions/editor.py): a new pool made with the mission that names
it, and a mission in a quest kept out of pools."""

from __future__ import annotations

import pytest

from api.core.db import new_session, write_session
from api.missions import editor
from api.missions.forms import FormError
from tests.factories import make_game

LIVE_FORM = {
    "title": "Duel of the day",
    "payout": "0.5",
    "destinationUrl": "https://game.example/",
    "rule.event": "DUEL",
    "rule.completion.kind": "count",
    "rule.completion.threshold": "1",
    "recurrence.every": "",
    "stages": "",
}


def test_a_new_pool_is_made_with_the_mission_that_names_it(engine, box):
    from api.missions import offers

    game = make_game(engine, box).game_id
    form = LIVE_FORM | {"pool": "daily-pvp", "newPool.size": "0", "newPool.every": "day"}
    with pytest.raises(FormError) as refused, write_session(engine) as session:
        editor.save_mission_form(session=session, game_id=game, form=form, mission_id=None)
    assert list(refused.value.errors) == ["newPool.size"]
    with new_session(engine) as session:
        assert offers.game_pools(session=session, game_id=game) == []

    form |= {"newPool.size": "2", "newPool.timeZone": "Europe/Berlin"}
    with write_session(engine) as session:
        mission = editor.save_mission_form(
            session=session, game_id=game, form=form, mission_id=None
        )
        assert mission.pool == "daily-pvp"
    with new_session(engine) as session:
        [pool] = offers.game_pools(session=session, game_id=game)
        assert (pool.name, pool.size, pool.every, pool.time_zone) == (
            "daily-pvp",
            2,
            "day",
            "Europe/Berlin",
        )
        assert editor.pool_choices(session=session, game_id=game) == [
            editor.PoolChoice("daily-pvp", "2 of its missions a day (Europe/Berlin)")
        ]
        # A pooled mission is offered on its own: the quest builder does not offer it.
        built = editor.quest_builder(session=session, game_id=game, quest_id=None)
        assert [m.title for m in built.available] == []


def test_a_mission_in_a_quest_cannot_join_a_pool(engine, box):
    from tests.factories import make_quest, mission_data

    game = make_game(engine, box).game_id
    quest = make_quest(engine, game, [mission_data(title="Inside")])
    with new_session(engine) as session:
        [inside] = editor.quest_builder(session=session, game_id=game, quest_id=quest.id).chosen
    with pytest.raises(FormError) as refused, write_session(engine) as session:
        editor.save_mission_form(
            session=session,
            game_id=game,
            form=LIVE_FORM | {"pool": "daily-pvp", "newPool.size": "1"},
            mission_id=inside.id,
        )
    assert list(refused.value.errors) == ["pool"]


def test_every_problem_of_the_whole_mission_is_named_at_once(engine, box):
    from sqlmodel import select

    from models import Mission
    from tests.factories import make_quest, mission_data

    game = make_game(engine, box).game_id
    quest = make_quest(engine, game, [mission_data(title="Inside")])
    with new_session(engine) as session:
        [inside] = editor.quest_builder(session=session, game_id=game, quest_id=quest.id).chosen
    form = LIVE_FORM | {
        "startDate": "2027-01-10",
        "expirationDate": "2027-01-01",  # before the start
        "pool": "daily-pvp",  # in a quest, and recurring too
        "newPool.size": "1",
        "recurrence.every": "week",
        "stages.0.threshold": "5",
        "stages.0.payout": "0.5",
        "stages.1.threshold": "3",  # below the stage before
        "stages.1.payout": "1",
        "payout": "2",  # not the stages' 1.5
        "budget.amount": "100",  # without revenue
    }
    with pytest.raises(FormError) as refused, write_session(engine) as session:
        editor.save_mission_form(session=session, game_id=game, form=form, mission_id=inside.id)
    assert refused.value.errors == {
        "pool": "This mission is in a quest: a pooled mission is offered on its own.",
        "startDate": "The start date must be before the expiry date.",
        "stages.1.threshold": "A ladder's stages go up: each threshold above the one before.",
        "payout": "A ladder's payout is its stages' together: leave payout out, or make it 1.5.",
        "recurrence.every": "A pooled mission turns over with its pool: leave recurrence out.",
        "revenue": "A budget counts revenue: set the mission's revenue first.",
    }
    with new_session(engine) as session:
        kept = session.get(Mission, inside.id)
        assert kept is not None and kept.title == "Inside" and kept.pool is None
        assert len(session.exec(select(Mission)).all()) == 1
