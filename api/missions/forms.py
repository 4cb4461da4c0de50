"""Editor forms and definitions, both ways, by the schema alone.

The editor's inputs are named after the definition's field paths (`title`,
`geotargeting.countriesInclude`, `rule.conditions.0.value`, `operatingSystem.2`), so a form
becomes a definition (`from_form`) by reading each input's text as its schema field's type
says, and a definition becomes the inputs' defaults (`form_values`) by the same paths. No
table maps input names to fields: a new plain field needs only its input on the page.

A checkbox comes after a hidden input of the same name, so an unchecked box is submitted
too; inputs the form does not have keep the stored value. An error is shown under the
input its location names, every one of them at once.

A country picker submits its codes under the field's path and what is still typed in its
box, not yet a chip, as `typed.<the path>`: a name the picker knows is added to the
codes, any other text refuses the save under the picker (a client that failed to make the
chip cannot lose the designer's intent).

Why one module of this size: reading a form, writing a definition back as its inputs and
placing each error under its input all walk the same field paths, so a new input, unit or
check is one change in one place.
"""

from __future__ import annotations

import math
import re
import types
import typing
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pycountry
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from api.core.countries import (
    ALIASES,
    country,
    find_countries,
    find_country,
    unknown_countries,
)
from api.core.wording import figure, plain
from api.missions.offers import OfferError
from models.offer_schemas import BudgetIn, CountryPayoutIn, StageIn

Definition = typing.TypeVar("Definition", bound=BaseModel)


class FormError(OfferError):
    """A form that does not make a valid definition; `errors` maps inputs to messages."""

    def __init__(self, errors: dict[str, str]):
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self._errors = errors

    @property
    def errors(self) -> dict[str, str]:
        return self._errors


def scalar(text: str) -> float | str | bool:
    """Typed text as a number, a boolean, or else the text."""
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def _items(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,;\s]+", text) if part.strip()]


# Inputs shown in a larger unit than the field's: the time limit is edited in hours, the
# minimum completion time in minutes.
UNITS = {"timeLimitSeconds": 3600, "minCompletionSeconds": 60}
UNIT_NAMES = {"timeLimitSeconds": "hours", "minCompletionSeconds": "minutes"}


# Dates edited as a day (00:00 UTC that day); a stored moment on the day shown is kept.
DATES = ("startDate", "expirationDate")


# A length of time (`rule.window.seconds`, `rule.within.seconds`) is typed as an amount in
# a unit chosen beside it: the unit's select is named `unit.<the path>` and holds the
# unit's seconds. The editor opens one in the largest unit it is a whole number of.
SECONDS = ".seconds"
UNIT = "unit."
UNIT_CHOICES = {86400: "days", 3600: "hours", 60: "minutes", 1: "seconds"}


def form_values(definition: BaseModel) -> dict[str, str]:
    """A definition as the text of the inputs named after its field paths (the editor's
    defaults when it opens a stored offer)."""
    values: dict[str, str] = {}
    for name, value in definition.model_dump(mode="json").items():
        _flatten(values, name, value)
    for name, factor in UNITS.items():
        if values.get(name):
            values[name] = f"{float(values[name]) / factor:g}"
    for name in DATES:
        if values.get(name):
            values[name] = values[name][:10]
    if values.get("stages.0.threshold"):
        # A ladder's payout is its stages' together: its input is left empty (the sum).
        values["payout"] = ""
    for path in [p for p in values if p.endswith(SECONDS) and values[p].isdigit()]:
        seconds = int(values[path])
        factor = next(f for f in UNIT_CHOICES if seconds % f == 0)
        values[path], values[UNIT + path] = str(seconds // factor), str(factor)
    return values


def _flatten(values: dict[str, str], path: str, value: Any) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(values, f"{path}.{key}", inner)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        for n, inner in enumerate(value):
            _flatten(values, f"{path}.{n}", inner)
    elif isinstance(value, list):
        values[path] = ", ".join(str(v) for v in value)
    elif isinstance(value, bool):
        values[path] = "true" if value else "false"
    elif isinstance(value, float):
        values[path] = _number_text(value)
    else:
        values[path] = "" if value is None else str(value)


def _number_text(number: float) -> str:
    """A number as typed back exactly: 10 (not 10.0), 1234567 (not 1.23457e+06), 0.1."""
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    return repr(number)


def from_form(
    schema: type[Definition],
    form: Mapping[str, str],
    *,
    stored: Definition | None = None,
    root: str = "",
) -> Definition:
    """The definition a form makes: the stored one (if any) with the form's inputs over it.
    FormError maps each bad input's name to its message."""
    form, typed_errors = _typed_countries(_in_seconds(form))
    form, named_errors = _payout_countries(form, root)
    typed_errors |= named_errors
    data = stored.model_dump() if stored is not None else {}
    read = _read(schema, _tree(form, root))
    for name in DATES:
        if stored is not None and _same_day(data.get(name), read.get(name)):
            read[name] = data[name]  # a stored moment with a time of day stays as it is
    data.update(read)
    try:
        definition = schema.model_validate(data)
    except ValidationError as exc:
        errors = _errors(exc, form, root, _rows(form, root))
        raise FormError(errors | typed_errors) from None
    if typed_errors:
        raise FormError(typed_errors)
    return definition


# The country pickers, by the definition's field they fill, and the name prefix of the
# text still typed in one (see the module's docstring).
PICKERS = {"include": "geotargeting.countriesInclude", "exclude": "geotargeting.countriesExclude"}
TYPED = "typed."


def _same_day(stored: Any, typed: Any) -> bool:
    """A day typed (as `_value` reads it, "2026-12-24T00:00:00Z") that is the day the
    stored moment falls on, as `form_values` shows it."""
    return (
        isinstance(stored, datetime)
        and isinstance(typed, str)
        and typed.endswith("T00:00:00Z")
        and typed[:10] == stored.isoformat()[:10]
    )


def _typed_countries(form: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The form with each picker's typed countries added to its codes, and the pickers
    whose text names no country, with what they say."""
    merged, errors = dict(form), {}
    for path in PICKERS.values():
        text = str(form.get(TYPED + path, ""))
        if not text.strip():
            continue
        found, unknown = find_countries(text)
        if unknown:
            errors[path] = unknown_countries(unknown)
        else:
            merged[path] = ", ".join([*_items(form.get(path, "")), *(c.code for c in found)])
    return merged, errors


# A country payout row's countries (`payouts.0.countries`), typed as codes or names
# separated by commas: "US, CA", "Germany; Austria", "UK".
PAYOUT_COUNTRIES = re.compile(r"payouts\.\d+\.countries")
_ALIASES = {"UK": "GB", "USA": "US", "UAE": "AE"}


def _payout_countries(form: Mapping[str, str], root: str) -> tuple[dict[str, str], dict[str, str]]:
    """The form with each payout row's countries as their codes, and the rows naming a
    country that does not exist, with what they say."""
    merged, errors = dict(form), {}
    prefix = f"{root}." if root else ""
    for name, text in form.items():
        if not PAYOUT_COUNTRIES.fullmatch(name.removeprefix(prefix)) or not str(text).strip():
            continue
        codes: list[str] = []
        unknown: list[str] = []
        for part in (p.strip() for p in re.split(r"[,;]", str(text))):
            if part:
                code = country_code(part)
                (codes if code else unknown).append(code or part)
        if unknown:
            quoted = " or ".join(f"“{part}”" for part in unknown)
            errors[name] = (
                f"No country is called {quoted}: use two-letter codes such as US or DE, "
                "or countries' names, separated by commas."
            )
        else:
            merged[name] = ", ".join(codes)
    return merged, errors


def country_code(text: str) -> str | None:
    """The code of a country typed as its code ("us", "DEU"), an alias ("UK") or its name
    ("Germany"); None for anything else. A text of two or three letters is a code or
    nothing: "UX" is no country (not Luxembourg, whose name holds it)."""
    text = text.strip()
    upper = text.upper()
    if upper in _ALIASES:
        return _ALIASES[upper]
    if len(text) == 2:
        return upper if country(upper).name != upper else None
    if len(text) == 3:
        entry = pycountry.countries.get(alpha_3=upper)
        return None if entry is None else str(entry.alpha_2)
    found = find_country(text)
    if found is None or _folded(text) not in _spellings(found.code):
        return None  # "Korea" is North or South: a name must be a country's whole name
    return found.code


def _folded(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch)).replace(".", "")
    return " ".join(plain.split()).casefold()


def _spellings(code: str) -> set[str]:
    """A country's whole names: ISO's, its common and official names, the picker's label
    and the aliases people use."""
    entry = pycountry.countries.get(alpha_2=code)
    names = [getattr(entry, a, None) for a in ("name", "common_name", "official_name")]
    names += [country(code).name, country(code).label]
    names += [alias for alias, of in ALIASES.items() if of == code]
    return {_folded(n) for n in names if n}


def _in_seconds(form: Mapping[str, str]) -> dict[str, str]:
    """The form with each amount typed beside a unit select (`unit.<path>`) in seconds; an
    amount that is not a number stays as typed, for the schema to refuse."""
    converted = dict(form)
    for name, factor in form.items():
        path = name.removeprefix(UNIT)
        if name == path or not str(form.get(path, "")).strip():
            continue
        try:
            amount, unit = float(form[path]), int(factor)
        except ValueError:
            continue
        # Too large to be a length of time stays as typed: the schema refuses it.
        if unit in UNIT_CHOICES and abs(amount * unit) < 2**53:
            converted[path] = _number_text(float(round(amount * unit)))
    return converted


def _tree(form: Mapping[str, str], root: str) -> dict[str, Any]:
    """`a.b.0.c` names as nested dicts (list items keyed by their index)."""
    tree: dict[str, Any] = {}
    prefix = f"{root}." if root else ""
    for name, text in form.items():
        if not name.startswith(prefix) or name == "id":  # the id is never the form's
            continue
        *parents, last = name.removeprefix(prefix).split(".")
        node = tree
        for part in parents:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        if not isinstance(node.get(last), dict):
            node[last] = str(text)
    return tree


def _read(schema: type[BaseModel], tree: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, info in schema.model_fields.items():
        if name in tree:
            data[name] = _value(info.annotation, tree[name], name)
    if data.get("op") in LIST_OPS and isinstance(tree.get("value"), str):
        # A condition's list, typed or chosen as chips: the text as submitted ("desert,
        # jungle, 3"), which the condition's schema reads as the list's values.
        data["value"] = tree["value"]
    return {k: v for k, v in data.items() if v is not _OMIT}


LIST_OPS = ("in", "not in")


_OMIT = object()


def _value(annotation: Any, raw: Any, name: str) -> Any:
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    args = typing.get_args(annotation) if union else (annotation,)
    kinds = [a for a in args if a is not type(None)]
    optional = type(None) in args
    kind = kinds[0] if len(kinds) == 1 else None
    origin = typing.get_origin(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        if not isinstance(raw, dict):
            return _OMIT
        # An optional part whose inputs are all empty (a window left blank) is absent, and
        # so is one whose required inputs are empty while the others hold their defaults
        # (a recurrence of "none", its week start and zone as they came).
        if optional and (_left_out(kind, raw) or _unset(kind, raw)):
            return None
        return _read(kind, raw)
    if origin is list:
        items = _list(typing.get_args(kind)[0], raw)
        return None if optional and not items else items  # an optional list left empty
    if not isinstance(raw, str):
        return raw  # inputs under a plain field's name: the schema refuses them
    text = raw.strip()
    if kind is bool:
        return text in ("on", "true")
    if text == "":
        return None if optional else "" if kind is str else _OMIT
    if kind is datetime:
        return f"{text}T00:00:00Z" if len(text) == 10 else text
    if name in UNITS:
        try:
            number = float(text)
        except ValueError:
            return text  # the schema says what is wrong
        # A positive amount less than a second is one second; zero or less the schema
        # refuses (as it is: not a finite number, or below its minimum).
        if not math.isfinite(number) or number <= 0:
            return text if not math.isfinite(number) else round(number)
        return max(1, round(number * UNITS[name]))
    if kind is None and str in kinds:
        return scalar(text)  # a condition's value: a number, a boolean or a string
    return text


def _list(item: Any, raw: str | dict[str, Any]) -> list[Any]:
    """A list from one text input (comma-separated) or from inputs numbered 0, 1, …
    (empty ones skipped: an unchecked box, a condition row left blank)."""
    if isinstance(raw, str):
        return _items(raw)
    rows = [raw[k] for k in sorted((k for k in raw if k.isdigit()), key=int)]
    if isinstance(item, type) and issubclass(item, BaseModel):
        return [_read(item, row) for row in rows if isinstance(row, dict) and _filled(row, item)]
    return [row for row in rows if isinstance(row, str) and row.strip()]


def _left_out(kind: type[BaseModel], raw: dict[str, Any]) -> bool:
    """An optional part's inputs that make no part: all empty, or its required ones empty
    and the others as they came (their defaults)."""
    if not _any_text(raw):
        return True
    fields = kind.model_fields
    required = [name for name, info in fields.items() if info.is_required()]
    if not required or any(_any_text({n: raw.get(n, "")}) for n in required):
        return False
    return all(
        isinstance(text, str) and text.strip() in ("", str(fields[name].default))
        for name, text in raw.items()
        if name in fields and name not in required
    )


# Optional parts that are absent whenever this input of theirs is empty, whatever the
# others hold: a budget without an amount is no budget (its period and zone stay as chosen).
KEY_INPUTS: dict[type[BaseModel], str] = {BudgetIn: "amount"}


def _unset(kind: type[BaseModel], raw: dict[str, Any]) -> bool:
    key = KEY_INPUTS.get(kind)
    return key is not None and not str(raw.get(key, "")).strip()


def _any_text(tree: dict[str, Any]) -> bool:
    return any(_any_text(v) if isinstance(v, dict) else str(v).strip() for v in tree.values())


def _filled(row: dict[str, Any], item: type[BaseModel]) -> bool:
    """A row counts when its first input has text (a condition's: its operator is a select
    that always has one), a row of only text inputs (a ladder's stage) when any has."""
    names = list(item.model_fields) if item in ANY_INPUT else list(item.model_fields)[:1]
    return any(not isinstance(v, str) or v.strip() for v in (row.get(n, "") for n in names))


# Rows of these count when any of their inputs has text: a stage with only its payout
# typed is refused under its threshold, a country payout without countries under them,
# not dropped.
ANY_INPUT: tuple[type[BaseModel], ...] = (StageIn, CountryPayoutIn)


def _rows(form: Mapping[str, str], root: str) -> dict[str, list[str]]:
    """The row numbers of the filled rows of each list of rows (a ladder's stages, the
    country payouts), by list path, in order: the definition's n-th item is the form's
    row `rows[path][n]` (rows left empty are skipped)."""
    prefix = f"{root}." if root else ""
    tree = _tree(form, root)
    found: dict[str, list[str]] = {}
    for name, item in ROW_LISTS.items():
        rows = tree.get(name)
        if isinstance(rows, dict):
            found[prefix + name] = [
                k
                for k in sorted((k for k in rows if k.isdigit()), key=int)
                if isinstance(rows[k], dict) and _filled(rows[k], item)
            ]
    return found


ROW_LISTS: dict[str, type[BaseModel]] = {"stages": StageIn, "payouts": CountryPayoutIn}
# What an empty input that a group needs says: the group is used by its other inputs.
MISSING = {
    "recurrence.every": "Choose how often it repeats, or leave its time zone empty.",
    "payouts.N.countries": "Name the countries this payout is for, or remove the row.",
    "payouts.N.payout": "Enter the payout for these countries, or remove the row.",
}
# Messages said as the form's inputs name things.
REWORDED = {
    "PeriodCaps sets at least one of day, week and month.": (
        "Set at least one of day, week and month (or leave the zone empty)."
    ),
}


def _errors(
    exc: ValidationError,
    form: Mapping[str, str],
    root: str = "",
    rows: Mapping[str, list[str]] | None = None,
) -> dict[str, str]:
    """Each error under the input it is about: the longest field path of the error's
    location that the form has an input for, else the first part of it (the rule, the
    operating systems), else "form". A check of the whole definition (a ladder's stages
    that do not go up) is shown under the input it is about (`_whole`), every one of them:
    two about one input are said there one after the other."""
    errors: dict[str, str] = {}
    for error in exc.errors():
        parts = [str(p) for p in ((root,) if root else ()) + tuple(error["loc"])]
        for path, numbers in (rows or {}).items():
            n = len(path.split("."))
            if parts[:n] == path.split(".") and len(parts) > n and parts[n].isdigit():
                at = int(parts[n])
                parts[n] = numbers[at] if at < len(numbers) else parts[n]
        paths = [".".join(parts[:n]) for n in range(len(parts), 0, -1)]
        key = next((p for p in paths if p in form), parts[0] if parts else "")
        message = _in_units(error) or plain(error)
        message = REWORDED.get(message, message)
        if not key or key == root:
            key = _whole(message, form, root, rows or {})
            if key in errors and message not in errors[key]:
                errors[key] += " " + message  # two checks of the whole about one input
                continue
        if error["type"] in ("missing", "too_short"):
            general = re.sub(r"\.\d+\.", ".N.", key.removeprefix(f"{root}." if root else ""))
            message = MISSING.get(general, message)
        errors.setdefault(key, message)
    return errors


def _at(root: str, name: str) -> str:
    return f"{root}.{name}" if root else name


def _whole(message: str, form: Mapping[str, str], root: str, rows: Mapping[str, list[str]]) -> str:
    """The input a check of the whole definition is about (else "form")."""
    stages = rows.get(_at(root, "stages"), [])

    def number(path: str) -> float | None:
        try:
            return float(str(form.get(path, "")).strip())
        except ValueError:
            return None

    threshold = [_at(root, f"stages.{n}.threshold") for n in stages]
    if message.startswith("A ladder's stages go up") and threshold:
        values = [number(p) for p in threshold]
        for path, before, after in zip(threshold[1:], values, values[1:], strict=False):
            if before is not None and after is not None and after <= before:
                return path
        return threshold[-1]
    if message.startswith(("A ladder needs a rule", "A ladder's")):
        return _at(root, "payout") if "payout" in message else _at(root, "stages")
    if message.lower().startswith("payout is required"):
        return _at(root, "payout")
    if threshold and ("target is at most" in message or "within a window" in message):
        return threshold[-1]  # the last stage is the rule's target
    if message.startswith("A pooled mission"):
        return _at(root, "recurrence.every")
    if message.startswith("The start date"):
        return _at(root, "startDate")
    if message.startswith("A budget counts revenue"):
        return _at(root, "revenue")
    if message.startswith("A country has one payout"):
        return _twice(message, form, root, rows.get(_at(root, "payouts"), []))
    return "form"


def _twice(message: str, form: Mapping[str, str], root: str, numbers: list[str]) -> str:
    """The countries input of the payout row that names a country a row above it names."""
    twice = set(re.findall(r"\b[A-Z]{2}\b", message.split(":", 1)[-1]))
    seen: set[str] = set()
    for n in numbers:
        path = _at(root, f"payouts.{n}.countries")
        codes = set(_items(str(form.get(path, "")).upper()))
        if codes & twice & seen:
            return path
        seen |= codes
    return _at(root, "payouts")


def _in_units(error: ErrorDetails) -> str | None:
    """A bound of an input edited in hours or minutes, said in that unit (the schema's
    bounds are in seconds)."""
    field = str(error["loc"][-1]) if error["loc"] else ""
    ctx = error.get("ctx") or {}
    if field not in UNITS:
        return None
    if error["type"] == "greater_than_equal":
        return f"Enter a number of {UNIT_NAMES[field]} above 0."
    if error["type"] == "less_than_equal":
        return f"Enter {figure(ctx['le'] / UNITS[field])} {UNIT_NAMES[field]} or less."
    return None
