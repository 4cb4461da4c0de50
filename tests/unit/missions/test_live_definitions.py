"""Live-operations fields of a mission's definition (models/offer_schemas.py): what is
refused, with which message, and what a ladder's payout and rule become."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import ValidationError

from models.offer_schemas import MissionIn, OffersFile


def definition(**fields) -> dict:
    return {
        "title": "Live",
        "payout": "1.00",
        "destinationUrl": "https://game.example/m",
        "rule": {"event": "WIN"},
        **fields,
    }


def problem(**fields) -> str:
    with pytest.raises(ValidationError) as caught:
        MissionIn.model_validate(definition(**fields))
    return str(caught.value)


LADDER = [{"threshold": 1, "payout": "0.10"}, {"threshold": 5, "payout": "0.40"}]


def test_a_ladder_pays_its_stages_together_and_completes_at_its_last():
    data = {k: v for k, v in definition(stages=LADDER).items() if k != "payout"}
    mission = MissionIn.model_validate(data)
    assert mission.payout == Decimal("0.50")
    assert mission.rule.completion.threshold == 5
    assert [s.payout_micros for s in mission.stages or []] == [100_000, 400_000]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"stages": [LADDER[1], LADDER[0]]}, "each threshold above the one before"),
        ({"stages": LADDER, "payout": "2"}, "make it 0.50"),
        ({"stages": LADDER[:1]}, "at least 2"),
        (
            {
                "stages": LADDER,
                "rule": {"event": "WIN", "completion": {"kind": "min", "field": "value"}},
            },
            "whose progress grows",
        ),
        ({"recurrence": {"every": "fortnight"}}, "'day', 'week' or 'month'"),
        ({"recurrence": {"every": "day", "timeZone": "Mars/Base"}}, "Unknown time zone"),
        ({"pool": "daily", "recurrence": {"every": "day"}}, "turns over with its pool"),
        ({"periodCaps": {"timeZone": "UTC"}}, "at least one of day, week and month"),
        ({"periodCaps": {"day": 0}}, "greater than or equal to 1"),
        (
            {"startDate": "2027-02-01T00:00:00Z", "expirationDate": "2027-01-01T00:00:00Z"},
            "start date must be before the expiry date",
        ),
        ({"startDate": "2027-02-01T00:00:00"}, "start date needs a time zone"),
    ],
)
def test_a_live_operations_mistake_is_refused_with_a_message(fields, message):
    assert message in problem(**fields)


def test_a_pool_is_named_in_the_import_file():
    data = OffersFile.model_validate(
        {
            "gameId": "g",
            "pools": [{"name": "daily-pvp", "size": 3, "timeZone": "Europe/Berlin"}],
            "missions": [definition(pool="daily-pvp")],
        }
    )
    assert (data.pools[0].every, data.pools[0].weekStartsOn) == ("day", "monday")
    with pytest.raises(ValidationError, match="size"):
        OffersFile.model_validate({"gameId": "g", "pools": [{"name": "p", "size": 0}]})


@pytest.mark.parametrize(
    "fields",
    [
        {"cap": 10**30},
        {"capPerOfferwall": 2**31},
        {"periodCaps": {"day": 10**20}},
        {"pool": "daily\x00pvp"},
        {"stages": [{"threshold": 1, "payout": "1e30"}, {"threshold": 2, "payout": "1"}]},
    ],
)
def test_a_number_past_what_a_database_holds_or_a_nul_is_refused_not_stored(fields):
    problem(**fields)  # a clear refusal, never an overflow when saved


def test_every_part_of_a_definition_refuses_text_no_database_stores():
    import inspect

    from pydantic import BaseModel

    import models.offer_schemas as schemas

    parts = [
        c
        for _, c in inspect.getmembers(schemas, inspect.isclass)
        if issubclass(c, BaseModel) and c.__module__ == schemas.__name__
    ]
    assert len(parts) > 10
    assert [c.__name__ for c in parts if not issubclass(c, schemas._Definition)] == []


def test_a_stored_mission_is_read_back_whatever_its_text():
    from models import Mission
    from models.offer_schemas import mission_in

    # What an import stored before the check (SQLite kept it) still opens and lists.
    stored = Mission(
        id="m1",
        game_id="g1",
        title="Duel\x00",
        destination_url="https://g.example/",
        payout_micros=1_000_000,
        rule_event="DUEL",
        rule_conditions=[{"field": "traits.map", "op": "==", "value": "desert\x00"}],
        rule_completion="count",
        rule_threshold=1,
    )
    assert mission_in(stored).title == "Duel\x00"
    with pytest.raises(ValidationError):
        MissionIn.model_validate(mission_in(stored).model_dump())


def test_an_import_file_lists_every_problem_of_a_whole_mission():
    mission = definition(
        payout="2",
        stages=[{"threshold": 5, "payout": "0.5"}, {"threshold": 3, "payout": "1"}],
        pool="daily-pvp",
        recurrence={"every": "day"},
        budget={"amount": "10"},
        startDate="2027-01-10T00:00:00Z",
        expirationDate="2027-01-01T00:00:00Z",
    )
    with pytest.raises(ValidationError) as caught:
        OffersFile.model_validate({"gameId": "g", "missions": [mission]})
    assert [(e["loc"], e["msg"].removeprefix("Value error, ")) for e in caught.value.errors()] == [
        (("missions", 0), "The start date must be before the expiry date."),
        (("missions", 0), "A ladder's stages go up: each threshold above the one before."),
        (
            ("missions", 0),
            "A ladder's payout is its stages' together: leave payout out, or make it 1.5.",
        ),
        (("missions", 0), "A pooled mission turns over with its pool: leave recurrence out."),
        (("missions", 0), "A budget counts revenue: set the mission's revenue first."),
    ]
