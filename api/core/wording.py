"""Refusals in the portal's words: a sentence that starts with a capital, and what a
validation error of the schema means, said the way a form's user can act on it (no
pydantic wording, no patterns, no Python lists)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic_core import ErrorDetails

# What an input named by the last part of its path must look like, where the schema
# says it with a pattern.
FORMATS = {
    "event": "Use letters, digits and _ . : - only (at most 64 characters), e.g. GAME_END.",
    "maxTraitField": "Use letters, digits and _ . : - only (at most 64 characters), e.g. kills.",
    "pool": "Use letters, digits and _ . - only (at most 64 characters), e.g. daily-pvp.",
}


def sentence(text: str) -> str:
    """`text` as a sentence: a capital first letter and a closing full stop."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def counted(n: Any, one: str, many: str) -> str:
    """`n` followed by `one` or `many`, as the number needs ("1 item", "2 items")."""
    return f"{n} {one if n == 1 else many}"


def figure(value: Any) -> str:
    """A limit as a person writes it: 0 (not 0.0), 0.5, 1000000 (not 1e+06)."""
    if isinstance(value, float | Decimal) and value == int(value):
        return str(int(value))
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def _choices(expected: Any) -> str:
    """pydantic's "'count', 'consecutive' or 'sum'" without the quotes."""
    return str(expected).replace("'", "")


def plain(error: ErrorDetails) -> str:
    """One validation error of a form, in words."""
    kind, ctx = error["type"], error.get("ctx") or {}
    field = str(error["loc"][-1]) if error["loc"] else ""
    limit = ctx.get("min_length", ctx.get("max_length"))
    messages: dict[str, str] = {
        "missing": "This is required.",
        "string_too_short": "This is required."
        if limit == 1
        else f"Use at least {counted(limit, 'character', 'characters')}.",
        "string_too_long": f"Use at most {counted(limit, 'character', 'characters')}.",
        "too_short": f"Add at least {counted(limit, 'item', 'items')}.",
        "too_long": f"Use at most {counted(limit, 'item', 'items')}.",
        "string_pattern_mismatch": FORMATS.get(field, "Use letters, digits and _ only."),
        "int_parsing": "Enter a whole number.",
        "int_from_float": "Enter a whole number.",
        "float_parsing": "Enter a number.",
        "decimal_parsing": "Enter a number.",
        "decimal_max_places": f"Use at most {ctx.get('decimal_places')} decimals.",
        "decimal_max_digits": "This number is too long.",
        "bool_parsing": "Choose yes or no.",
        "datetime_parsing": "Enter a date.",
        "datetime_from_date_parsing": "Enter a date.",
        "finite_number": "Enter a number.",
        "decimal_whole_digits": "This number is too long.",
        "greater_than": f"Enter a number above {figure(ctx.get('gt'))}.",
        "greater_than_equal": f"Enter {figure(ctx.get('ge'))} or more.",
        "less_than": f"Enter a number below {figure(ctx.get('lt'))}.",
        "less_than_equal": f"Enter {figure(ctx.get('le'))} or less.",
        "literal_error": f"Choose {_choices(ctx.get('expected'))}.",
        "enum": f"Choose {_choices(ctx.get('expected'))}.",
    }
    if kind in messages:
        return messages[kind]
    if kind not in ("value_error", "assertion_error"):
        # pydantic's own wording ("Input should be a valid dictionary"): only a forged
        # form gets here, with a text where the schema wants a list, a number or a group.
        return "This input holds a value of the wrong kind."
    return sentence(str(error["msg"]).removeprefix("Value error, "))
