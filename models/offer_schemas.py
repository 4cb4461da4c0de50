"""Mission and quest definitions as designers write them (import files, the CLI and the
portal's editor), and the one conversion between a definition and its stored row.

Field names follow the offers API of the original spec (camelCase), plus the rule. A plain
field is stored in the column of the same name in snake_case (`previewUrl` → `preview_url`),
so adding one needs no converter change; only the fields in `_SHAPED` are stored otherwise.

Why one module of this size: a definition and its stored row are one shape (a plain field
is stored in the column of its name), so the schema, its checks and the one converter
change together, and every caller (import files, the CLI, the editor, the listing) reads
them here.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from models.schemas import escaped, text_problem
from models.signals import action_problem

if TYPE_CHECKING:
    from models.offers import Mission, Quest

# Validation context of a definition read back from its stored row (`STORED: True`): what
# was stored is not refused again for its text.
STORED = "stored"


class _Definition(BaseModel):
    """A part of a definition. Every text in it, at any depth (a list's items, a mapping's
    keys and values), is refused under its own path when no database can store it: the
    NUL character, or half of a surrogate pair (PostgreSQL refuses the first and no UTF-8
    text holds the second), so an import file is refused as the portal's forms are,
    before anything is written."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _storable(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(info.context, dict) and info.context.get(STORED):
            return value
        problems = [
            InitErrorDetails(type=PydanticCustomError("value_error", message), loc=at, input=value)
            for at, message in _unstorable(value)
        ]
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        return value


def _unstorable(value: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Where in a value (lists, mappings, texts) a text cannot be stored, and why, in the
    value's order; a part already validated (a model) is left to its own check. A
    mapping's key is shown escaped (`\\u0000`) in the path."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), value)]
    while stack:
        at, node = stack.pop()
        if isinstance(node, str):
            problem = text_problem(node)
            if problem is not None:
                found.append((at, problem))
        elif isinstance(node, dict):
            inside = []
            for key, inner in node.items():
                name = escaped(key) if isinstance(key, str) else str(key)
                problem = text_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    found.append(((*at, name), problem))
                inside.append(((*at, name), inner))
            stack.extend(reversed(inside))
        elif isinstance(node, list | tuple):
            stack.extend(reversed([((*at, n), inner) for n, inner in enumerate(node)]))
    return found


COUNTRY = re.compile(r"[A-Z]{2}")
OPERATING_SYSTEMS = ("Android", "iOS", "Windows", "macOS", "Linux", "ChromeOS")
_OS_BY_LOWER = {name.lower(): name for name in OPERATING_SYSTEMS}


class Geotargeting(_Definition):
    model_config = ConfigDict(extra="forbid")

    countriesInclude: list[str] = Field(default_factory=list)
    countriesExclude: list[str] = Field(default_factory=list)

    @field_validator("countriesInclude", "countriesExclude")
    @classmethod
    def _countries(cls, value: list[str]) -> list[str]:
        return _codes(value)


EVENT_NAME = r"^[A-Za-z0-9_.:\-]{1,64}$"
LIST_LIMIT = 100  # the values an `in` / `not in` condition may list
MATCHER_LIMIT = 20  # the matchers of `anyOf`, the steps of a sequence
KINDS = ("count", "consecutive", "sum", "max", "min", "distinct", "days", "streak")
FIELD_KINDS = ("sum", "max", "min", "distinct")  # the kinds that read `field`
DAY_KINDS = ("days", "streak")  # the kinds that read the event's day in `timeZone`
# The kinds whose progress keeps up to `threshold` values, and the largest threshold each
# takes: what a player's progress keeps stays small (docs/missions.md#the-rule).
KEPT_LIMITS = {"distinct": 10_000, "days": 3660, "streak": 3660}
WINDOW_LIMIT = 1_000  # a window keeps at most this many events (a count's target, at most)
PER_DISTINCT_LIMIT = 100  # a distinct within one group: each of the groups kept keeps them


class ConditionIn(_Definition):
    """One condition of a rule. Each check is on the field it is about, so a form shows
    every problem of every row at once, each under its input; the engine
    (api/missions/rules.py) checks the rule again when it is saved."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(description='"value" (the event\'s value), "traits.<name>" or "groupId"')
    op: Literal[">=", ">", "<=", "<", "==", "!=", "exists", "not exists", "in", "not in"]
    # int before float: a whole number typed as 10 stays 10 (not 10.0) wherever it shows.
    value: int | float | str | bool | list[int | float | str] | None = Field(
        default=None, validate_default=True
    )

    @model_validator(mode="before")
    @classmethod
    def _typed_list(cls, data: Any) -> Any:
        """`in` / `not in` with the values typed as text, separated by commas (as the
        editor's chips submit them): "desert, jungle, 3" is [desert, jungle, 3]. And a
        number compared with `groupId` (always text) is its digits: 7 is "7"."""
        if isinstance(data, dict) and data.get("op") in ("in", "not in"):
            value = data.get("value")
            if isinstance(value, str):
                data = {
                    **data,
                    "value": [_typed(part) for part in value.split(",") if part.strip()],
                }
        if isinstance(data, dict) and data.get("field") == "groupId":
            # A group's id is text: a number typed for it means its digits ("7").
            value = data.get("value")
            if isinstance(value, list):
                data = {**data, "value": [_as_text(v) for v in value]}
            else:
                data = {**data, "value": _as_text(value)}
        return data

    @field_validator("field")
    @classmethod
    def _field(cls, value: str) -> str:
        if not (_is_field(value) or value == "groupId"):
            raise ValueError('A condition\'s field is "value", "traits.<name>" or "groupId".')
        return value

    @field_validator("value")
    @classmethod
    def _operand(cls, value: Any, info: ValidationInfo) -> Any:
        op = info.data.get("op")
        if op is None or op in ("exists", "not exists"):
            return value  # a wrong operator has its own message
        if value is None:
            raise ValueError(
                f"The condition on {info.data.get('field') or 'its field'} needs a value."
            )
        if op in ("in", "not in"):
            return _listed(value, op)
        if info.data.get("field") == "groupId" and not isinstance(value, str):
            raise ValueError("groupId is text: compare it with text, or list texts with in.")
        if isinstance(value, list):
            raise ValueError(f"{op} compares with one value; use in or not in for a list.")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("Enter a number, or text to compare with == or !=.")
        if isinstance(value, str | bool) and op not in ("==", "!="):
            raise ValueError(
                f"{op} compares numbers: enter a number, or compare text with == or !=."
            )
        return value


def _as_text(value: Any) -> Any:
    """A finite number as the text it reads as (7 → "7"); anything else as it is."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return str(int(value)) if float(value).is_integer() else repr(value)
    return value


def _typed(text: str) -> int | float | str:
    """One typed list value: a number when it reads as one, else the text."""
    text = text.strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    return int(number) if number.is_integer() and "." not in text else number


def _listed(value: Any, op: str) -> list[int | float | str]:
    """The values of an `in` / `not in` condition: 1 to LIST_LIMIT strings or numbers,
    each once, in the order given."""
    if not isinstance(value, list) or not value:
        raise ValueError(f"{op} takes a list of values, e.g. [desert, jungle].")
    if len(value) > LIST_LIMIT:
        raise ValueError(f"A list holds at most {LIST_LIMIT} values.")
    unique: list[int | float | str] = []
    for item in value:
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("A list holds text and numbers.")
        if item not in unique:
            unique.append(item)
    return unique


class MatcherIn(_Definition):
    """An event name and the conditions (joined by AND) its events must pass: one entry
    of `anyOf` or of `steps`."""

    model_config = ConfigDict(extra="forbid")

    event: str = Field(pattern=EVENT_NAME)
    conditions: list[ConditionIn] = Field(default_factory=list)


class SecondsIn(_Definition):
    """A length of time (`window`, `within`): whole seconds, up to a year."""

    model_config = ConfigDict(extra="forbid")

    seconds: int = Field(ge=1, le=366 * 86400)


class CompletionIn(_Definition):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["count", "consecutive", "sum", "max", "min", "distinct", "days", "streak"] = (
        "count"
    )
    threshold: float = Field(default=1, ge=0, allow_inf_nan=False)
    field: str | None = Field(
        default=None,
        description="for sum, max, min: value or traits.<name>; distinct also groupId",
        validate_default=True,
    )
    timeZone: str | None = Field(
        default=None, description="for days and streak: an IANA time zone (default UTC)"
    )

    @field_validator("threshold")
    @classmethod
    def _threshold(cls, value: float, info: ValidationInfo) -> float:
        kind = info.data.get("kind")
        if value == 0 and kind != "min":
            raise ValueError("The target must be above 0 (only a minimum may be 0).")
        most = KEPT_LIMITS.get(str(kind))
        if most is not None and value > most:
            raise ValueError(f"A {kind} target is at most {most:,}.")
        return value

    @field_validator("field")
    @classmethod
    def _kind_field(cls, value: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("kind")
        if kind not in FIELD_KINDS:
            return None  # only the kinds that read a field keep one
        if kind == "distinct" and value == "groupId":
            return value
        if not (value and _is_field(value)):
            raise ValueError(_FIELD_NEEDED[kind])
        return value

    @field_validator("timeZone")
    @classmethod
    def _zone(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("kind") not in DAY_KINDS:
            return None
        value = (value or "").strip() or None
        return None if value is None else zone_name(value)


_FIELD_NEEDED = {
    "sum": 'A total needs the field to add up: "value" or "traits.<name>".',
    "max": 'A highest value needs its field: "value" or "traits.<name>".',
    "min": 'A lowest value needs its field: "value" or "traits.<name>".',
    "distinct": 'Different values need their field: "value", "traits.<name>" or "groupId".',
}


class RuleIn(_Definition):
    """Which events count (`event` and `conditions`, or `anyOf`, or `steps` in order) and
    when the mission is complete; docs/missions.md describes each part."""

    model_config = ConfigDict(extra="forbid")

    event: str | None = Field(default=None, pattern=EVENT_NAME)
    conditions: list[ConditionIn] = Field(default_factory=list)
    anyOf: list[MatcherIn] | None = Field(default=None, min_length=1, max_length=MATCHER_LIMIT)
    steps: list[MatcherIn] | None = Field(default=None, min_length=2, max_length=MATCHER_LIMIT)
    within: SecondsIn | None = None
    per: str | None = Field(default=None, description='"groupId" or "traits.<name>"')
    window: SecondsIn | None = None
    completion: CompletionIn = Field(default_factory=CompletionIn)

    @field_validator("per")
    @classmethod
    def _per(cls, value: str | None) -> str | None:
        if value is not None and not (value == "groupId" or _is_trait(value)):
            raise ValueError('per is "groupId" or "traits.<name>".')
        return value

    @model_validator(mode="after")
    def _one_shape(self) -> RuleIn:
        shapes = [self.event is not None, self.anyOf is not None, self.steps is not None]
        if sum(shapes) != 1:
            raise ValueError("A rule has one of event, anyOf or steps.")
        if self.conditions and self.event is None:
            raise ValueError(
                "conditions go with event; in anyOf and steps, each entry has its own."
            )
        if self.steps is None:
            if self.within is not None:
                raise ValueError("within belongs to steps.")
            kind, threshold = self.completion.kind, self.completion.threshold
            if self.window is not None and kind == "count" and threshold > WINDOW_LIMIT:
                raise ValueError(f"A count within a window is at most {WINDOW_LIMIT:,}.")
            if self.per is not None and kind == "distinct" and threshold > PER_DISTINCT_LIMIT:
                raise ValueError(
                    f"Different values within one group are at most {PER_DISTINCT_LIMIT:,}."
                )
            return self
        if self.per is not None or self.window is not None:
            raise ValueError("A sequence of steps takes neither per nor window.")
        if self.completion != CompletionIn():
            raise ValueError("A sequence is complete at its last step: leave completion out.")
        return self

    @property
    def matchers(self) -> list[MatcherIn]:
        """Every matcher of the rule: its event and conditions, anyOf's or the steps."""
        if self.event is not None:
            return [MatcherIn(event=self.event, conditions=self.conditions)]
        return list(self.anyOf or self.steps or [])

    @property
    def first_event(self) -> str:
        """The first event name the rule reads (what a mission's list shows and stores in
        its `rule_event` column)."""
        return self.matchers[0].event


# --- live operations (docs/missions.md#live-operations) --------------------------------

EVERY = ("day", "week", "month")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
POOL_NAME = r"^[A-Za-z0-9_.\-]{1,64}$"
STAGE_LIMIT = 20  # the stages of one ladder
# The largest cap (of conversions, players, a period's): the largest 32-bit integer, what
# every database's integer column holds.
COUNT_LIMIT = 2**31 - 1


def zone_name(value: str | None) -> str:
    """An IANA time zone name, checked; empty means UTC."""
    value = (value or "").strip() or "UTC"
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # a directory: "Europe"
        raise ValueError(
            f"Unknown time zone {value}: use an IANA name such as Europe/Berlin."
        ) from None
    return value


class _Periodic(_Definition):
    """How often something turns over: each day, week or month, at midnight in a zone."""

    model_config = ConfigDict(extra="forbid")

    every: Literal["day", "week", "month"]
    timeZone: str = "UTC"
    weekStartsOn: Literal[
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"
    ] = "monday"

    @field_validator("timeZone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return zone_name(value)


class RecurrenceIn(_Periodic):
    """A mission that starts over each period: progress counts the period's events only,
    and a player converts at most once per period (more with allowMultipleConversions)."""


class PoolIn(_Periodic):
    """A game's rotating pool: each player sees `size` of its missions per period."""

    name: str = Field(pattern=POOL_NAME)
    size: int = Field(ge=1, le=100)
    every: Literal["day", "week", "month"] = "day"


class StageIn(_Definition):
    """One rung of a ladder: reached when progress reaches `threshold`, paid `payout`."""

    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(gt=0, allow_inf_nan=False)
    payout: Decimal = Field(ge=0, max_digits=14, decimal_places=6, description="USD")

    @property
    def payout_micros(self) -> int:
        return int(self.payout * 1_000_000)


class PeriodCapsIn(_Definition):
    """At most this many conversions a day, a week, a month (any of them), counted in
    `timeZone`; weeks start on Monday."""

    model_config = ConfigDict(extra="forbid")

    day: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)
    week: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)
    month: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)
    timeZone: str = "UTC"

    @field_validator("timeZone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return zone_name(value)

    @model_validator(mode="after")
    def _one(self) -> PeriodCapsIn:
        if self.day is None and self.week is None and self.month is None:
            raise ValueError("periodCaps sets at least one of day, week and month.")
        return self

    def limits(self) -> dict[str, int]:
        """{"day": N, …} for the periods it caps."""
        return {name: limit for name in EVERY if (limit := getattr(self, name)) is not None}


def _codes(value: list[str]) -> list[str]:
    """Two-letter ISO 3166-1 codes, upper case, each once, in order."""
    codes = [c.strip().upper() for c in value]
    bad = [c for c in codes if not COUNTRY.fullmatch(c)]
    if bad:
        raise ValueError(
            "Countries are two-letter ISO 3166-1 codes such as US or DE; not a country: "
            + ", ".join(bad)
        )
    return sorted(set(codes))


class CountryPayoutIn(_Definition):
    """What the mission pays for players in these countries (USD), instead of its payout:
    the most specific payout rule (docs/economics.md#payout-precedence)."""

    model_config = ConfigDict(extra="forbid")

    countries: list[str] = Field(min_length=1, max_length=250)
    payout: Decimal = Field(ge=0, max_digits=14, decimal_places=6, description="USD")

    @field_validator("countries")
    @classmethod
    def _countries(cls, value: list[str]) -> list[str]:
        return _codes(value)


BUDGET_EVERY = ("day", "week", "month", "total")


class BudgetIn(_Definition):
    """At most this much revenue (USD) a day, a week, a month (in `timeZone`; weeks start on
    Monday) or in total: the conversion that would pass it is not made, and the offers leave
    the listing until the period turns (docs/economics.md#budgets)."""

    model_config = ConfigDict(extra="forbid")

    amount: Decimal = Field(gt=0, max_digits=14, decimal_places=6, description="USD")
    every: Literal["day", "week", "month", "total"] = "day"
    timeZone: str = "UTC"

    @field_validator("timeZone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return zone_name(value)

    @property
    def amount_micros(self) -> int:
        return int(self.amount * 1_000_000)


# Rule kinds a ladder reads stages of: a number that only grows while a player plays.
STAGED_KINDS = ("count", "consecutive", "sum", "max", "distinct", "days", "streak")


def _is_trait(name: str) -> bool:
    return name.startswith("traits.") and len(name) > len("traits.")


def _is_field(name: str) -> bool:
    return name == "value" or _is_trait(name)


class _OfferCommon(_Definition):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, description="Give an id to update an existing offer.")
    description: str | None = None
    thumbnail: str = ""
    previewUrl: str = ""
    destinationUrl: str = Field(min_length=1, max_length=2048)
    expirationDate: datetime | None = None
    startDate: datetime | None = Field(
        default=None, description="listed and clickable only from then (default: at once)"
    )
    isActive: bool = True
    operatingSystem: list[str] = Field(default_factory=list)
    geotargeting: Geotargeting = Field(default_factory=Geotargeting)
    tags: list[str] = Field(default_factory=list)
    instructions: str = ""
    requirements: str = ""

    @field_validator("destinationUrl", "previewUrl", "thumbnail")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not value.lower().startswith(("http://", "https://")):
            raise ValueError("Enter a web address starting with https:// or http://.")
        return value

    @field_validator("operatingSystem")
    @classmethod
    def _os(cls, value: list[str]) -> list[str]:
        known = []
        for name in value:
            canonical = _OS_BY_LOWER.get(name.strip().lower())
            if canonical is None:
                raise ValueError(
                    f"Unknown operating system {name}; choose from {', '.join(OPERATING_SYSTEMS)}."
                )
            known.append(canonical)
        return sorted(set(known))

    @field_validator("expirationDate", "startDate")
    @classmethod
    def _aware(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if value is not None and value.tzinfo is None:
            which = "expiry" if info.field_name == "expirationDate" else "start"
            raise ValueError(f"The {which} date needs a time zone, e.g. 2027-01-31T00:00:00Z.")
        return value

    @model_validator(mode="after")
    def _whole_offer(self) -> Any:
        """The checks of the offer as a whole (no one field's), every problem named at once:
        a form shows each under the input it is about, an import file lists them all."""
        problems = self._whole_problems()
        if problems:
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [
                    InitErrorDetails(type="value_error", loc=(), input=self, ctx={"error": p})
                    for p in problems
                ],
            )
        return self

    def _whole_problems(self) -> list[str]:
        start, end = self.startDate, self.expirationDate
        if start is not None and end is not None and start >= end:
            return ["The start date must be before the expiry date."]
        return []


class MissionIn(_OfferCommon):
    title: str = Field(min_length=1, max_length=200)
    # A ladder's payout is its stages' together (what a player earns for all of them).
    payout: Decimal | None = Field(
        default=None, ge=0, max_digits=14, decimal_places=6, description="USD"
    )
    # What the game pays the network per conversion (USD; a ladder's: for all its stages),
    # the payout per country, and a budget of revenue (docs/economics.md).
    revenue: Decimal | None = Field(
        default=None, ge=0, max_digits=14, decimal_places=6, description="USD"
    )
    payouts: list[CountryPayoutIn] | None = Field(default=None, min_length=1, max_length=50)
    budget: BudgetIn | None = None
    cap: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)
    allowMultipleConversions: bool = False
    timeLimitSeconds: int | None = Field(default=None, ge=1)
    rule: RuleIn
    recurrence: RecurrenceIn | None = None
    stages: list[StageIn] | None = Field(default=None, min_length=2, max_length=STAGE_LIMIT)
    periodCaps: PeriodCapsIn | None = None
    capPerOfferwall: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)
    pool: str | None = Field(default=None, pattern=POOL_NAME)
    # Fraud screening (docs/fraud.md#anti-cheat-rules): a completion sooner than this
    # after the click is held for review; an event of the rule over these maxima, or past
    # this many a minute, does not count.
    minCompletionSeconds: int | None = Field(default=None, ge=1, le=365 * 86400)
    maxEventValue: float | None = Field(default=None, allow_inf_nan=False)
    maxTraitField: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.:\-]{1,64}$")
    maxTraitValue: float | None = Field(default=None, allow_inf_nan=False, validate_default=True)
    maxEventsPerMinute: int | None = Field(default=None, ge=1, le=100_000)
    # Its own action per risk signal (docs/fraud.md#rules), stricter than its offerwall's:
    # {"hosting_network": "refuse", "multi_offerwall": "hold"}; a signal left out (or
    # empty) follows the offerwall's rule.
    fraudActions: dict[str, str] | None = None

    @field_validator("fraudActions")
    @classmethod
    def _fraud_actions(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        chosen = {k.strip(): v.strip().lower() for k, v in value.items() if v.strip()}
        for signal, action in chosen.items():
            problem = action_problem(signal, action, mission=True)
            if problem:
                raise ValueError(problem)
        return chosen or None

    @field_validator("maxTraitField", mode="before")
    @classmethod
    def _trait_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().removeprefix("traits.")
            return value or None
        return value

    @field_validator("maxTraitValue")
    @classmethod
    def _trait_limit(cls, value: float | None, info: ValidationInfo) -> float | None:
        # Checked on the maximum (after the name), so the editor shows it under that input;
        # a name refused on its own is not in `info.data`, and its own message is enough.
        if "maxTraitField" not in info.data:
            return value
        if (info.data["maxTraitField"] is None) != (value is None):
            raise ValueError("A trait's maximum needs both the trait's name and the maximum.")
        return value

    def _whole_problems(self) -> list[str]:
        """The offer's problems and those of the mission's live operations and economics;
        a ladder's payout becomes its stages' together, and its rule's target the last
        stage's."""
        problems = super()._whole_problems()
        if self.stages is not None:
            thresholds = [stage.threshold for stage in self.stages]
            if any(b <= a for a, b in pairwise(thresholds)):
                problems.append("A ladder's stages go up: each threshold above the one before.")
            kind = "steps" if self.rule.steps else self.rule.completion.kind
            if kind not in STAGED_KINDS:
                problems.append(
                    f"A ladder needs a rule whose progress grows ({', '.join(STAGED_KINDS)}); "
                    f"not {kind}."
                )
            most = KEPT_LIMITS.get(kind)
            if most is not None and thresholds[-1] > most:
                problems.append(f"A {kind} target is at most {most:,}.")
            if self.rule.window is not None and kind == "count" and thresholds[-1] > WINDOW_LIMIT:
                problems.append(f"A count within a window is at most {WINDOW_LIMIT:,}.")
            total = sum((stage.payout for stage in self.stages), Decimal(0))
            if self.payout is not None and self.payout != total:
                problems.append(
                    "A ladder's payout is its stages' together: leave payout out, "
                    f"or make it {total}."
                )
            self.payout = total
            # The rule completes at the last stage.
            self.rule.completion.threshold = thresholds[-1]
        elif self.payout is None:
            problems.append("payout is required (or stages, each with its payout).")
        if self.pool is not None and self.recurrence is not None:
            problems.append("A pooled mission turns over with its pool: leave recurrence out.")
        seen: set[str] = set()
        for row in self.payouts or []:
            twice = seen & set(row.countries)
            if twice:
                problems.append(
                    "A country has one payout: " + ", ".join(sorted(twice)) + " is in two rows."
                )
                break
            seen |= set(row.countries)
        if self.budget is not None and not self.revenue:
            problems.append("A budget counts revenue: set the mission's revenue first.")
        return problems

    @property
    def payout_micros(self) -> int:
        return int((self.payout or 0) * 1_000_000)

    @property
    def revenue_micros(self) -> int | None:
        return None if self.revenue is None else int(self.revenue * 1_000_000)


class QuestFields(_OfferCommon):
    """A quest's own fields: what the portal's quest form edits (its missions are chosen
    from the game's existing ones)."""

    name: str = Field(min_length=1, max_length=200)
    startCap: int | None = Field(default=None, ge=1, le=COUNT_LIMIT)


class QuestIn(QuestFields):
    missions: list[MissionIn] = Field(min_length=1)


class OffersFile(_Definition):
    """An import file: a game's rotating pools, missions and quests."""

    model_config = ConfigDict(extra="forbid")

    gameId: str
    # The game's own budget of revenue, over all its missions (absent: left as it is).
    budget: BudgetIn | None = None
    pools: list[PoolIn] = Field(default_factory=list)
    missions: list[MissionIn] = Field(default_factory=list)
    quests: list[QuestIn] = Field(default_factory=list)


def as_plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


# --- definitions and stored rows ------------------------------------------------------

# Fields not stored in the column of their snake_case name; each is handled below.
_SHAPED = {"id", "geotargeting", "operatingSystem", "payout", "revenue", "rule", "missions"}


def _plain(value: Any) -> Any:
    """A field as its column stores it: a nested definition (recurrence, stages, caps) as
    the JSON it is written in, without the parts left out."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=False)
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return [item.model_dump(mode="json") for item in value]
    return value


def _column(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _plain_fields(schema: type[BaseModel]) -> list[str]:
    return [name for name in schema.model_fields if name not in _SHAPED]


def offer_columns(data: MissionIn | QuestFields) -> dict[str, Any]:
    """The stored columns of a definition (its id and a quest's missions aside)."""
    columns = {_column(name): _plain(getattr(data, name)) for name in _plain_fields(type(data))}
    columns["operating_systems"] = data.operatingSystem
    columns["countries_include"] = data.geotargeting.countriesInclude
    columns["countries_exclude"] = data.geotargeting.countriesExclude
    if isinstance(data, MissionIn):
        columns |= {"payout_micros": data.payout_micros, "revenue_micros": data.revenue_micros}
        columns |= rule_columns(data.rule)
    return columns


# The parts of a rule stored in `rule_extra` (beside the completion's `timeZone`).
_EXTRA = ("anyOf", "steps", "within", "per", "window")


def rule_columns(rule: RuleIn) -> dict[str, Any]:
    """A rule's stored columns: its first event and conditions, its completion, and the
    rest (`rule_extra`) as the definition names it."""
    completion = rule.completion
    extra = {
        name: value
        for name, value in rule.model_dump(mode="json", include=set(_EXTRA)).items()
        if value is not None
    }
    if completion.timeZone is not None:
        extra["timeZone"] = completion.timeZone
    return {
        "rule_event": rule.first_event,
        "rule_conditions": [c.model_dump(exclude_none=True) for c in rule.conditions],
        "rule_completion": completion.kind,
        "rule_threshold": completion.threshold,
        "rule_sum_field": completion.field,
        "rule_extra": extra or None,
    }


def _stored(offer: Mission | Quest, schema: type[BaseModel]) -> dict[str, Any]:
    fields = {name: getattr(offer, _column(name)) for name in _plain_fields(schema)}
    return fields | {
        "id": offer.id,
        "operatingSystem": offer.operating_systems,
        "geotargeting": {
            "countriesInclude": offer.countries_include,
            "countriesExclude": offer.countries_exclude,
        },
    }


# A mission's rule columns, in the order `stored_rule` takes them.
RULE_COLUMNS = (
    "rule_event",
    "rule_conditions",
    "rule_completion",
    "rule_threshold",
    "rule_sum_field",
    "rule_extra",
)


def rule_in(mission: Mission) -> RuleIn:
    """A stored mission's rule as its definition."""
    return stored_rule(*(getattr(mission, name) for name in RULE_COLUMNS))


def stored_rule(
    event: str,
    conditions: list[dict[str, Any]],
    kind: str,
    threshold: float,
    field: str | None,
    extra: dict[str, Any] | None,
) -> RuleIn:
    """A rule's definition from its stored columns (`rule_columns` in reverse)."""
    rule = dict(extra or {})
    completion: dict[str, Any] = {"kind": kind, "threshold": threshold}
    if field is not None:
        completion["field"] = field
    if "timeZone" in rule:
        completion["timeZone"] = rule.pop("timeZone")
    if "anyOf" not in rule and "steps" not in rule:
        rule |= {"event": event, "conditions": conditions}
    if "steps" not in rule:
        rule["completion"] = completion
    return RuleIn.model_validate(rule, context={STORED: True})


def mission_in(mission: Mission) -> MissionIn:
    """A stored mission as the definition that saves it again unchanged: what the CLI
    lists, what an export writes and what the editor opens with."""
    payout = Decimal(mission.payout_micros) / 1_000_000
    revenue = (
        None if mission.revenue_micros is None else Decimal(mission.revenue_micros) / 1_000_000
    )
    return MissionIn.model_validate(
        _stored(mission, MissionIn)
        | {"payout": payout, "revenue": revenue, "rule": rule_in(mission)},
        context={STORED: True},
    )


def quest_fields(quest: Quest) -> QuestFields:
    """A stored quest's own fields as their definition."""
    return QuestFields.model_validate(_stored(quest, QuestFields), context={STORED: True})


def quest_in(quest: Quest, missions: list[Mission]) -> QuestIn:
    """A stored quest with its missions (in their order) as its definition."""
    return QuestIn.model_validate(
        _stored(quest, QuestIn) | {"missions": [mission_in(m) for m in missions]},
        context={STORED: True},
    )
