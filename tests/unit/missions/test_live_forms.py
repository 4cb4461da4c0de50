"""The editor's inputs of live operations, both ways (api/missions/forms.py): a recurrence,
a ladder's rows, caps per period, a cap per offerwall, a pool and a start date come back
from their inputs unchanged; groups left empty are no part of the definition; and every
check of the whole mission shows under the input it is about."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from api.missions.forms import FormError, form_values, from_form
from models.offer_schemas import MissionIn, QuestFields

BASE = {
    "title": "Daily duels",
    "destinationUrl": "https://game.example/",
    "rule.event": "DUEL",
    "rule.completion.kind": "count",
    "rule.completion.threshold": "1",
    "payout": "",
    # As the editor submits them when its live operations are left alone.
    "startDate": "",
    "recurrence.every": "",
    "recurrence.timeZone": "",
    "stages": "",
    "periodCaps.day": "",
    "periodCaps.week": "",
    "periodCaps.month": "",
    "periodCaps.timeZone": "",
    "capPerOfferwall": "",
    "pool": "",
}
LIVE = BASE | {
    "startDate": "2026-12-24",
    "recurrence.every": "week",
    "recurrence.timeZone": "America/New_York",
    "recurrence.weekStartsOn": "sunday",
    "stages.0.threshold": "1",
    "stages.0.payout": "0.10",
    "stages.1.threshold": "5",
    "stages.1.payout": "0.40",
    "stages.2.threshold": "10",
    "stages.2.payout": "1",
    "periodCaps.day": "500",
    "periodCaps.month": "9000",
    "periodCaps.timeZone": "Europe/Berlin",
    "capPerOfferwall": "1000",
}


def test_live_operations_come_from_their_inputs():
    mission = from_form(MissionIn, LIVE)
    assert mission.startDate == datetime(2026, 12, 24, tzinfo=UTC)
    assert mission.recurrence is not None
    assert (
        mission.recurrence.every,
        mission.recurrence.timeZone,
        mission.recurrence.weekStartsOn,
    ) == ("week", "America/New_York", "sunday")
    assert [(s.threshold, s.payout) for s in mission.stages or []] == [
        (1, Decimal("0.10")),
        (5, Decimal("0.40")),
        (10, Decimal(1)),
    ]
    assert mission.payout == Decimal("1.50")  # the stages' sum, its input left empty
    assert mission.rule.completion.threshold == 10  # the last stage's
    assert mission.periodCaps is not None
    assert mission.periodCaps.limits() == {"day": 500, "month": 9000}
    assert mission.periodCaps.timeZone == "Europe/Berlin"
    assert mission.capPerOfferwall == 1000


def test_live_operations_come_back_from_their_inputs_unchanged():
    mission = from_form(MissionIn, LIVE)
    values = form_values(mission)
    assert values["startDate"] == "2026-12-24"
    assert values["payout"] == ""  # a ladder's payout is its stages' sum
    assert [values[f"stages.{n}.threshold"] for n in range(3)] == ["1", "5", "10"]
    assert [values[f"stages.{n}.payout"] for n in range(3)] == ["0.10", "0.40", "1"]
    assert (values["recurrence.every"], values["recurrence.timeZone"]) == (
        "week",
        "America/New_York",
    )
    assert (values["periodCaps.day"], values["periodCaps.week"]) == ("500", "")
    assert from_form(MissionIn, values) == mission
    # Saved again over the stored definition: the same.
    assert from_form(MissionIn, values, stored=mission) == mission


def test_a_pooled_mission_comes_back_with_its_pool():
    mission = from_form(MissionIn, BASE | {"payout": "0.5", "pool": "daily-pvp"})
    assert mission.pool == "daily-pvp"
    assert form_values(mission)["pool"] == "daily-pvp"
    assert from_form(MissionIn, form_values(mission)) == mission


def test_groups_left_empty_are_none():
    mission = from_form(MissionIn, BASE | {"payout": "1"})
    assert (mission.recurrence, mission.stages, mission.periodCaps) == (None, None, None)
    assert (mission.capPerOfferwall, mission.pool, mission.startDate) == (None, None, None)
    # A recurrence of "none" with its week start and zone as they came is none too.
    none = BASE | {"payout": "1", "recurrence.weekStartsOn": "monday", "recurrence.timeZone": "UTC"}
    assert from_form(MissionIn, none).recurrence is None


def test_emptied_groups_take_the_stored_ones_away():
    stored = from_form(MissionIn, LIVE)
    emptied = from_form(MissionIn, BASE | {"payout": "2"}, stored=stored)
    assert (emptied.recurrence, emptied.stages, emptied.periodCaps) == (None, None, None)
    assert (emptied.capPerOfferwall, emptied.startDate) == (None, None)
    assert emptied.payout == Decimal(2)


def test_a_stored_start_with_a_time_of_day_is_kept_while_its_day_is():
    stored = from_form(MissionIn, BASE | {"payout": "1", "startDate": "2026-12-24T15:30:00+01:00"})
    values = form_values(stored)
    assert values["startDate"] == "2026-12-24"
    assert from_form(MissionIn, values, stored=stored).startDate == stored.startDate
    moved = from_form(MissionIn, values | {"startDate": "2026-12-25"}, stored=stored)
    assert moved.startDate == datetime(2026, 12, 25, tzinfo=UTC)


def test_a_quests_start_date_comes_back_from_its_input():
    quest = from_form(
        QuestFields,
        {"name": "Season", "destinationUrl": "https://game.example/", "startDate": "2027-01-02"},
    )
    assert quest.startDate == datetime(2027, 1, 2, tzinfo=UTC)
    assert form_values(quest)["startDate"] == "2027-01-02"


def errors(form: dict[str, str]) -> dict[str, str]:
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, form)
    return refused.value.errors


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        (
            {"stages.2.threshold": "4"},
            "stages.2.threshold",
            "A ladder's stages go up: each threshold above the one before.",
        ),
        ({"stages.1.payout": ""}, "stages.1.payout", "This is required."),
        ({"stages.1.threshold": ""}, "stages.1.threshold", "This is required."),
        (
            {"payout": "3"},
            "payout",
            "A ladder's payout is its stages' together: leave payout out, or make it 1.50.",
        ),
        ({"recurrence.timeZone": "Mars/Base"}, "recurrence.timeZone", "Unknown time zone"),
        ({"recurrence.every": "hour"}, "recurrence.every", ""),
        ({"periodCaps.timeZone": "Europe"}, "periodCaps.timeZone", "Unknown time zone"),
        ({"periodCaps.day": "0"}, "periodCaps.day", ""),
        ({"capPerOfferwall": "x"}, "capPerOfferwall", "Enter a whole number."),
        (
            {"pool": "daily-pvp"},
            "recurrence.every",
            "A pooled mission turns over with its pool: leave recurrence out.",
        ),
        ({"pool": "no spaces"}, "pool", ""),
        (
            {"expirationDate": "2026-12-01"},
            "startDate",
            "The start date must be before the expiry date.",
        ),
        (
            {"rule.completion.kind": "min", "rule.completion.field": "value"},
            "stages",
            "A ladder needs a rule whose progress grows",
        ),
    ],
)
def test_each_problem_shows_under_its_input(overrides, field, message):
    found = errors(LIVE | overrides)
    assert field in found, found
    assert found[field].startswith(message)


def test_a_stage_left_empty_is_skipped_and_the_rows_after_it_keep_their_numbers():
    form = LIVE | {
        "stages.1.threshold": "",
        "stages.1.payout": "",
        "stages.3.threshold": "7",  # below the stage before it (10)
        "stages.3.payout": "1",
    }
    assert errors(form) == {
        "stages.3.threshold": "A ladder's stages go up: each threshold above the one before."
    }


def test_caps_with_a_zone_and_no_limit_say_what_is_missing():
    form = BASE | {"payout": "1", "periodCaps.timeZone": "Europe/Berlin"}
    assert errors(form) == {
        "periodCaps": "Set at least one of day, week and month (or leave the zone empty)."
    }


def test_a_zone_without_a_recurrence_asks_for_one():
    form = BASE | {"payout": "1", "recurrence.timeZone": "Europe/Berlin"}
    assert errors(form) == {
        "recurrence.every": "Choose how often it repeats, or leave its time zone empty."
    }


def test_a_single_stage_is_no_ladder():
    form = BASE | {"stages.0.threshold": "1", "stages.0.payout": "1"}
    assert errors(form)["stages"] == "Add at least 2 items."


def test_a_mission_without_payout_or_stages_says_so_under_the_payout():
    assert errors(BASE)["payout"].startswith("Payout is required")


def test_two_checks_of_the_whole_mission_about_one_input_are_both_said_there():
    form = LIVE | {
        "rule.completion.kind": "distinct",
        "rule.completion.field": "value",
        "stages.1.threshold": "20000",
        "stages.2.threshold": "15000",  # below the stage before, and over a distinct's most
    }
    assert errors(form) == {
        "stages.2.threshold": (
            "A ladder's stages go up: each threshold above the one before. "
            "A distinct target is at most 10,000."
        )
    }
