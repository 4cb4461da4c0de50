"""The editor's forms and the rule tester: the same schemas and engine as ingestion."""

from __future__ import annotations

import pytest

from api.services.designer import (
    FormError,
    mission_from_form,
    parse_events,
    rule_from_form,
)
from api.services.designer import (
    test_rule as run_test,
)

RULE = {
    "rule_event": "MATCH_END",
    "cond_field_0": "value",
    "cond_op_0": ">=",
    "cond_value_0": "1000",
    "completion": "consecutive",
    "threshold": "3",
}


def test_the_tester_shows_a_consecutive_run_reset_by_a_failing_match():
    events = parse_events(
        "MATCH_END 1200\nMATCH_END 1500\nLOGIN\nMATCH_END 300\n"
        "MATCH_END 1000\nMATCH_END 1100 mode=ranked\nMATCH_END 2000\nMATCH_END 5000"
    )
    steps = run_test(rule_from_form(RULE), events, repeatable=False)
    assert [(s.outcome, s.run, s.completed) for s in steps] == [
        ("passes", 1, False),
        ("passes", 2, False),
        ("other event", 2, False),  # other events do not touch the run
        ("fails the filter", 0, False),  # the reset
        ("passes", 1, False),
        ("passes", 2, False),
        ("passes", 3, True),
    ]  # a one-time mission stops at its completion
    assert steps[5].traits == "mode=ranked"


def test_a_repeatable_mission_starts_again_after_each_completion():
    rule = rule_from_form({"rule_event": "KILL", "completion": "count", "threshold": "2"})
    steps = run_test(rule, parse_events("KILL\nKILL\nKILL\nKILL"), repeatable=True)
    assert [s.completed for s in steps] == [False, True, False, True]


def test_events_may_be_json_lines():
    [event] = parse_events('{"event": "SCORE", "value": 5, "traits": {"map": "dust"}}')
    assert event == {"event": "SCORE", "value": 5, "traits": {"map": "dust"}}


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "at least one"), ("{nope", "not JSON"), ("SCORE high", "value is a number")],
)
def test_bad_test_events_say_which_line(text, message):
    with pytest.raises(FormError) as refused:
        parse_events(text)
    assert message in refused.value.errors["events"]


def test_a_form_becomes_a_mission_definition():
    form = {
        **RULE,
        "title": "Three good matches",
        "destination_url": "https://game.example/",
        "payout": "1.25",
        "cap": "100",
        "time_limit_hours": "2",
        "os_android": "Android",
        "countries_include": "us, de",
        "tags": "pvp, ranked",
        "is_active": "on",
    }
    mission = mission_from_form(form, mission_id=None)
    assert mission.payout_micros == 1_250_000
    assert (mission.cap, mission.timeLimitSeconds) == (100, 7200)
    assert mission.operatingSystem == ["Android"]
    assert mission.geotargeting.countriesInclude == ["DE", "US"]
    assert mission.rule.completion.kind == "consecutive"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"title": ""}, "title"),
        ({"destination_url": "game.example"}, "destination_url"),
        ({"payout": "-1"}, "payout"),
        ({"countries_include": "USA"}, "countries_include"),
        ({"rule_event": "has space"}, "rule_event"),
        ({"cond_value_0": "high"}, "rule"),
        ({"threshold": "0"}, "threshold"),
    ],
)
def test_form_errors_name_the_input(overrides, field):
    form = {**RULE, "title": "T", "destination_url": "https://g.example/", "payout": "1"}
    with pytest.raises(FormError) as refused:
        mission_from_form({**form, **overrides}, mission_id=None)
    assert field in refused.value.errors
