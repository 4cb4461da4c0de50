"""The rule engine: does an event pass a mission's rule, and when is the mission complete.

Pure functions over plain data; no database, no web framework. The same code evaluates
events at ingestion, replays stored events when a player is linked late, and (later)
powers the portal's rule tester.

A rule is: an event name; conditions joined by AND, each on `value` (the event's value)
or `traits.<name>`; and a completion: `count >= N` (passing events), `consecutive >= N`
(the current run of passing events; a matching event that fails resets it) or
`sum >= N` (the total of a field over passing events).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from models.offer_schemas import RuleIn

NUMBER_OPS = (">=", ">", "<=", "<", "==", "!=")
STRING_OPS = ("==", "!=")
PRESENCE_OPS = ("exists", "not exists")
COMPLETIONS = ("count", "consecutive", "sum")


class RuleError(ValueError):
    """A rule that cannot be evaluated (unknown operator, bad field, …)."""


@dataclass(frozen=True)
class Condition:
    field: str  # "value" or "traits.<name>"
    op: str
    operand: Any = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Condition:
        field_name, op = raw.get("field"), raw.get("op")
        if not isinstance(field_name, str) or not _valid_field(field_name):
            raise RuleError('a condition needs "field": "value" or "traits.<name>"')
        if op in PRESENCE_OPS:
            return cls(field_name, op)
        operand = raw.get("value")
        if _is_number(operand):
            if op not in NUMBER_OPS:
                raise RuleError(f"operator {op!r} does not compare numbers")
            return cls(field_name, op, float(operand))  # type: ignore[arg-type]
        if isinstance(operand, str | bool):
            if op not in STRING_OPS:
                raise RuleError(f"operator {op!r} does not compare strings or booleans")
            return cls(field_name, op, operand)
        raise RuleError("a condition compares with a number, a string or a boolean")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"field": self.field, "op": self.op}
        if self.op not in PRESENCE_OPS:
            data["value"] = plain_number(self.operand)
        return data

    def holds(self, event: Mapping[str, Any]) -> bool:
        present, actual = read_field(event, self.field)
        if self.op == "exists":
            return present
        if self.op == "not exists":
            return not present
        if not present:
            return False
        if isinstance(self.operand, float):
            if not _is_number(actual):
                return False  # a trait of the wrong type fails the comparison
            return _compare(float(actual), self.op, self.operand)
        if type(actual) is not type(self.operand):
            return False
        return (actual == self.operand) if self.op == "==" else (actual != self.operand)


@dataclass(frozen=True)
class Rule:
    event: str
    conditions: tuple[Condition, ...] = ()
    completion: str = "count"
    threshold: float = 1
    sum_field: str | None = None

    @classmethod
    def build(
        cls,
        *,
        event: str,
        conditions: Iterable[Mapping[str, Any]] = (),
        completion: str = "count",
        threshold: float = 1,
        sum_field: str | None = None,
    ) -> Rule:
        if completion not in COMPLETIONS:
            raise RuleError(f"completion must be one of {', '.join(COMPLETIONS)}")
        if not _is_number(threshold) or threshold <= 0:
            raise RuleError("the completion threshold must be a positive number")
        if completion == "sum" and (sum_field is None or not _valid_field(sum_field)):
            raise RuleError('a sum completion needs "sumField": "value" or "traits.<name>"')
        if completion != "sum":
            sum_field = None
        return cls(
            event,
            tuple(Condition.parse(c) for c in conditions),
            completion,
            float(threshold),
            sum_field,
        )

    @classmethod
    def from_input(cls, rule: RuleIn) -> Rule:
        """The engine's rule for a rule definition: the one way an import, the editor, the
        rule tester and the mission index (from the stored definition) get one. The schema
        checked its shape; this adds the engine's own checks (RuleError)."""
        return cls.build(
            event=rule.event,
            conditions=[c.model_dump(exclude_none=True) for c in rule.conditions],
            completion=rule.completion.kind,
            threshold=rule.completion.threshold,
            sum_field=rule.completion.field,
        )

    def matches(self, event: Mapping[str, Any]) -> bool:
        return event.get("event") == self.event

    def passes(self, event: Mapping[str, Any]) -> bool:
        return all(c.holds(event) for c in self.conditions)


@dataclass(frozen=True)
class Tally:
    """Where a player stands on a rule since the start (or the last conversion)."""

    count: int = 0
    run: int = 0
    total: float = 0.0


@dataclass
class StepResult:
    tally: Tally
    matched: bool
    passed: bool
    completed: bool


def step(rule: Rule, tally: Tally, event: Mapping[str, Any]) -> StepResult:
    """Apply one event to a tally. Events of other names change nothing."""
    if not rule.matches(event):
        return StepResult(tally, matched=False, passed=False, completed=False)
    if not rule.passes(event):
        # Only a consecutive run is broken by a failing event.
        return StepResult(replace(tally, run=0), matched=True, passed=False, completed=False)
    total = tally.total
    if rule.completion == "sum" and rule.sum_field:
        present, amount = read_field(event, rule.sum_field)
        if present and _is_number(amount):
            total += float(amount)
    new = Tally(count=tally.count + 1, run=tally.run + 1, total=total)
    return StepResult(new, matched=True, passed=True, completed=is_complete(rule, new))


def is_complete(rule: Rule, tally: Tally) -> bool:
    if rule.completion == "count":
        return tally.count >= rule.threshold
    if rule.completion == "consecutive":
        return tally.run >= rule.threshold
    return tally.total >= rule.threshold


@dataclass
class Replay:
    """The outcome of running a sequence of events through a rule from a fresh start."""

    tally: Tally = field(default_factory=Tally)
    completions: int = 0


def replay(rule: Rule, events: Iterable[Mapping[str, Any]], *, repeatable: bool) -> Replay:
    """Evaluate events in order; a repeatable mission starts again from zero after each
    completion, a one-time mission stops at its first."""
    result = Replay()
    for event in events:
        outcome = step(rule, result.tally, event)
        result.tally = outcome.tally
        if outcome.completed:
            result.completions += 1
            if not repeatable:
                break
            result.tally = Tally()
    return result


def read_field(event: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    """(present, value) of `value` or `traits.<name>` in an event."""
    if name == "value":
        value = event.get("value")
        return value is not None, value
    traits = event.get("traits")
    key = name[len("traits.") :]
    if not isinstance(traits, Mapping) or key not in traits:
        return False, None
    return True, traits[key]


def _valid_field(name: str) -> bool:
    return name == "value" or (name.startswith("traits.") and len(name) > len("traits."))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _compare(actual: float, op: str, operand: float) -> bool:
    if op == ">=":
        return actual >= operand
    if op == ">":
        return actual > operand
    if op == "<=":
        return actual <= operand
    if op == "<":
        return actual < operand
    if op == "==":
        return actual == operand
    return actual != operand


# --- the rule in words ------------------------------------------------------------------

_OP_WORDS = {">=": "≥", ">": ">", "<=": "≤", "<": "<", "==": "=", "!=": "≠"}


def summary(rule: RuleIn) -> str:
    """A rule in words, from its definition (what a mission stores, what the editor and
    the tester build): "GAME_END where kills ≥ 10, once", "MATCH_END where value ≥ 1000,
    3 times in a row", "SCORE, total of value ≥ 1000". The one place a rule is described:
    the missions list, the editor and the tester all show this."""
    conditions = " and ".join(_condition_words(c.field, c.op, c.value) for c in rule.conditions)
    where = f" where {conditions}" if conditions else ""
    return f"{rule.event}{where}, {_completion_words(rule)}"


def _field_words(name: str) -> str:
    return name.removeprefix("traits.")


def _condition_words(name: str, op: str, operand: Any) -> str:
    if op == "exists":
        return f"{_field_words(name)} is set"
    if op == "not exists":
        return f"{_field_words(name)} is not set"
    if isinstance(operand, bool):
        shown = "true" if operand else "false"
    elif isinstance(operand, str):
        shown = f"“{operand}”"
    else:
        shown = _number_words(operand)
    return f"{_field_words(name)} {_OP_WORDS.get(op, op)} {shown}"


def _completion_words(rule: RuleIn) -> str:
    completion = rule.completion
    if completion.kind == "sum":
        field_name = _field_words(completion.field or "value")
        return f"total of {field_name} ≥ {_number_words(completion.threshold)}"
    # Counts are whole: a threshold of 2.5 completes at the third event.
    times = max(1, math.ceil(completion.threshold))
    if times == 1:
        return "once"
    return f"{times} times in a row" if completion.kind == "consecutive" else f"{times} times"


def _number_words(number: Any) -> str:
    plain = plain_number(float(number)) if _is_number(number) else number
    return f"{plain:g}" if isinstance(plain, float) else str(plain)


def plain_number(operand: Any) -> Any:
    """A whole number as an int (10, not 10.0): the engine compares floats, people read
    what they typed."""
    if isinstance(operand, float) and operand.is_integer() and abs(operand) < 2**53:
        return int(operand)
    return operand
