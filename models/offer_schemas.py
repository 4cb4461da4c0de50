"""Mission and quest definitions as designers write them (import files, the CLI and the
portal's editor), and the one conversion between a definition and its stored row.

Field names follow the offers API of the original spec (camelCase), plus the rule. A plain
field is stored in the column of the same name in snake_case (`previewUrl` → `preview_url`),
so adding one needs no converter change; only the fields in `_SHAPED` are stored otherwise.
"""

from __future__ import annotations

import math
import re
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)

from models.signals import action_problem

if TYPE_CHECKING:
    from models.offers import Mission, Quest

COUNTRY = re.compile(r"[A-Z]{2}")
OPERATING_SYSTEMS = ("Android", "iOS", "Windows", "macOS", "Linux", "ChromeOS")
_OS_BY_LOWER = {name.lower(): name for name in OPERATING_SYSTEMS}


class Geotargeting(BaseModel):
    model_config = ConfigDict(extra="forbid")

    countriesInclude: list[str] = Field(default_factory=list)
    countriesExclude: list[str] = Field(default_factory=list)

    @field_validator("countriesInclude", "countriesExclude")
    @classmethod
    def _countries(cls, value: list[str]) -> list[str]:
        codes = [c.strip().upper() for c in value]
        bad = [c for c in codes if not COUNTRY.fullmatch(c)]
        if bad:
            raise ValueError(
                "Countries are two-letter ISO 3166-1 codes such as US or DE; not a country: "
                + ", ".join(bad)
            )
        return sorted(set(codes))


class ConditionIn(BaseModel):
    """One condition of a rule. Each check is on the field it is about, so a form shows
    every problem of every row at once, each under its input; the engine
    (api/missions/rules.py) checks the rule again when it is saved."""

    model_config = ConfigDict(extra="forbid")

    field: str = Field(description='"value" (the event\'s value) or "traits.<name>"')
    op: Literal[">=", ">", "<=", "<", "==", "!=", "exists", "not exists"]
    # int before float: a whole number typed as 10 stays 10 (not 10.0) wherever it shows.
    value: int | float | str | bool | None = Field(default=None, validate_default=True)

    @field_validator("field")
    @classmethod
    def _field(cls, value: str) -> str:
        if not _is_field(value):
            raise ValueError('A condition\'s field is "value" or "traits.<name>".')
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
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("Enter a number, or text to compare with == or !=.")
        if isinstance(value, str | bool) and op not in ("==", "!="):
            raise ValueError(
                f"{op} compares numbers: enter a number, or compare text with == or !=."
            )
        return value


class CompletionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["count", "consecutive", "sum"] = "count"
    threshold: float = Field(default=1, gt=0, allow_inf_nan=False)
    field: str | None = Field(
        default=None, description="for sum: value or traits.<name>", validate_default=True
    )

    @field_validator("field")
    @classmethod
    def _sum_field(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("kind") == "sum" and not (value and _is_field(value)):
            raise ValueError('A total needs the field to add up: "value" or "traits.<name>".')
        return value


class RuleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    event: str = Field(pattern=r"^[A-Za-z0-9_.:\-]{1,64}$")
    conditions: list[ConditionIn] = Field(default_factory=list)
    completion: CompletionIn = Field(default_factory=CompletionIn)


def _is_field(name: str) -> bool:
    return name == "value" or (name.startswith("traits.") and len(name) > len("traits."))


class _OfferCommon(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, description="Give an id to update an existing offer.")
    description: str | None = None
    thumbnail: str = ""
    previewUrl: str = ""
    destinationUrl: str = Field(min_length=1, max_length=2048)
    expirationDate: datetime | None = None
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

    @field_validator("expirationDate")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("The expiry date needs a time zone, e.g. 2027-01-31T00:00:00Z.")
        return value


class MissionIn(_OfferCommon):
    title: str = Field(min_length=1, max_length=200)
    payout: Decimal = Field(ge=0, max_digits=14, decimal_places=6, description="USD")
    cap: int | None = Field(default=None, ge=1)
    allowMultipleConversions: bool = False
    timeLimitSeconds: int | None = Field(default=None, ge=1)
    rule: RuleIn
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

    @property
    def payout_micros(self) -> int:
        return int(self.payout * 1_000_000)


class QuestFields(_OfferCommon):
    """A quest's own fields: what the portal's quest form edits (its missions are chosen
    from the game's existing ones)."""

    name: str = Field(min_length=1, max_length=200)
    startCap: int | None = Field(default=None, ge=1)


class QuestIn(QuestFields):
    missions: list[MissionIn] = Field(min_length=1)


class OffersFile(BaseModel):
    """An import file: a game's missions and quests."""

    model_config = ConfigDict(extra="forbid")

    gameId: str
    missions: list[MissionIn] = Field(default_factory=list)
    quests: list[QuestIn] = Field(default_factory=list)


def as_plain(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json")


# --- definitions and stored rows ------------------------------------------------------

# Fields not stored in the column of their snake_case name; each is handled below.
_SHAPED = {"id", "geotargeting", "operatingSystem", "payout", "rule", "missions"}


def _column(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _plain_fields(schema: type[BaseModel]) -> list[str]:
    return [name for name in schema.model_fields if name not in _SHAPED]


def offer_columns(data: MissionIn | QuestFields) -> dict[str, Any]:
    """The stored columns of a definition (its id and a quest's missions aside)."""
    columns = {_column(name): getattr(data, name) for name in _plain_fields(type(data))}
    columns["operating_systems"] = data.operatingSystem
    columns["countries_include"] = data.geotargeting.countriesInclude
    columns["countries_exclude"] = data.geotargeting.countriesExclude
    if isinstance(data, MissionIn):
        rule = data.rule
        columns |= {
            "payout_micros": data.payout_micros,
            "rule_event": rule.event,
            "rule_conditions": [c.model_dump(exclude_none=True) for c in rule.conditions],
            "rule_completion": rule.completion.kind,
            "rule_threshold": rule.completion.threshold,
            "rule_sum_field": rule.completion.field if rule.completion.kind == "sum" else None,
        }
    return columns


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


def rule_in(mission: Mission) -> RuleIn:
    """A stored mission's rule as its definition."""
    completion: dict[str, Any] = {
        "kind": mission.rule_completion,
        "threshold": mission.rule_threshold,
    }
    if mission.rule_sum_field is not None:
        completion["field"] = mission.rule_sum_field
    return RuleIn.model_validate(
        {
            "event": mission.rule_event,
            "conditions": mission.rule_conditions,
            "completion": completion,
        }
    )


def mission_in(mission: Mission) -> MissionIn:
    """A stored mission as the definition that saves it again unchanged: what the CLI
    lists, what an export writes and what the editor opens with."""
    payout = Decimal(mission.payout_micros) / 1_000_000
    return MissionIn.model_validate(
        _stored(mission, MissionIn) | {"payout": payout, "rule": rule_in(mission)}
    )


def quest_fields(quest: Quest) -> QuestFields:
    """A stored quest's own fields as their definition."""
    return QuestFields.model_validate(_stored(quest, QuestFields))


def quest_in(quest: Quest, missions: list[Mission]) -> QuestIn:
    """A stored quest with its missions (in their order) as its definition."""
    return QuestIn.model_validate(
        _stored(quest, QuestIn) | {"missions": [mission_in(m) for m in missions]}
    )
