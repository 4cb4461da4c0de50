"""Validation errors in the portal's words: no pydantic wording, no patterns, no lists."""

from __future__ import annotations

from decimal import Decimal
from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from api.core.wording import plain, sentence
from models.schemas import email_problem


class Sample(BaseModel):
    title: str = Field(min_length=1, max_length=5)
    event: str = Field(default="E", pattern=r"^[A-Z_]{1,64}$")
    cap: int | None = Field(default=None, ge=1)
    payout: Decimal = Field(default=Decimal(0), ge=0, decimal_places=2)
    active: bool = True
    threshold: float = Field(default=1, gt=0, le=1e6)
    share: Decimal = Field(default=Decimal(0), ge=Decimal("0.5"))
    kind: Literal["count", "sum"] = "count"


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
        # Limits as a person writes them, not as Python prints a float.
        ({"threshold": 0}, "Enter a number above 0."),
        ({"threshold": 2e6}, "Enter 1000000 or less."),
        ({"share": "0.1"}, "Enter 0.5 or more."),
        ({"kind": "total"}, "Choose count or sum."),
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
    from api.core.refusals import DomainError, refuse_nul

    refuse_nul({"name": "Fine", "count": 3})
    with pytest.raises(DomainError) as refused:
        refuse_nul({"name": "Bad\x00name", "title": "ok", "tags": "a\x00"})
    assert set(refused.value.field_errors()) == {"name", "tags"}


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("not an address", "Enter an email address such as name@example.com."),
        ("ada@example", "Check the part after the @: a domain such as example.com."),
        ("ada@", "Write the domain after the @, as in name@example.com."),
        ("@example.com", "Write the name before the @, as in name@example.com."),
        ("a da@example.com", "Check the part before the @."),
        ("ada..l@example.com", "Check the dots: an address has no two in a row."),
    ],
)
def test_an_email_address_is_refused_in_a_persons_words(address, expected):
    from email_validator import EmailNotValidError, validate_email

    with pytest.raises(EmailNotValidError) as refused:
        validate_email(address, check_deliverability=False)
    assert email_problem(refused.value) == expected
