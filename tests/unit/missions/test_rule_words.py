"""A rule in words (api/missions/rule_words.py): every kind of rule, as the missions list,
the editor and the tester show it."""

from __future__ import annotations

import pytest

SUMMARIES = [
    (
        {"event": "GAME_END", "conditions": [{"field": "traits.kills", "op": ">=", "value": 10}]},
        "GAME_END where kills ≥ 10, once",
    ),
    ({"event": "LOGIN"}, "LOGIN, once"),
    ({"event": "KILL", "completion": {"kind": "count", "threshold": 10}}, "KILL, 10 times"),
    # A count completes at a whole event: 2.5 means the third.
    ({"event": "KILL", "completion": {"kind": "count", "threshold": 2.5}}, "KILL, 3 times"),
    (
        {
            "event": "MATCH_END",
            "conditions": [{"field": "value", "op": ">=", "value": 1000}],
            "completion": {"kind": "consecutive", "threshold": 3},
        },
        "MATCH_END where value ≥ 1000, 3 times in a row",
    ),
    ({"event": "WIN", "completion": {"kind": "consecutive", "threshold": 1}}, "WIN, once"),
    (
        {"event": "SCORE", "completion": {"kind": "sum", "threshold": 1000, "field": "value"}},
        "SCORE, total of value ≥ 1000",
    ),
    (
        {
            "event": "LOOT",
            "conditions": [
                {"field": "traits.rarity", "op": "==", "value": "epic"},
                {"field": "traits.bot", "op": "not exists"},
                {"field": "traits.ranked", "op": "==", "value": True},
                {"field": "traits.guild", "op": "exists"},
                {"field": "value", "op": "<", "value": 0.5},
                {"field": "traits.level", "op": "!=", "value": 3},
            ],
            "completion": {"kind": "sum", "threshold": 12.5, "field": "traits.gold"},
        },
        "LOOT where rarity = “epic” and bot is not set and ranked = true and guild is set"
        " and value < 0.5 and level ≠ 3, total of gold ≥ 12.5",
    ),
    (
        {"event": "LEVEL_UP", "completion": {"kind": "max", "threshold": 20, "field": "value"}},
        "LEVEL_UP, highest value ≥ 20",
    ),
    (
        {"event": "RACE", "completion": {"kind": "min", "threshold": 60, "field": "traits.time"}},
        "RACE, lowest time ≤ 60",
    ),
    (
        {
            "event": "MATCH_END",
            "completion": {"kind": "distinct", "threshold": 5, "field": "traits.map"},
        },
        "MATCH_END on 5 different traits.map",
    ),
    (
        {"event": "START_GAME", "completion": {"kind": "days", "threshold": 5}},
        "START_GAME on 5 different days (UTC)",
    ),
    (
        {
            "event": "START_GAME",
            "completion": {"kind": "streak", "threshold": 7, "timeZone": "Europe/Berlin"},
        },
        "a 7-day streak of START_GAME (Europe/Berlin)",
    ),
    (
        {
            "anyOf": [
                {"event": "KILL_PLAYER"},
                {
                    "event": "KILL_NPC",
                    "conditions": [
                        {"field": "traits.map", "op": "in", "value": ["desert", "jungle", 3]}
                    ],
                },
            ],
            "completion": {"threshold": 10},
        },
        "KILL_PLAYER or (KILL_NPC where map is one of “desert”, “jungle”, 3), 10 times",
    ),
    (
        {
            "event": "KILL",
            "conditions": [{"field": "groupId", "op": "not in", "value": "practice, tutorial"}],
            "per": "groupId",
            "completion": {"threshold": 10},
        },
        "KILL where groupId is none of “practice”, “tutorial”, 10 times in one group",
    ),
    (
        {
            "event": "KILL",
            "per": "traits.arena",
            "completion": {"kind": "sum", "field": "value", "threshold": 5},
        },
        "KILL, total of value ≥ 5 with the same arena",
    ),
    (
        {"event": "KILL", "window": {"seconds": 3600}, "completion": {"threshold": 10}},
        "KILL, 10 times within 1 hour",
    ),
    (
        {
            "steps": [
                {"event": "TUTORIAL_DONE"},
                {
                    "event": "MATCH_END",
                    "conditions": [{"field": "traits.won", "op": "==", "value": True}],
                },
            ],
            "within": {"seconds": 86400},
        },
        "TUTORIAL_DONE, then MATCH_END where won = true, within 1 day",
    ),
    (
        {"steps": [{"event": "A"}, {"event": "B"}, {"event": "C"}]},
        "A, then B, then C",
    ),
]


@pytest.mark.parametrize(("definition", "words"), SUMMARIES)
def test_a_rule_reads_as_words(definition, words):
    from api.missions import summary
    from models.offer_schemas import RuleIn

    assert summary(RuleIn.model_validate(definition)) == words


def test_every_completion_a_definition_can_name_is_summarized():
    from typing import get_args

    from api.missions.rules import COMPLETIONS
    from models.offer_schemas import CompletionIn

    named = set(get_args(CompletionIn.model_fields["kind"].annotation))
    covered = {d.get("completion", {}).get("kind", "count") for d, _ in SUMMARIES}
    assert covered == named and named <= set(COMPLETIONS)


def test_a_stored_mission_reads_as_typed_even_when_its_numbers_are_floats():
    from api.missions import summary
    from models import Mission
    from models.offer_schemas import rule_in

    mission = Mission(
        rule_event="GAME_END",
        rule_conditions=[{"field": "traits.kills", "op": ">=", "value": 10.0}],
        rule_completion="consecutive",
        rule_threshold=3.0,
    )
    assert summary(rule_in(mission)) == "GAME_END where kills ≥ 10, 3 times in a row"
