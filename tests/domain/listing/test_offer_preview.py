"""The editors' preview (the offer card and the offers API's record) and the missions list's
rows (the rule in words, the funnel)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlmodel import col, select

from api.core.db import new_session
from api.listing import offer_preview
from api.missions import OfferError
from api.missions.editor import quest_builder
from api.missions.offer_rows import game_offers
from models import Mission, Quest
from portal.missions.offer_editing import preview_card
from tests.factories import make_game, make_mission, make_quest, mission_data

BASE = "https://play.questwall.example"
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_a_mission_preview_is_the_card_and_the_api_record_with_the_real_base_url(engine, box):
    game = make_game(engine, box).game_id
    mission = make_mission(
        engine,
        game,
        title="Kill 10",
        description="Ten in one game.",
        thumbnail="https://cdn.example/kill.png",
        instructions="Play ranked.",
        requirements="Level 5",
        expirationDate="2027-01-31T00:00:00Z",
        payout="1.5",
    )
    preview = offer_preview(mission, base_url=BASE, now=NOW)
    assert (preview.kind, preview.title, preview_card(preview).payout) == (
        "mission",
        "Kill 10",
        "$1.50",
    )
    assert preview.description == "Ten in one game."
    assert preview.thumbnail == "https://cdn.example/kill.png"
    assert (preview.instructions, preview.requirements) == ("Play ranked.", "Level 5")
    assert preview.expires == "Ends on 31 Jan 2027"
    assert preview.tracking_link == f"{BASE}/missions/{mission.id}?owid=<owid>"
    record = json.loads(preview.json)
    assert record["trackingLink"] == preview.tracking_link
    assert (record["title"], record["payout"]) == ("Kill 10", 1.5)
    assert "rule" not in record and "destinationUrl" not in record
    assert offer_preview(mission, base_url=BASE, now=datetime(2027, 2, 1, tzinfo=UTC)).expires == (
        "Ended on 31 Jan 2027"
    )


def test_a_quest_preview_lists_its_missions_and_their_payouts_together(engine, box):
    game = make_game(engine, box).game_id
    quest = make_quest(
        engine,
        game,
        [mission_data(title="Gate", payout="1"), mission_data(title="Boss", payout="2.5")],
        name="The lair",
    )
    with new_session(engine) as session:
        stored = session.get(Quest, quest.id)
        missions = list(
            session.exec(
                select(Mission)
                .where(Mission.quest_id == quest.id)
                .order_by(col(Mission.quest_position))
            )
        )
        assert stored is not None
        preview = offer_preview(stored, missions, base_url=BASE)
    card = preview_card(preview)
    assert (preview.kind, preview.title, card.payout, preview.expires) == (
        "quest",
        "The lair",
        "$3.50",
        "",
    )
    assert [(m.title, m.payout) for m in card.missions] == [("Gate", "$1.00"), ("Boss", "$2.50")]
    record = json.loads(preview.json)
    assert record["trackingLink"] == f"{BASE}/quests/{quest.id}?owid=<owid>"
    assert [m["payout"] for m in record["missions"]] == [1.0, 2.5]


def test_the_missions_list_shows_each_rule_in_words(engine, box):
    game = make_game(engine, box).game_id
    make_mission(engine, game, title="Kill 10")
    make_mission(
        engine,
        game,
        title="Hot streak",
        rule={
            "event": "MATCH_END",
            "conditions": [{"field": "value", "op": ">=", "value": 1000}],
            "completion": {"kind": "consecutive", "threshold": 3},
        },
    )
    make_quest(engine, game, [mission_data(title="Inside")], name="Season")
    with new_session(engine) as session:
        rows = game_offers(session=session, game_id=game)
    assert [(r.kind, r.title, r.rule, r.quest) for r in rows] == [
        ("quest", "Season", "", ""),
        ("mission", "Kill 10", "GAME_END where kills ≥ 10, once", ""),
        ("mission", "Hot streak", "MATCH_END where value ≥ 1000, 3 times in a row", ""),
        ("mission", "Inside", "GAME_END where kills ≥ 10, once", "Season"),
    ]
    assert [(r.clicks, r.started, r.median_time) for r in rows[1:]] == [("0", "0", "–")] * 3
    assert rows[1].cap == "0 / ∞ conversions"
    assert rows[0].cap == "0 / ∞ players"


def test_the_quest_builder_opens_with_its_missions_in_order_and_the_free_ones(engine, box):
    game = make_game(engine, box).game_id
    free = make_mission(engine, game, title="Free")
    quest = make_quest(
        engine, game, [mission_data(title="First"), mission_data(title="Second")], name="Q"
    )
    other_game = make_game(engine, box, "Other").game_id
    with new_session(engine) as session:
        built = quest_builder(session=session, game_id=game, quest_id=quest.id)
        fresh = quest_builder(session=session, game_id=game, quest_id=None)
        with pytest.raises(OfferError):
            quest_builder(session=session, game_id=other_game, quest_id=quest.id)
    assert built.quest is not None and built.quest.name == "Q"
    assert [m.title for m in built.chosen] == ["First", "Second"]
    assert [m.id for m in built.available] == [free.id]
    assert (fresh.quest, fresh.chosen, [m.id for m in fresh.available]) == (None, [], [free.id])
