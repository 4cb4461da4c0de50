"""Item validation rules (docs/contract.md#custom-events), without a database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from models.schemas import EventIn, IdentifierIn, is_eip55, parse_event_time

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _code(model, data) -> str:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return info.value.errors()[0]["type"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-21T10:00:00Z", datetime(2026, 11, 21, 10, 0, tzinfo=UTC)),
        ("2026-11-21T10:00:00.123Z", datetime(2026, 11, 21, 10, 0, 0, 123000, tzinfo=UTC)),
        ("2026-11-21T10:00:00.123456789Z", datetime(2026, 11, 21, 10, 0, 0, 123000, tzinfo=UTC)),
        ("2026-11-21T12:00:00+02:00", datetime(2026, 11, 21, 10, 0, tzinfo=UTC)),
        ("2026-11-21T05:30:00.5-04:30", datetime(2026, 11, 21, 10, 0, 0, 500000, tzinfo=UTC)),
        ("2026-11-21t10:00:00z", datetime(2026, 11, 21, 10, 0, tzinfo=UTC)),
    ],
)
def test_rfc3339_times_are_stored_in_utc_milliseconds(raw, expected):
    assert parse_event_time(raw, now=NOW) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "2026-11-21T10:00:00",
        "2026-11-21",
        "yesterday",
        "2026-13-01T00:00:00Z",
        "2026-11-21T10:00Z",
        "",
    ],
)
def test_times_without_zone_or_malformed_are_rejected(raw):
    from pydantic_core import PydanticCustomError

    with pytest.raises(PydanticCustomError) as info:
        parse_event_time(raw, now=NOW)
    assert info.value.type == "invalid_time"


def test_time_more_than_five_minutes_ahead_is_rejected():
    from pydantic_core import PydanticCustomError

    ahead = (NOW + timedelta(minutes=5, seconds=1)).isoformat()
    with pytest.raises(PydanticCustomError) as info:
        parse_event_time(ahead, now=NOW)
    assert info.value.type == "time_in_future"
    assert parse_event_time((NOW + timedelta(minutes=4)).isoformat(), now=NOW)


def _event(**overrides):
    return {"userId": "u1", "event": "KILL", "time": "2026-01-01T00:00:00Z", **overrides}


def test_event_requires_user_event_and_time():
    for field in ("userId", "event", "time"):
        data = _event()
        del data[field]
        assert _code(EventIn, data) == "missing"


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"event": ""}, "invalid_event_name"),
        ({"event": "a" * 65}, "invalid_event_name"),
        ({"event": "KILL PLAYER"}, "invalid_event_name"),
        ({"event": "kill/player"}, "invalid_event_name"),
        ({"userId": ""}, "invalid_user_id"),
        ({"userId": "u" * 129}, "invalid_user_id"),
        ({"userId": 42}, "string_type"),
        ({"value": "12"}, "float_type"),
        ({"value": True}, "float_type"),
        ({"traits": [1, 2]}, "dict_type"),
        ({"groupId": 7}, "string_type"),
        ({"score": 1}, "extra_forbidden"),
        ({"time": 1700000000}, "invalid_time"),
    ],
)
def test_invalid_event_fields_have_codes(overrides, code):
    assert _code(EventIn, _event(**overrides)) == code


def test_event_names_allow_letters_digits_and_separators():
    assert (
        EventIn.model_validate(_event(event="match.end:v2_final-1")).event == "match.end:v2_final-1"
    )


def test_non_finite_value_is_rejected():
    assert _code(EventIn, _event(value=float("inf"))) == "invalid_value"


def test_empty_group_id_counts_as_absent_and_ints_are_numbers():
    event = EventIn.model_validate(_event(groupId="", value=1000))
    assert event.groupId is None
    assert event.value == 1000.0


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("discordId", "12a", "invalid_identifier"),
        ("discordId", "1" * 21, "invalid_identifier"),
        ("twitterId", "", "invalid_identifier"),
        ("email", "not-an-email", "invalid_email"),
        ("email", "", "invalid_email"),
        ("walletAddress", "0x123", "invalid_wallet_address"),
        ("walletAddress", "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "invalid_wallet_address"),
        ("walletAddress", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "invalid_wallet_address"),
        ("platformUserId", "not-a-uuid", "invalid_platform_user_id"),
        ("steamId", "", "invalid_identifier"),
        ("telegramId", "x" * 256, "invalid_identifier"),
        ("discordId", 1234, "string_type"),
        ("nickname", "x", "extra_forbidden"),
    ],
)
def test_invalid_identifiers_have_codes(field, value, code):
    assert _code(IdentifierIn, {"userId": "u1", field: value}) == code


def test_valid_identifiers_pass_and_normalize():
    item = IdentifierIn.model_validate(
        {
            "userId": "u1",
            "discordId": "80351110224678912",
            "twitterId": "1",
            "email": "Ada.Lovelace@Example.COM",
            "walletAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
            "steamId": "76561197960287930",
            "appleId": "001234.abcd",
        }
    )
    # The local part keeps its case; the domain is lower-cased.
    assert item.email == "Ada.Lovelace@example.com"
    assert item.provided()["walletAddress"] == "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"


def test_wallet_all_lower_or_all_upper_needs_no_checksum():
    IdentifierIn.model_validate({"userId": "u", "walletAddress": "0x" + "ab" * 20})
    IdentifierIn.model_validate({"userId": "u", "walletAddress": "0x" + "AB" * 20})


@pytest.mark.parametrize(
    "address",
    [
        # The EIP-55 specification's own examples.
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ],
)
def test_eip55_reference_addresses(address):
    assert is_eip55(address)
    assert not is_eip55(address[:-1] + ("A" if address[-1] != "A" else "B"))


def test_omitted_null_and_value_are_told_apart():
    item = IdentifierIn.model_validate({"userId": "u", "email": None, "discordId": "1"})
    assert item.provided() == {"email": None, "discordId": "1"}
