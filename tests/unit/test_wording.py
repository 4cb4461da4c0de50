"""Validation errors in the portal's words: no pydantic wording, no patterns, no lists."""

from __future__ import annotations

from decimal import Decimal

import pytest
from pydantic import BaseModel, Field, ValidationError

from api.services.wording import plain, sentence


class Sample(BaseModel):
    title: str = Field(min_length=1, max_length=5)
    event: str = Field(default="E", pattern=r"^[A-Z_]{1,64}$")
    cap: int | None = Field(default=None, ge=1)
    payout: Decimal = Field(default=Decimal(0), ge=0, decimal_places=2)
    active: bool = True


def message(**data) -> str:
    with pytest.raises(ValidationError) as refused:
        Sample.model_validate({"title": "ok"} | data)
    (error,) = refused.value.errors()
    return plain(error)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"title": ""}, "This is required."),
        ({"title": "too long"}, "Use at most 5 characters."),
        (
            {"event": "game end"},
            "Use letters, digits and _ . : - only (at most 64 characters), e.g. GAME_END.",
        ),
        ({"cap": "ten"}, "Enter a whole number."),
        ({"cap": "2.5"}, "Enter a whole number."),
        ({"cap": 0}, "Enter 1 or more."),
        ({"payout": "lots"}, "Enter a number."),
        ({"payout": "-1"}, "Enter 0 or more."),
        ({"payout": "1.234"}, "Use at most 2 decimals."),
        ({"active": "maybe"}, "Choose yes or no."),
    ],
)
def test_each_kind_of_error_reads_as_a_sentence(data, expected):
    assert message(**data) == expected


def test_a_missing_value_is_required():
    with pytest.raises(ValidationError) as refused:
        Sample.model_validate({})
    assert [plain(e) for e in refused.value.errors()] == ["This is required."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a quest needs at least one mission", "A quest needs at least one mission."),
        ("Saved!", "Saved!"),
        ("  no game with id 7  ", "No game with id 7."),
        ("", ""),
    ],
)
def test_sentence_starts_with_a_capital_and_ends_with_a_stop(text, expected):
    assert sentence(text) == expected


def test_a_form_text_holding_nul_is_refused_under_its_input():
    from api.services.errors import DomainError, refuse_nul

    refuse_nul({"name": "Fine", "count": 3})
    with pytest.raises(DomainError) as refused:
        refuse_nul({"name": "Bad\x00name", "title": "ok", "tags": "a\x00"})
    assert set(refused.value.field_errors()) == {"name", "tags"}
