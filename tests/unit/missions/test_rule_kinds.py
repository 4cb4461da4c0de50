"""The rule engine's kinds beyond count, consecutive and sum (api/missions/rules.py): OR
across matchers, `in` lists, max, min, distinct, days, streak, per group, windows and
sequences; out-of-order events, repeats, time zones across a DST change, bounded state."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from api.missions.rules import (
    GROUP_LIMIT,
    Condition,
    Rule,
    RuleError,
    Tally,
    is_complete,
    progress,
    replay,
    step,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def ev(name: str = "E", value=None, *, at: datetime = T0, group=None, **traits) -> dict:
    return {"event": name, "value": value, "traits": traits or None, "time": at, "groupId": group}


def run(rule: Rule, events: list[dict]) -> Tally:
    tally = Tally()
    for event in events:
        tally = step(rule, tally, event).tally
    return tally


def completions(rule: Rule, events: list[dict], *, repeatable: bool = False) -> int:
    return replay(rule, events, repeatable=repeatable).completions


# --- matching ---------------------------------------------------------------------------


def test_any_of_passes_an_event_that_passes_any_matcher_of_its_name():
    rule = Rule.build(
        any_of=[
            {"event": "KILL_PLAYER"},
            {
                "event": "KILL_NPC",
                "conditions": [{"field": "traits.boss", "op": "==", "value": True}],
            },
        ],
        threshold=3,
    )
    assert rule.events == {"KILL_PLAYER", "KILL_NPC"}
    stream = [ev("KILL_PLAYER"), ev("KILL_NPC", boss=False), ev("KILL_NPC", boss=True), ev("X")]
    assert [step(rule, Tally(), e).passed for e in stream] == [True, False, True, False]
    assert completions(rule, stream) == 0
    assert completions(rule, [*stream, ev("KILL_PLAYER")]) == 1


def test_two_matchers_of_one_name_are_an_or_of_their_conditions():
    rule = Rule.build(
        any_of=[
            {"event": "END", "conditions": [{"field": "traits.kills", "op": ">=", "value": 10}]},
            {"event": "END", "conditions": [{"field": "traits.assists", "op": ">=", "value": 20}]},
        ]
    )
    assert rule.passes(ev("END", kills=10)) and rule.passes(ev("END", assists=25))
    assert not rule.passes(ev("END", kills=9, assists=19))


@pytest.mark.parametrize(
    ("op", "listed", "actual", "expected"),
    [
        ("in", ["desert", "jungle"], "desert", True),
        ("in", ["desert", "jungle"], "Desert", False),
        ("in", [1, 2.5], 2.5, True),
        ("in", [1, 2], 1.0, True),
        ("in", ["1"], 1, False),  # a number is not the string of its digits
        ("not in", ["desert"], "arctic", True),
        ("not in", ["desert"], "desert", False),
        ("in", ["true"], True, False),  # a boolean is in no list
        ("not in", ["x"], True, False),
    ],
)
def test_in_and_not_in(op, listed, actual, expected):
    condition = Condition.parse({"field": "traits.map", "op": op, "value": listed})
    assert condition.holds(ev(map=actual)) is expected


def test_a_missing_field_is_neither_in_nor_not_in_a_list():
    for op in ("in", "not in"):
        assert not Condition.parse({"field": "traits.map", "op": op, "value": ["a"]}).holds(ev())


@pytest.mark.parametrize("listed", [[], "desert", [["a"]], [True], [None], list(range(101))])
def test_a_list_that_is_not_a_list_of_strings_or_numbers_is_refused(listed):
    with pytest.raises(RuleError):
        Condition.parse({"field": "traits.map", "op": "in", "value": listed})


def test_a_list_condition_round_trips_sorted():
    raw = {"field": "traits.map", "op": "in", "value": ["jungle", 2, "desert", 10]}
    assert Condition.parse(raw).to_dict()["value"] == [2, 10, "desert", "jungle"]


def test_a_condition_on_the_group():
    condition = Condition.parse({"field": "groupId", "op": "exists"})
    assert condition.holds(ev(group="match-1")) and not condition.holds(ev())


# --- max, min, distinct ----------------------------------------------------------------


def test_max_reaches_level_20_whatever_came_before():
    rule = Rule.build(event="LEVEL_UP", completion="max", threshold=20, field="value")
    tally = run(rule, [ev("LEVEL_UP", 5), ev("LEVEL_UP", 19), ev("LEVEL_UP", 3)])
    assert (tally.total, progress(rule, tally), is_complete(rule, tally)) == (19, (19, 20), False)
    assert completions(rule, [ev("LEVEL_UP", 12), ev("LEVEL_UP", 20)]) == 1
    assert completions(rule, [ev("LEVEL_UP"), ev("LEVEL_UP", 25)]) == 1  # no value: no level


def test_min_is_a_race_under_60_seconds_and_counts_nothing_before_a_value():
    rule = Rule.build(event="RACE_END", completion="min", threshold=60, field="traits.seconds")
    assert progress(rule, Tally()) == (0, 60) and not is_complete(rule, Tally())
    assert completions(rule, [ev("RACE_END", seconds=75), ev("RACE_END", seconds=61)]) == 0
    assert completions(rule, [ev("RACE_END", seconds=75), ev("RACE_END", seconds=59.9)]) == 1
    zero = Rule.build(event="END", completion="min", threshold=0, field="traits.deaths")
    assert completions(zero, [ev("END", deaths=1), ev("END", deaths=0)]) == 1


def test_distinct_counts_different_maps_and_keeps_no_more_than_it_needs():
    rule = Rule.build(event="MATCH_END", completion="distinct", threshold=3, field="traits.map")
    maps = ["desert", "desert", "jungle", 7, "7", None]
    tally = run(rule, [ev("MATCH_END", map=m) for m in maps])
    assert tally.state == ["desert", "jungle", 7.0]  # full at three: "7" and None not kept
    assert is_complete(rule, tally)
    flood = run(rule, [ev("MATCH_END", map=f"m{i}") for i in range(1000)])
    assert len(flood.state) == 3  # a million values keep three


def test_distinct_treats_a_number_and_its_string_apart():
    rule = Rule.build(event="E", completion="distinct", threshold=2, field="traits.x")
    assert completions(rule, [ev(x=7), ev(x=7.0)]) == 0
    assert completions(rule, [ev(x=7), ev(x="7")]) == 1


# --- days and streaks -------------------------------------------------------------------


def days_apart(*offsets: float, zone: str = "UTC", hour: int = 12) -> list[datetime]:
    start = datetime(2026, 3, 1, hour, tzinfo=ZoneInfo(zone))
    return [start + timedelta(days=d) for d in offsets]


def test_days_counts_distinct_calendar_days_in_the_rules_time_zone():
    rule = Rule.build(event="PLAY", completion="days", threshold=3, time_zone="America/New_York")
    # 23:30 and 00:30 New York time: two days there, one day in UTC.
    late = datetime(2026, 3, 2, 4, 30, tzinfo=UTC)  # 23:30 on 1 March in New York
    early = datetime(2026, 3, 2, 5, 30, tzinfo=UTC)  # 00:30 on 2 March
    assert progress(rule, run(rule, [ev("PLAY", at=late), ev("PLAY", at=early)])) == (2, 3)
    utc = Rule.build(event="PLAY", completion="days", threshold=3)
    assert progress(utc, run(utc, [ev("PLAY", at=late), ev("PLAY", at=early)])) == (1, 3)
    assert completions(rule, [ev("PLAY", at=t) for t in days_apart(0, 0.1, 5, 9)]) == 1


def test_a_streak_across_the_spring_dst_change_has_no_missing_day():
    # Europe/Berlin moves to summer time on 29 March 2026: that day has 23 hours.
    rule = Rule.build(event="LOGIN", completion="streak", threshold=3, time_zone="Europe/Berlin")
    zone = ZoneInfo("Europe/Berlin")
    stream = [datetime(2026, 3, d, 0, 30, tzinfo=zone) for d in (28, 29, 30)]
    assert completions(rule, [ev("LOGIN", at=t) for t in stream]) == 1
    # 23:30 on the 28th and 00:30 on the 30th are 25 hours apart but a day is missed.
    gap = [datetime(2026, 3, 28, 23, 30, tzinfo=zone), datetime(2026, 3, 30, 0, 30, tzinfo=zone)]
    assert run(rule, [ev("LOGIN", at=t) for t in gap]).run == 1


def test_a_missed_day_starts_the_streak_again_and_a_failing_event_does_not():
    rule = Rule.build(
        event="LOGIN",
        conditions=[{"field": "traits.bot", "op": "not exists"}],
        completion="streak",
        threshold=7,
    )
    days = [ev("LOGIN", at=t) for t in days_apart(0, 1, 2, 3, 5, 6)]
    tally = run(rule, [*days, ev("LOGIN", at=days_apart(6.1)[0], bot=True)])
    assert (tally.run, progress(rule, tally)) == (2, (2, 7))  # days 5 and 6
    assert completions(rule, [ev("LOGIN", at=t) for t in days_apart(*range(7))]) == 1


def test_a_repeated_streak_or_days_counts_the_next_round_from_the_next_day():
    # Two logins a day for 14 days: a 7-day streak pays on the 7th day and the 14th, not the 13th
    # (the second login of day 7 does not start the next streak).
    logins = [ev("LOGIN", at=t) for d in range(14) for t in days_apart(d, d + 0.01)]
    for kind in ("streak", "days"):
        rule = Rule.build(event="LOGIN", completion=kind, threshold=7)
        outcome = replay(rule, logins, repeatable=True)
        assert outcome.completions == 2, kind
        assert progress(rule, outcome.tally) == (0, 7)
        assert replay(rule, logins[:26], repeatable=True).completions == 1  # to day 13
    # The other kinds start from nothing: the same maps count again in the next round.
    maps = Rule.build(event="MATCH", completion="distinct", threshold=2, field="traits.map")
    rounds = [ev("MATCH", map=m) for m in ("desert", "jungle", "desert", "jungle")]
    assert completions(maps, rounds, repeatable=True) == 2


def test_a_day_that_arrives_late_fills_its_gap():
    rule = Rule.build(event="LOGIN", completion="streak", threshold=3)
    first, second, third = days_apart(0, 1, 2)
    assert run(rule, [ev("LOGIN", at=first), ev("LOGIN", at=third)]).run == 1
    assert completions(rule, [ev("LOGIN", at=t) for t in (first, third, second)]) == 1


def test_a_streak_keeps_no_more_days_than_its_threshold():
    rule = Rule.build(event="LOGIN", completion="streak", threshold=5)
    tally = run(rule, [ev("LOGIN", at=t) for t in days_apart(*range(0, 400, 2))])
    assert len(tally.state) <= 5 and tally.run == 1


# --- per group and windows --------------------------------------------------------------


def test_ten_kills_in_one_match():
    rule = Rule.build(event="KILL", completion="count", threshold=3, per="groupId")
    spread = [ev("KILL", group=g) for g in ("m1", "m2", "m1", "m2", None)]
    tally = run(rule, spread)
    assert progress(rule, tally) == (2, 3) and not is_complete(rule, tally)
    assert completions(rule, [*spread, ev("KILL", group="m2")]) == 1


def test_per_a_trait_and_consecutive_runs_within_the_group():
    rule = Rule.build(
        event="ROUND",
        conditions=[{"field": "value", "op": ">", "value": 0}],
        completion="consecutive",
        threshold=2,
        per="traits.match",
    )
    stream = [ev("ROUND", 1, match="a"), ev("ROUND", 1, match="b"), ev("ROUND", 0, match="a")]
    assert completions(rule, [*stream, ev("ROUND", 1, match="a")]) == 0  # a's run was broken
    assert completions(rule, [*stream, ev("ROUND", 1, match="b")]) == 1


@pytest.mark.parametrize(
    ("completion", "field", "threshold", "values"),
    [
        ("distinct", "traits.weapon", 2, ["bow", "axe"]),
        ("sum", "value", 10, [6, 6]),
        ("max", "value", 10, [4, 9]),
    ],
)
def test_per_never_adds_up_across_groups(completion, field, threshold, values):
    rule = Rule.build(
        event="KILL", completion=completion, threshold=threshold, field=field, per="groupId"
    )
    apart = [ev("KILL", v, group=f"m{i}", weapon=v) for i, v in enumerate(values)]
    assert completions(rule, apart) == 0
    assert progress(rule, run(rule, apart))[0] < threshold
    together = [ev("KILL", v, group="m9", weapon=v) for v in values]
    if completion != "max":  # a max is one event's: 9 is below 10 in any group
        assert completions(rule, together) == 1


def test_per_keeps_the_latest_groups_only():
    rule = Rule.build(event="KILL", completion="count", threshold=2, per="groupId")
    tally = run(rule, [ev("KILL", group=f"m{i}") for i in range(GROUP_LIMIT + 10)])
    assert len(tally.state) == GROUP_LIMIT
    assert tally.state[-1][0] == f"s:m{GROUP_LIMIT + 9}"


def test_ten_kills_within_an_hour():
    rule = Rule.build(event="KILL", threshold=3, window_seconds=3600)
    spaced = [ev("KILL", at=T0 + timedelta(minutes=m)) for m in (0, 50, 100, 150)]
    assert completions(rule, spaced) == 0  # never three in one hour
    close = [ev("KILL", at=T0 + timedelta(minutes=m)) for m in (0, 50, 100, 110)]
    assert completions(rule, close) == 1  # 50, 100 and 110
    assert len(run(rule, spaced).state) <= 2


def test_a_windowed_sum_counts_the_window_only():
    rule = Rule.build(
        event="SPEND", completion="sum", threshold=100, field="value", window_seconds=86400
    )
    stream = [ev("SPEND", 60, at=T0), ev("SPEND", 50, at=T0 + timedelta(days=2))]
    assert completions(rule, stream) == 0
    assert completions(rule, [*stream, ev("SPEND", 50, at=T0 + timedelta(days=2, hours=1))]) == 1


# --- sequences --------------------------------------------------------------------------


def test_tutorial_then_a_win_within_a_day():
    rule = Rule.build(
        steps=[
            {"event": "TUTORIAL_DONE"},
            {
                "event": "MATCH_END",
                "conditions": [{"field": "traits.won", "op": "==", "value": True}],
            },
        ],
        within_seconds=86400,
    )
    win = {"won": True}
    late = [ev("TUTORIAL_DONE"), ev("MATCH_END", at=T0 + timedelta(days=2), **win)]
    assert completions(rule, late) == 0
    tally = run(rule, late)
    assert progress(rule, tally) == (0, 2)  # the tutorial's day ran out
    order = [ev("MATCH_END", **win), ev("TUTORIAL_DONE", at=T0 + timedelta(seconds=1))]
    assert completions(rule, order) == 0  # the win came first
    assert progress(rule, run(rule, order)) == (1, 2)
    again = [*late, ev("TUTORIAL_DONE", at=T0 + timedelta(days=3))]
    assert (
        completions(rule, [*again, ev("MATCH_END", at=T0 + timedelta(days=3, hours=5), **win)]) == 1
    )


def test_one_event_takes_a_sequence_one_step_at_a_time():
    rule = Rule.build(steps=[{"event": "A"}, {"event": "A"}, {"event": "B"}])
    assert progress(rule, run(rule, [ev("A")])) == (1, 3)
    assert completions(rule, [ev("A"), ev("B")]) == 0
    assert completions(rule, [ev("A"), ev("A"), ev("B")]) == 1


def test_a_repeatable_sequence_starts_again_after_each_completion():
    rule = Rule.build(steps=[{"event": "A"}, {"event": "B"}])
    assert completions(rule, [ev("A"), ev("B"), ev("B"), ev("A"), ev("B")], repeatable=True) == 2


def test_a_step_that_arrives_late_does_not_complete_a_sequence_out_of_order():
    rule = Rule.build(steps=[{"event": "TUTORIAL_DONE"}, {"event": "WIN"}], within_seconds=3600)
    tutorial = run(rule, [ev("TUTORIAL_DONE", at=T0 + timedelta(minutes=10))])
    # A win timed before the tutorial, in a later batch: not after the first step.
    late = step(rule, tutorial, ev("WIN", at=T0))
    assert not late.completed and progress(rule, late.tally) == (1, 2)
    assert step(rule, late.tally, ev("WIN", at=T0 + timedelta(minutes=20))).completed


# --- bounds and progress as time passes ---------------------------------------------------


def test_a_failing_event_makes_no_group_and_long_values_are_kept_short():
    rule = Rule.build(
        event="KILL",
        conditions=[{"field": "value", "op": ">=", "value": 1}],
        per="groupId",
        threshold=3,
    )
    tally = run(
        rule, [ev("KILL", 1, group="m1"), *(ev("KILL", 0, group=f"x{i}") for i in range(50))]
    )
    assert [group for group, _ in tally.state] == ["s:m1"]
    long = "x" * 10_000
    distinct = Rule.build(event="E", completion="distinct", threshold=3, field="traits.nick")
    kept = run(distinct, [ev("E", nick=long), ev("E", nick=long + "y"), ev("E", nick=long)]).state
    assert len(kept) == 2 and all(len(value) < 100 for value in kept)
    grouped = run(rule, [ev("KILL", 1, group=long)]).state
    assert len(grouped[0][0]) < 100


def test_a_windowed_count_keeps_no_more_events_than_its_target():
    rule = Rule.build(event="KILL", threshold=5, window_seconds=3600)
    burst = [ev("KILL", at=T0 + timedelta(seconds=s)) for s in range(4)]
    assert len(run(rule, burst).state) == 4
    repeat = Rule.build(event="KILL", threshold=5, window_seconds=3600)
    assert completions(repeat, [ev("KILL", at=T0 + timedelta(seconds=s)) for s in range(50)]) == 1
    with pytest.raises(RuleError, match="at most 1,000"):
        Rule.build(event="KILL", threshold=1001, window_seconds=60)


def test_progress_as_of_now_leaves_out_what_time_has_undone():
    window = Rule.build(event="KILL", threshold=3, window_seconds=3600)
    kills = run(window, [ev("KILL", at=T0), ev("KILL", at=T0 + timedelta(minutes=50))])
    assert progress(window, kills, T0 + timedelta(minutes=55)) == (2, 3)
    assert progress(window, kills, T0 + timedelta(minutes=70)) == (1, 3)
    assert progress(window, kills, T0 + timedelta(hours=3)) == (0, 3)
    streak = Rule.build(event="LOGIN", completion="streak", threshold=7)
    two = run(streak, [ev("LOGIN", at=t) for t in days_apart(0, 1)])
    assert progress(streak, two, days_apart(2)[0]) == (2, 7)  # today can still continue it
    assert progress(streak, two, days_apart(3)[0]) == (0, 7)  # a day was missed
    steps = Rule.build(steps=[{"event": "A"}, {"event": "B"}], within_seconds=60)
    started = run(steps, [ev("A")])
    assert progress(steps, started, T0 + timedelta(seconds=30)) == (1, 2)
    assert progress(steps, started, T0 + timedelta(seconds=90)) == (0, 2)


# --- what is refused --------------------------------------------------------------------


@pytest.mark.parametrize(
    "parts",
    [
        {},  # nothing to match
        {"event": "E", "steps": [{"event": "A"}, {"event": "B"}]},
        {"steps": [{"event": "A"}]},  # one step is no sequence
        {"event": "E", "within_seconds": 60},  # within belongs to steps
        {"event": "E", "completion": "max", "threshold": 5},  # no field
        {"event": "E", "completion": "distinct", "threshold": 2, "field": "name"},
        {"event": "E", "completion": "days", "time_zone": "Mars/Olympus"},
        {"event": "E", "completion": "count", "time_zone": "Europe/Berlin"},
        {"event": "E", "completion": "days", "per": "groupId"},
        {"event": "E", "per": "value"},
        {"event": "E", "window_seconds": 0},
        {"event": "E", "window_seconds": 60, "completion": "max", "field": "value"},
        {"event": "E", "window_seconds": 60, "per": "groupId"},
        {"event": "E", "completion": "count", "threshold": 0},
        {"event": "E", "completion": "min", "threshold": -1, "field": "value"},
        {"any_of": [{"event": ""}]},
    ],
)
def test_a_rule_that_cannot_be_evaluated_is_refused(parts):
    with pytest.raises(RuleError):
        Rule.build(**parts)


# --- definitions (models/offer_schemas.py) ----------------------------------------------


def _refusal(definition: dict) -> str:
    from pydantic import ValidationError

    from models.offer_schemas import RuleIn

    with pytest.raises(ValidationError) as refused:
        RuleIn.model_validate(definition)
    return str(refused.value)


def test_a_definition_names_one_shape_and_keeps_each_part_where_it_belongs():
    assert "A rule has one of event, anyOf or steps." in _refusal(
        {"event": "A", "anyOf": [{"event": "B"}]}
    )
    assert "conditions go with event" in _refusal(
        {"anyOf": [{"event": "B"}], "conditions": [{"field": "value", "op": "exists"}]}
    )
    assert "leave completion out" in _refusal(
        {"steps": [{"event": "A"}, {"event": "B"}], "completion": {"kind": "sum", "field": "value"}}
    )
    assert "within belongs to steps" in _refusal({"event": "A", "within": {"seconds": 60}})
    assert "per is" in _refusal({"event": "A", "per": "value"})


def test_what_a_players_progress_keeps_is_bounded_by_the_largest_targets():
    assert "A distinct target is at most 10,000." in _refusal(
        {"event": "A", "completion": {"kind": "distinct", "threshold": 10_001, "field": "value"}}
    )
    assert "A streak target is at most 3,660." in _refusal(
        {"event": "A", "completion": {"kind": "streak", "threshold": 4000}}
    )
    with pytest.raises(RuleError, match="at most 10,000"):
        Rule.build(event="A", completion="distinct", threshold=20_000, field="value")


def test_typed_lists_and_group_ids_read_as_people_mean_them():
    from models.offer_schemas import RuleIn

    listed = RuleIn.model_validate(
        {
            "event": "A",
            "conditions": [{"field": "traits.map", "op": "in", "value": "desert, 3, 2.5"}],
        }
    )
    assert listed.conditions[0].value == ["desert", 3, 2.5]
    # A group's id is always text: 7 typed for it is "7", and the engine matches it.
    group = RuleIn.model_validate(
        {"event": "A", "conditions": [{"field": "groupId", "op": "==", "value": 7}]}
    )
    assert group.conditions[0].value == "7"
    rule = Rule.from_input(group)
    assert rule.passes(ev("A", group="7")) and not rule.passes(ev("A", group="8"))
    assert "groupId is text" in _refusal(
        {"event": "A", "conditions": [{"field": "groupId", "op": "==", "value": True}]}
    )
    assert "compares numbers" in _refusal(
        {"event": "A", "conditions": [{"field": "groupId", "op": ">=", "value": 7}]}
    )
