"""The editor's forms and the rule tester: the same schemas and engine as ingestion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from api.core.db import new_session, write_session
from api.missions import designer
from api.missions.designer import (
    parse_events,
    player_ids,
    replay_player,
    rule_definition,
    rule_from_form,
    run_rule_test,
    try_rule,
)
from api.missions.forms import FormError, form_values, from_form
from api.missions.rules import Rule
from models import Event
from models.offer_schemas import MissionIn, QuestFields, RuleIn
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


def test_a_form_becomes_a_mission_definition():
    form = {
        **RULE,
        "title": "Three good matches",
        "destinationUrl": "https://game.example/",
        "payout": "1.25",
        "cap": "100",
        "timeLimitSeconds": "2",  # shown in hours
        "operatingSystem.0": "Android",
        "operatingSystem.1": "",  # an unchecked box
        "geotargeting.countriesInclude": "us, de",
        "tags": "pvp, ranked",
        "isActive": "true",
        "allowMultipleConversions": "false",
        "expirationDate": "2027-01-31",
    }
    mission = from_form(MissionIn, form)
    assert mission.payout_micros == 1_250_000
    assert (mission.cap, mission.timeLimitSeconds) == (100, 7200)
    assert mission.operatingSystem == ["Android"]
    assert mission.geotargeting.countriesInclude == ["DE", "US"]
    assert mission.rule.completion.kind == "consecutive"
    assert len(mission.rule.conditions) == 1  # the empty row is skipped
    assert (mission.isActive, mission.allowMultipleConversions) == (True, False)
    # The editor opens a definition with the same inputs, so saving it again changes nothing.
    assert from_form(MissionIn, form_values(mission)) == mission


KINDS_OF_RULE = {
    "lists": {
        "event": "KILL",
        "conditions": [
            {"field": "traits.map", "op": "in", "value": ["desert", "jungle", 3]},
            {"field": "groupId", "op": "not in", "value": ["training"]},
            {"field": "value", "op": "in", "value": [7]},
            {"field": "traits.mode", "op": "in", "value": ["true"]},
        ],
        "completion": {"kind": "count", "threshold": 1234567},
    },
    "anyOf": {
        "anyOf": [
            {"event": "KILL", "conditions": [{"field": "value", "op": ">=", "value": 3}]},
            {"event": "ASSIST"},
        ],
        "completion": {"kind": "sum", "threshold": 10.5, "field": "value"},
        "per": "groupId",
    },
    "steps": {
        "steps": [
            {"event": "TUTORIAL_DONE"},
            {
                "event": "MATCH_END",
                "conditions": [{"field": "traits.won", "op": "==", "value": True}],
            },
            {"event": "LEVEL_UP"},
        ],
        "within": {"seconds": 86400},
    },
    "streak": {
        "event": "LOGIN",
        "completion": {"kind": "streak", "threshold": 7, "timeZone": "Europe/Berlin"},
    },
    "days": {"event": "LOGIN", "completion": {"kind": "days", "threshold": 3}},
    "min": {
        "event": "MATCH_END",
        "completion": {"kind": "min", "threshold": 0, "field": "traits.deaths"},
    },
    "max": {
        "event": "MATCH_END",
        "completion": {"kind": "max", "threshold": 2.5, "field": "value"},
        "per": "traits.map",
    },
    "distinct": {
        "event": "MATCH_END",
        "completion": {"kind": "distinct", "threshold": 5, "field": "groupId"},
    },
    "window": {
        "event": "KILL",
        "completion": {"kind": "count", "threshold": 5},
        "window": {"seconds": 5400},
    },
    "consecutive": {"event": "KILL", "completion": {"kind": "consecutive", "threshold": 3}},
}


@pytest.mark.parametrize("kind", list(KINDS_OF_RULE))
def test_every_kind_of_rule_comes_back_from_its_form_unchanged(kind):
    mission = MissionIn.model_validate(
        {
            "title": "T",
            "payout": "1.5",
            "destinationUrl": "https://g.example/",
            "rule": KINDS_OF_RULE[kind],
        }
    )
    # The editor opens a stored mission with these inputs: saving it unchanged gives back
    # the same definition, whatever kind its rule is.
    assert from_form(MissionIn, form_values(mission)) == mission


def test_a_length_of_time_is_typed_in_a_unit():
    values = form_values(
        MissionIn.model_validate(
            {
                "title": "T",
                "payout": 1,
                "destinationUrl": "https://g.example/",
                "rule": KINDS_OF_RULE["window"],
            }
        )
    )
    assert (values["rule.window.seconds"], values["unit.rule.window.seconds"]) == ("90", "60")
    form = {**RULE, "rule.completion.kind": "count", "rule.window.seconds": "2"}
    assert rule_definition(form | {"unit.rule.window.seconds": "3600"}).window.seconds == 7200
    assert rule_definition(form | {"rule.window.seconds": ""}).window is None  # left blank
    with pytest.raises(FormError) as refused:
        rule_definition(form | {"rule.window.seconds": "soon"})
    assert list(refused.value.errors) == ["rule.window.seconds"]


@pytest.mark.parametrize(
    ("inputs", "field", "message"),
    [
        (
            {"minCompletionSeconds": "0"},
            "minCompletionSeconds",
            "Enter a number of minutes above 0.",
        ),
        (
            {"minCompletionSeconds": "-5"},
            "minCompletionSeconds",
            "Enter a number of minutes above 0.",
        ),
        (
            {"minCompletionSeconds": "600000"},
            "minCompletionSeconds",
            "Enter 525600 minutes or less.",
        ),
        ({"timeLimitSeconds": "0"}, "timeLimitSeconds", "Enter a number of hours above 0."),
        (
            {"maxTraitField": "kills per match", "maxTraitValue": "50"},
            "maxTraitField",
            "Use letters, digits and _ . : - only (at most 64 characters), e.g. kills.",
        ),
        (
            {"maxTraitValue": "50"},
            "maxTraitValue",
            "A trait's maximum needs both the trait's name and the maximum.",
        ),
    ],
)
def test_limits_are_refused_in_the_unit_and_words_of_their_input(inputs, field, message):
    form = {**RULE, "title": "T", "destinationUrl": "https://g.example/", "payout": "1"}
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, {**form, **inputs})
    assert refused.value.errors == {field: message}


def test_a_minimum_time_under_a_second_is_one_second():
    form = {**RULE, "title": "T", "destinationUrl": "https://g.example/", "payout": "1"}
    assert from_form(MissionIn, {**form, "minCompletionSeconds": "0.001"}).minCompletionSeconds == 1


def test_inputs_the_form_does_not_have_keep_the_stored_value():
    stored = MissionIn.model_validate(
        {
            "title": "Old",
            "payout": 1,
            "destinationUrl": "https://g.example/",
            "tags": ["kept"],
            "rule": {"event": "E"},
        }
    )
    saved = from_form(MissionIn, {"title": "New", "id": "not-the-form's"}, stored=stored)
    assert (saved.title, saved.tags, saved.id) == ("New", ["kept"], None)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"title": ""}, "title"),
        ({"destinationUrl": "game.example"}, "destinationUrl"),
        ({"payout": "-1"}, "payout"),
        ({"geotargeting.countriesInclude": "USA"}, "geotargeting.countriesInclude"),
        ({"rule.event": "has space"}, "rule.event"),
        ({"rule.conditions.0.value": "high"}, "rule.conditions.0.value"),
        ({"rule.completion.threshold": "0"}, "rule.completion.threshold"),
        ({"timeLimitSeconds": "soon"}, "timeLimitSeconds"),
        ({"operatingSystem.0": "Amiga"}, "operatingSystem"),
    ],
)
def test_form_errors_name_the_input(overrides, field):
    form = {**RULE, "title": "T", "destinationUrl": "https://g.example/", "payout": "1"}
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, {**form, **overrides})
    assert field in refused.value.errors


@pytest.mark.parametrize(
    "odd",
    [
        {"title.x": "nested under a plain field"},
        {"title": "T", "title.x": "both"},
        {"rule": "a rule as text", "rule.event": "E"},
        {"rule.conditions.x.field": "value"},
        {"rule.conditions.0": "a row as text"},
        {"operatingSystem.0.x": "Android"},
        {"geotargeting": "US"},
        {"isActive.0": "true"},
        {"payout.0": "1"},
    ],
)
def test_forged_inputs_are_refused_or_ignored_never_a_crash(odd):
    form = {**RULE, "title": "T", "destinationUrl": "https://g.example/", "payout": "1"}
    try:
        from_form(MissionIn, {**form, **odd})
    except FormError as refused:
        assert refused.errors
        assert not any("Input should" in message for message in refused.errors.values())


def test_every_problem_of_a_rule_is_named_at_once_under_its_input():
    form = {
        "title": "T",
        "destinationUrl": "https://g.example/",
        "payout": "1",
        "rule.event": "MATCH_END",
        "rule.conditions.0.field": "value",
        "rule.conditions.0.op": ">=",
        "rule.conditions.0.value": "high",
        "rule.conditions.1.field": "kills",
        "rule.conditions.1.op": "==",
        "rule.conditions.1.value": "3",
        "rule.conditions.2.field": "traits.mode",
        "rule.conditions.2.op": "==",
        "rule.conditions.2.value": "",
        "rule.completion.kind": "sum",
        "rule.completion.threshold": "0",
        "rule.completion.field": "",
    }
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, form)
    assert refused.value.errors == {
        "rule.conditions.0.value": (
            ">= compares numbers: enter a number, or compare text with == or !=."
        ),
        "rule.conditions.1.field": (
            'A condition\'s field is "value", "traits.<name>" or "groupId".'
        ),
        "rule.conditions.2.value": "The condition on traits.mode needs a value.",
        "rule.completion.threshold": "The target must be above 0 (only a minimum may be 0).",
        "rule.completion.field": 'A total needs the field to add up: "value" or "traits.<name>".',
    }


TYPED_INCLUDE = "typed.geotargeting.countriesInclude"


@pytest.mark.parametrize(
    ("typed", "codes"),
    [
        ("USA", ["DE", "US"]),
        ("uk", ["DE", "GB"]),
        ("Deutschland", ["DE"]),
        ("holland, fr", ["DE", "FR", "NL"]),
    ],
)
def test_a_country_still_typed_in_its_picker_is_saved(typed, codes):
    form = {**RULE, "title": "T", "destinationUrl": "https://g.example/", "payout": "1"}
    form |= {"geotargeting.countriesInclude": "DE", TYPED_INCLUDE: typed}
    assert from_form(MissionIn, form).geotargeting.countriesInclude == codes


def test_text_in_a_picker_that_names_no_country_refuses_the_save_beside_it():
    form = {**RULE, "title": "", "destinationUrl": "https://g.example/", "payout": "1"}
    form |= {
        "geotargeting.countriesInclude": "",
        TYPED_INCLUDE: "Narnia",
        "typed.geotargeting.countriesExclude": "usa, Atlantis",
    }
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, form)
    assert refused.value.errors == {
        "title": "This is required.",  # every problem at once
        "geotargeting.countriesInclude": (
            "No country is called “Narnia”: pick one from the list, or empty the box."
        ),
        "geotargeting.countriesExclude": (
            "No country is called “Atlantis”: pick one from the list, or empty the box."
        ),
    }


def test_a_quests_pickers_take_typed_countries_the_same_way():
    form = {"name": "Q", "destinationUrl": "https://g.example/", TYPED_INCLUDE: "Holland"}
    assert from_form(QuestFields, form).geotargeting.countriesInclude == ["NL"]
    with pytest.raises(FormError) as refused:
        from_form(QuestFields, {**form, "typed.geotargeting.countriesExclude": "Mordor"})
    assert list(refused.value.errors) == ["geotargeting.countriesExclude"]


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
    monkeypatch.setattr(designer, "MAX_REPLAY_EVENTS", 3)
    form = STREAK_FORM | {"player": "ann", "from": "2026-11-20", "to": "2026-11-20"}
    with new_session(engine) as session:
        cut = designer.player_events(
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


# --- live operations --------------------------------------------------------------------

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
        designer.save_mission_form(session=session, game_id=game, form=form, mission_id=None)
    assert list(refused.value.errors) == ["newPool.size"]
    with new_session(engine) as session:
        assert offers.game_pools(session=session, game_id=game) == []

    form |= {"newPool.size": "2", "newPool.timeZone": "Europe/Berlin"}
    with write_session(engine) as session:
        mission = designer.save_mission_form(
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
        assert designer.pool_choices(session=session, game_id=game) == [
            designer.PoolChoice("daily-pvp", "2 of its missions a day (Europe/Berlin)")
        ]
        # A pooled mission is offered on its own: the quest builder does not offer it.
        built = designer.quest_builder(session=session, game_id=game, quest_id=None)
        assert [m.title for m in built.available] == []


def test_a_mission_in_a_quest_cannot_join_a_pool(engine, box):
    from tests.factories import make_quest, mission_data

    game = make_game(engine, box).game_id
    quest = make_quest(engine, game, [mission_data(title="Inside")])
    with new_session(engine) as session:
        [inside] = designer.quest_builder(session=session, game_id=game, quest_id=quest.id).chosen
    with pytest.raises(FormError) as refused, write_session(engine) as session:
        designer.save_mission_form(
            session=session,
            game_id=game,
            form=LIVE_FORM | {"pool": "daily-pvp", "newPool.size": "1"},
            mission_id=inside.id,
        )
    assert list(refused.value.errors) == ["pool"]


def test_the_missions_list_says_what_each_mission_does_in_live_operations(engine, box):
    from api.core.periods import Period
    from models.offers import CapCount
    from tests.factories import make_mission

    game = make_game(engine, box).game_id
    now = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)
    make_mission(
        engine,
        game,
        title="Daily",
        recurrence={"every": "day", "timeZone": "America/New_York"},
        stages=[{"threshold": 1, "payout": "0.1"}, {"threshold": 3, "payout": "0.2"}],
        payout=None,
        rule={"event": "KILL"},
        startDate="2026-12-24T00:00:00Z",
    )
    make_mission(
        engine,
        game,
        title="Weekly",
        recurrence={"every": "week", "weekStartsOn": "sunday"},
        startDate="2027-01-02T09:00:00Z",
    )
    full = make_mission(
        engine, game, title="Full", periodCaps={"day": 1, "timeZone": "Europe/Berlin"}
    )
    make_mission(engine, game, title="Plain")
    with write_session(engine) as session:
        day = Period("day", "Europe/Berlin").key(now)
        session.add(CapCount(mission_id=full.id, scope="", period=f"day:{day}", count=1))

    with new_session(engine) as session:
        rows = {r.title: r for r in designer.game_offers(session=session, game_id=game, now=now)}
    assert [(b.kind, b.text) for b in rows["Daily"].live] == [
        ("recurring", "Daily · America/New_York"),
        ("stages", "2 stages"),
        ("scheduled", "Starts 24 Dec"),
    ]
    assert [(b.kind, b.text) for b in rows["Weekly"].live] == [
        ("recurring", "Weekly from Sunday · UTC"),
        ("scheduled", "Starts 2 Jan 2027 09:00"),
    ]
    assert [(b.kind, b.text) for b in rows["Full"].live] == [
        ("full", "Full · reopens 29 Nov (Europe/Berlin)")
    ]
    assert rows["Plain"].live == rows["Plain"].periods == []
    assert [(p.label, p.first_day) for p in rows["Daily"].periods] == [
        ("Today", "2026-11-28"),
        ("Yesterday", "2026-11-27"),
    ]
    assert [(p.label, p.clicks, p.started, p.completed) for p in rows["Weekly"].periods] == [
        ("This week", "0", "0", "0"),
        ("Last week", "0", "0", "0"),
    ]
