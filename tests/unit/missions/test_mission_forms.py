"""The mission editor's form to a definition and back (api/missions/forms.py): by the
schema alone, every problem at once under its input."""

from __future__ import annotations

import pytest

from api.missions.forms import FormError, form_values, from_form
from api.missions.rule_tester import rule_definition
from models.offer_schemas import MissionIn, QuestFields

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


def test_text_no_database_stores_is_refused_under_its_input():
    # What a browser's "\ud800" escape reads as; the portal refuses NUL before any form.
    form = {**RULE, "title": "Duel\ud800", "destinationUrl": "https://g.example/", "payout": "1"}
    form |= {"tags": "pvp, ranked\ud800", "rule.conditions.0.value": "hard\ud800"}
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, form)
    broken = "Remove the broken character (U+D800): text cannot hold it."
    assert refused.value.errors == {
        "title": broken,
        "tags": broken,
        "rule.conditions.0.value": broken,
    }
