"""The rule engine, on its own (api/missions/rules.py)."""

from __future__ import annotations

import pytest

from api.missions.rules import Condition, Rule, RuleError, Tally, replay, step


def ev(name: str = "E", value=None, **traits) -> dict:
    return {"event": name, "value": value, "traits": traits or None}


@pytest.mark.parametrize(
    ("op", "operand", "actual", "expected"),
    [
        (">=", 10, 10, True),
        (">=", 10, 9.99, False),
        (">", 10, 10, False),
        (">", 10, 11, True),
        ("<=", 5, 5, True),
        ("<", 5, 5, False),
        ("==", 3, 3.0, True),
        ("!=", 3, 4, True),
        ("==", "bow", "bow", True),
        ("!=", "bow", "axe", True),
        ("==", "bow", "Bow", False),
        ("==", True, True, True),
        ("==", True, 1, False),
    ],
)
def test_operators(op, operand, actual, expected):
    condition = Condition.parse({"field": "traits.x", "op": op, "value": operand})
    assert condition.holds(ev(x=actual)) is expected


def test_missing_trait_or_wrong_type_fails_every_comparison():
    for op in (">=", "<", "==", "!="):
        condition = Condition.parse({"field": "traits.score", "op": op, "value": 5})
        assert not condition.holds(ev())  # missing
        assert not condition.holds(ev(score="5"))  # a string is not a number
        assert not condition.holds(ev(score=True))  # nor is a boolean
    assert not Condition.parse({"field": "traits.w", "op": "!=", "value": "axe"}).holds(ev(w=3))


def test_exists_and_not_exists():
    exists = Condition.parse({"field": "traits.weapon", "op": "exists"})
    absent = Condition.parse({"field": "traits.weapon", "op": "not exists"})
    assert exists.holds(ev(weapon="bow")) and not exists.holds(ev())
    assert absent.holds(ev()) and not absent.holds(ev(weapon="bow"))
    assert Condition.parse({"field": "value", "op": "exists"}).holds(ev(value=0))


def test_conditions_on_the_event_value():
    rule = Rule.build(event="GAME_OVER", conditions=[{"field": "value", "op": ">=", "value": 1000}])
    assert rule.passes(ev("GAME_OVER", value=1200))
    assert not rule.passes(ev("GAME_OVER", value=999))
    assert not rule.passes(ev("GAME_OVER"))


def test_conditions_are_anded():
    rule = Rule.build(
        event="KILL_PLAYER",
        conditions=[
            {"field": "traits.weapon", "op": "==", "value": "bow"},
            {"field": "traits.distance", "op": ">", "value": 50},
        ],
    )
    assert rule.passes(ev("KILL_PLAYER", weapon="bow", distance=60))
    assert not rule.passes(ev("KILL_PLAYER", weapon="bow", distance=40))
    assert not rule.passes(ev("KILL_PLAYER", weapon="axe", distance=60))


@pytest.mark.parametrize(
    "raw",
    [
        {"field": "score", "op": ">=", "value": 1},  # not value / traits.<name>
        {"field": "traits.x", "op": "~=", "value": 1},
        {"field": "traits.x", "op": ">=", "value": "abc"},
        {"field": "traits.x", "op": "==", "value": [1]},
        {"field": "traits.", "op": "exists"},
    ],
)
def test_invalid_conditions_are_refused(raw):
    with pytest.raises(RuleError):
        Condition.parse(raw)


def test_invalid_completions_are_refused():
    with pytest.raises(RuleError):
        Rule.build(event="E", completion="average")
    with pytest.raises(RuleError):
        Rule.build(event="E", completion="count", threshold=0)
    with pytest.raises(RuleError):
        Rule.build(event="E", completion="sum", threshold=5)


def test_kills_mission_of_the_original_spec():
    rule = Rule.build(
        event="GAME_END", conditions=[{"field": "traits.kills", "op": ">=", "value": 10}]
    )
    assert replay(rule, [ev("GAME_END", kills=9)], repeatable=False).completions == 0
    assert (
        replay(
            rule, [ev("GAME_END", kills=9), ev("GAME_END", kills=10)], repeatable=False
        ).completions
        == 1
    )


def test_consecutive_run_is_reset_by_a_failing_match_but_not_by_other_events():
    rule = Rule.build(
        event="MATCH_END",
        conditions=[{"field": "traits.score", "op": ">=", "value": 1000}],
        completion="consecutive",
        threshold=3,
    )
    tally = Tally()
    for event in (ev("MATCH_END", score=1500), ev("MATCH_END", score=1100), ev("KILL_PLAYER")):
        tally = step(rule, tally, event).tally
    assert tally.run == 2  # the other event did not touch the run
    result = step(rule, tally, ev("MATCH_END", score=400))
    assert result.tally.run == 0 and result.tally.count == 2
    stream = [ev("MATCH_END", score=s) for s in (1500, 1100, 400, 1000, 1200)]
    assert replay(rule, stream, repeatable=False).completions == 0
    assert replay(rule, [*stream, ev("MATCH_END", score=2000)], repeatable=False).completions == 1


def test_sum_of_a_trait_over_passing_events():
    rule = Rule.build(
        event="PURCHASE",
        conditions=[{"field": "traits.item_id", "op": "!=", "value": "refund"}],
        completion="sum",
        threshold=20,
        sum_field="traits.usd",
    )
    stream = [
        ev("PURCHASE", usd=9.99, item_id="a"),
        ev("PURCHASE", usd=50, item_id="refund"),
        ev("PURCHASE", usd=9.99, item_id="b"),
    ]
    assert replay(rule, stream, repeatable=False).completions == 0
    assert (
        replay(rule, [*stream, ev("PURCHASE", usd=0.05, item_id="c")], repeatable=False).completions
        == 1
    )


def test_repeatable_mission_starts_again_from_zero():
    rule = Rule.build(event="WIN", completion="count", threshold=2)
    result = replay(rule, [ev("WIN")] * 5, repeatable=True)
    assert result.completions == 2 and result.tally.count == 1
    assert replay(rule, [ev("WIN")] * 5, repeatable=False).completions == 1


def test_rule_round_trips_its_conditions():
    raw = {"field": "traits.kills", "op": ">=", "value": 10.0}
    assert Condition.parse(raw).to_dict() == raw
    assert Condition.parse({"field": "value", "op": "exists"}).to_dict() == {
        "field": "value",
        "op": "exists",
    }


def test_a_whole_number_comes_back_as_it_was_typed():
    from models.offer_schemas import ConditionIn

    stored = Condition.parse({"field": "traits.kills", "op": ">=", "value": 10}).to_dict()
    assert repr(stored["value"]) == "10"  # not 10.0, in the editor, the tester and the list
    assert repr(ConditionIn(field="value", op=">=", value=10).value) == "10"
    assert Condition.parse({"field": "value", "op": ">=", "value": 2.5}).to_dict()["value"] == 2.5
    assert Condition.parse({"field": "value", "op": ">=", "value": 10}).operand == 10.0


def test_a_rule_definition_becomes_the_engines_rule():
    from models.offer_schemas import RuleIn

    definition = RuleIn.model_validate(
        {
            "event": "SCORE",
            "conditions": [{"field": "traits.bot", "op": "not exists"}],
            "completion": {"kind": "count", "threshold": 2, "field": "value"},
        }
    )
    rule = Rule.from_input(definition)
    assert rule == Rule("SCORE", (Condition("traits.bot", "not exists"),), "count", 2.0, field=None)
