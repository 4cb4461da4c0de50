"""The rule tester (api/missions/rule_tester.py): typed events (`tester_events.py`) and a
player's stored ones (`tester_replay.py`) through the same engine as ingestion, with why
each passes or not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from api.core.db import new_session, write_session
from api.missions import tester_replay
from api.missions.forms import FormError
from api.missions.rule_tester import rule_from_form, run_rule_test, try_rule
from api.missions.rules import Rule
from api.missions.tester_events import parse_events
from api.missions.tester_replay import player_ids, replay_player
from models import Event
from models.offer_schemas import RuleIn
from tests.factories import make_game

RULE = {
    "rule.event": "MATCH_END",
    "rule.conditions.0.field": "value",
    "rule.conditions.0.op": ">=",
    "rule.conditions.0.value": "1000",
    "rule.conditions.1.field": "",
    "rule.conditions.1.op": ">=",
    "rule.conditions.1.value": "",
    "rule.completion.kind": "consecutive",
    "rule.completion.threshold": "3",
}


def test_the_tester_shows_a_consecutive_run_reset_by_a_failing_match():
    events = parse_events(
        "MATCH_END 1200\nMATCH_END 1500\nLOGIN\nMATCH_END 300\n"
        "MATCH_END 1000\nMATCH_END 1100 mode=ranked\nMATCH_END 2000\nMATCH_END 5000"
    )
    steps = try_rule(rule_from_form(RULE), events, repeatable=False)
    assert [(s.outcome, s.run, s.completed) for s in steps] == [
        ("passes", 1, False),
        ("passes", 2, False),
        ("other event", 2, False),  # other events do not touch the run
        ("fails the filter", 0, False),  # the reset
        ("passes", 1, False),
        ("passes", 2, False),
        ("passes", 3, True),
        ("passes", 3, False),  # after completion: shown, counted no more
    ]
    assert [s.after_completion for s in steps] == [False] * 7 + [True]
    assert steps[5].traits == "mode=ranked"


def test_every_event_after_a_one_time_completion_is_listed_with_its_outcome():
    tested = run_rule_test(
        form={
            "rule.event": "KILL",
            "rule.conditions.0.field": "traits.headshot",
            "rule.conditions.0.op": "==",
            "rule.conditions.0.value": "true",
            "rule.completion.threshold": "1",
            "events": "KILL headshot=true\nKILL headshot=false\nLOGIN\nKILL headshot=true",
        },
        repeatable=False,
    )
    assert tested.summary == "KILL where headshot = true, once"
    assert tested.completed_at == 1
    assert [(s.n, s.outcome, s.count, s.completed, s.after_completion) for s in tested.steps] == [
        (1, "passes", 1, True, False),
        (2, "fails the filter", 1, False, True),
        (3, "other event", 1, False, True),
        (4, "passes", 1, False, True),  # would pass, changes nothing
    ]


def test_a_repeatable_mission_starts_again_after_each_completion():
    rule = rule_from_form(
        {"rule.event": "KILL", "rule.completion.kind": "count", "rule.completion.threshold": "2"}
    )
    steps = try_rule(rule, parse_events("KILL\nKILL\nKILL\nKILL"), repeatable=True)
    assert [s.completed for s in steps] == [False, True, False, True]


def test_events_may_be_json_lines():
    [event] = parse_events('{"event": "SCORE", "value": 5, "traits": {"map": "dust"}}')
    assert event == {"event": "SCORE", "value": 5, "traits": {"map": "dust"}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one"),
        ("{nope", "not JSON"),
        ("SCORE high", "value is a number"),
        ('{"event": "SCORE", "value": "high"}', "line 1: the value is a number"),
    ],
)
def test_bad_test_events_say_which_line(text, message):
    with pytest.raises(FormError) as refused:
        parse_events(text)
    assert message in refused.value.errors["events"]


def test_the_tester_says_which_compared_field_is_not_a_number():
    form = {
        "rule.event": "MATCH_END",
        "rule.conditions.0.field": "traits.kills",
        "rule.conditions.0.op": ">=",
        "rule.conditions.0.value": "3",
        "events": (
            "MATCH_END kills=4\nLOGIN kills=none\n# a comment\nMATCH_END kills=three\n"
            '{"event": "MATCH_END", "traits": {"kills": true}}'
        ),
    }
    with pytest.raises(FormError) as refused:
        run_rule_test(form=form, repeatable=False)
    assert refused.value.errors == {
        "events": "line 4: kills is “three”, not a number; line 5: kills is true, not a number"
    }
    # Compared as text, the same trait may hold any word.
    form |= {"rule.conditions.0.op": "==", "rule.conditions.0.value": "three"}
    form["events"] = "MATCH_END kills=three"
    assert run_rule_test(form=form, repeatable=False).completed_at == 1


def test_the_tester_says_why_and_shows_progress_for_every_kind():
    def outcomes(rule: dict, events: str) -> list[tuple[str, str, str]]:
        steps = try_rule(
            Rule.from_input(RuleIn.model_validate(rule)), parse_events(events), repeatable=False
        )
        return [(s.outcome, s.why, s.progress) for s in steps]

    assert outcomes(
        {
            "anyOf": [
                {
                    "event": "KILL",
                    "conditions": [{"field": "traits.map", "op": "in", "value": ["desert"]}],
                },
                {"event": "WIN"},
            ]
        },
        '{"event": "KILL", "traits": {"map": "jungle"}}\nLOGIN\nWIN',
    ) == [
        ("fails the filter", "group 1: map in desert does not hold (map is jungle)", "0 / 1"),
        ("other event", "not an event the rule reads", "0 / 1"),
        ("passes", "", "1 / 1"),
    ]
    assert outcomes(
        {
            "steps": [
                {"event": "TUTORIAL"},
                {
                    "event": "MATCH",
                    "conditions": [{"field": "traits.won", "op": "==", "value": True}],
                },
                {"event": "LEVEL"},
            ],
            "within": {"seconds": 3600},
        },
        '{"event": "MATCH", "traits": {"won": true}, "time": "2026-11-20T10:00:00Z"}\n'
        '{"event": "TUTORIAL", "time": "2026-11-20T10:01:00Z"}\n'
        '{"event": "MATCH", "traits": {"won": false}, "time": "2026-11-20T10:02:00Z"}\n'
        '{"event": "MATCH", "traits": {"won": true}, "time": "2026-11-20T10:03:00Z"}\n'
        "LEVEL\n"
        '{"event": "LEVEL", "time": "2026-11-20T10:04:00Z"}',
    ) == [
        ("passes", "step 2 of 3, before step 1: it waits for that", "0 / 3"),
        ("passes", "step 1 of 3", "1 / 3"),
        ("fails the filter", "step 2: won = true does not hold (won is false)", "1 / 3"),
        ("passes", "step 2 of 3", "2 / 3"),
        (
            "fails the filter",
            "no time: steps are in time order, an event without one is none",
            "2 / 3",
        ),
        ("passes", "step 3 of 3", "3 / 3"),
    ]
    berlin = outcomes(
        {
            "event": "LOGIN",
            "completion": {"kind": "streak", "threshold": 2, "timeZone": "Europe/Berlin"},
        },
        '{"event": "LOGIN", "time": "2026-11-20T23:30:00Z"}\n'  # the 21st in Berlin
        '{"event": "LOGIN", "time": "2026-11-22T08:00:00Z"}\n'
        "LOGIN",
    )
    assert berlin == [
        ("passes", "day 2026-11-21 (Europe/Berlin)", "1 / 2"),
        ("passes", "day 2026-11-22 (Europe/Berlin)", "2 / 2"),
        ("passes", "no time: it counts for no day", "2 / 2"),
    ]
    assert outcomes(
        {
            "event": "MATCH",
            "completion": {"kind": "sum", "threshold": 100, "field": "value"},
            "per": "groupId",
        },
        '{"event": "MATCH", "value": 60, "groupId": "m1"}\n'
        '{"event": "MATCH", "value": 30, "groupId": "m2"}\n'
        '{"event": "MATCH", "value": 50}\n'
        '{"event": "MATCH", "value": 45.5, "groupId": "m1"}',
    ) == [
        ("passes", "groupId m1, value 60", "60 / 100"),
        ("passes", "groupId m2, value 30", "60 / 100"),
        ("passes", "no groupId: it counts for no group", "60 / 100"),
        ("passes", "groupId m1, value 45.5", "105.5 / 100"),
    ]
    assert outcomes(
        {
            "event": "KILL",
            "completion": {"kind": "count", "threshold": 2},
            "window": {"seconds": 60},
        },
        '{"event": "KILL", "time": "2026-11-20T10:00:00Z"}\n'
        '{"event": "KILL", "time": "2026-11-20T10:05:00Z"}\n'
        '{"event": "KILL", "time": "2026-11-20T10:05:30Z"}',
    ) == [
        ("passes", "1 in the window", "1 / 2"),
        ("passes", "1 in the window", "1 / 2"),
        ("passes", "2 in the window", "2 / 2"),
    ]
    assert outcomes(
        {"event": "MATCH", "completion": {"kind": "min", "threshold": 0, "field": "traits.deaths"}},
        "MATCH deaths=2\nMATCH\nMATCH deaths=0",
    ) == [
        ("passes", "deaths 2", "2 / 0"),
        ("passes", "no deaths: adds nothing", "2 / 0"),
        ("passes", "deaths 0", "0 / 0"),
    ]


def test_a_typed_event_needs_a_zone_in_its_time():
    with pytest.raises(FormError) as refused:
        parse_events('{"event": "LOGIN", "time": "2026-11-20T10:00:00"}')
    assert "line 1: the time is a moment with its zone" in refused.value.errors["events"]


STREAK_FORM = {
    "rule.event": "LOGIN",
    "rule.completion.kind": "days",
    "rule.completion.threshold": "3",
    "rule.completion.timeZone": "UTC",
}


def stored_events(engine, box, *events: tuple[str, str, datetime, dict]) -> str:
    """A game with these stored events (user id, name, time, more columns); its id."""
    game_id = make_game(engine, box).game_id
    with write_session(engine) as session:
        for user_id, name, when, more in events:
            session.add(Event(game_id=game_id, user_id=user_id, name=name, time=when, **more))
    return game_id


def test_the_tester_replays_a_stored_player_in_time_order(engine, box):
    day = datetime(2026, 11, 20, 9, tzinfo=UTC)
    game_id = stored_events(
        engine,
        box,
        ("ann", "LOGIN", day + timedelta(days=1), {"group_id": "m2"}),
        ("ann", "LOGIN", day, {"value": 3.0, "traits": {"map": "desert"}}),
        ("ann", "SHOP", day + timedelta(hours=1), {}),  # a name the rule does not read
        ("bob", "LOGIN", day + timedelta(days=2), {}),  # another player
        ("ann", "LOGIN", day + timedelta(days=2, hours=1), {}),
        ("ann", "LOGIN", day + timedelta(days=9), {}),  # after the range
    )
    form = STREAK_FORM | {"player": "ann", "from": "2026-11-20", "to": "2026-11-26"}
    with new_session(engine) as session:
        tested = replay_player(session=session, game_id=game_id, form=form, repeatable=False)
        now = day + timedelta(days=3)
        assert player_ids(session=session, game_id=game_id, now=now) == ["ann", "bob"]
        # Only those of the last days: ann's latest is 9 days in, bob's 2.
        later = day + timedelta(days=11)
        assert player_ids(session=session, game_id=game_id, now=later) == ["ann"]
    assert tested.summary == "LOGIN on 3 different days (UTC)"
    assert tested.note == (
        "3 events player ann sent from 2026-11-20 to 2026-11-26 (UTC), of the names the rule reads."
    )
    assert [(s.time, s.value, s.traits, s.group, s.why, s.progress) for s in tested.steps] == [
        ("2026-11-20 09:00:00", "3", "map=desert", "", "day 2026-11-20 (UTC)", "1 / 3"),
        ("2026-11-21 09:00:00", "", "", "m2", "day 2026-11-21 (UTC)", "2 / 3"),
        ("2026-11-22 10:00:00", "", "", "", "day 2026-11-22 (UTC)", "3 / 3"),
    ]
    assert tested.completed_at == 3


def test_a_replay_is_bounded_and_says_so(engine, box, monkeypatch):
    day = datetime(2026, 11, 20, tzinfo=UTC)
    game_id = stored_events(
        engine, box, *[("ann", "LOGIN", day + timedelta(minutes=n), {}) for n in range(5)]
    )
    monkeypatch.setattr(tester_replay, "MAX_REPLAY_EVENTS", 3)
    form = STREAK_FORM | {"player": "ann", "from": "2026-11-20", "to": "2026-11-20"}
    with new_session(engine) as session:
        cut = tester_replay.player_events(
            session=session,
            game_id=game_id,
            user_id="ann",
            names={"LOGIN"},
            start=day,
            end=day + timedelta(days=1),
            limit=3,
        )
        assert (len(cut.events), cut.cut) == (3, True)
        assert [e["time"] for e in cut.events] == [day + timedelta(minutes=n) for n in range(3)]
        tested = replay_player(session=session, game_id=game_id, form=form, repeatable=False)
    assert len(tested.steps) == 3
    assert tested.note.startswith(
        "The first 3 events player ann sent from 2026-11-20 to 2026-11-20"
    )
    with new_session(engine) as session, pytest.raises(FormError) as refused:
        replay_player(
            session=session,
            game_id=game_id,
            form=form | {"from": "2026-11-21", "player": ""},
            repeatable=False,
        )
    assert refused.value.errors == {"from": "The range starts after it ends."}
