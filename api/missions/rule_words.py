"""A rule in words, from its definition: "GAME_END where kills ≥ 10, once". The one place
a rule is described, for people (the missions list, the editor, the tester and the
support tickets' snapshot); the engine that runs it is `rules.py`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from api.missions.rules import LIST_OPS, plain_number

if TYPE_CHECKING:
    from models.offer_schemas import RuleIn

_OP_WORDS = {">=": "≥", ">": ">", "<=": "≤", "<": "<", "==": "=", "!=": "≠"}


def summary(rule: RuleIn) -> str:
    """A rule in words, from its definition (what a mission stores, what the editor and
    the tester build): "GAME_END where kills ≥ 10, once", "MATCH_END where value ≥ 1000,
    3 times in a row", "MATCH_END on 5 different traits.map", "a 7-day streak of
    START_GAME (Europe/Berlin)", "TUTORIAL_DONE, then MATCH_END where won = true, within
    1 day". The one place a rule is described: the missions list, the editor and the
    tester all show this."""
    if rule.steps:
        steps = ", then ".join(_matcher_words(m) for m in rule.steps)
        return f"{steps}, within {_duration_words(rule.within.seconds)}" if rule.within else steps
    matchers = rule.matchers
    what = " or ".join(
        f"({_matcher_words(m)})" if len(matchers) > 1 and m.conditions else _matcher_words(m)
        for m in matchers
    )
    completion = rule.completion
    zone = completion.timeZone or "UTC"
    times = _times(completion.threshold)
    if completion.kind == "distinct":
        words = f"{what} on {times} different {completion.field}"
    elif completion.kind == "days":
        words = f"{what} on {times} different days ({zone})"
    elif completion.kind == "streak":
        words = f"a {times}-day streak of {what} ({zone})"
    else:
        words = f"{what}, {_completion_words(rule)}"
    if rule.per == "groupId":
        words += " in one group"
    elif rule.per:
        words += f" with the same {_field_words(rule.per)}"
    if rule.window:
        words += f" within {_duration_words(rule.window.seconds)}"
    return words


def _matcher_words(matcher: Any) -> str:
    conditions = " and ".join(_condition_words(c.field, c.op, c.value) for c in matcher.conditions)
    return f"{matcher.event} where {conditions}" if conditions else matcher.event


def _field_words(name: str) -> str:
    return name.removeprefix("traits.")


def _condition_words(name: str, op: str, operand: Any) -> str:
    if op == "exists":
        return f"{_field_words(name)} is set"
    if op == "not exists":
        return f"{_field_words(name)} is not set"
    if op in LIST_OPS:
        listed = ", ".join(_operand_words(v) for v in operand or ())
        verb = "is one of" if op == "in" else "is none of"
        return f"{_field_words(name)} {verb} {listed}"
    return f"{_field_words(name)} {_OP_WORDS.get(op, op)} {_operand_words(operand)}"


def _operand_words(operand: Any) -> str:
    if isinstance(operand, bool):
        return "true" if operand else "false"
    if isinstance(operand, str):
        return f"“{operand}”"
    return _number_words(operand)


def _completion_words(rule: RuleIn) -> str:
    completion = rule.completion
    threshold = _number_words(completion.threshold)
    field_name = _field_words(completion.field or "value")
    if completion.kind == "sum":
        return f"total of {field_name} ≥ {threshold}"
    if completion.kind == "max":
        return f"highest {field_name} ≥ {threshold}"
    if completion.kind == "min":
        return f"lowest {field_name} ≤ {threshold}"
    times = _times(completion.threshold)
    if times == 1:
        return "once"
    return f"{times} times in a row" if completion.kind == "consecutive" else f"{times} times"


def _times(threshold: float) -> int:
    """Counts are whole: a threshold of 2.5 completes at the third event."""
    return max(1, math.ceil(threshold))


_UNITS = ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second"))


def _duration_words(seconds: int) -> str:
    """3600 → "1 hour", 5400 → "90 minutes": the largest unit that divides it."""
    for size, unit in _UNITS:
        if seconds % size == 0:
            amount = seconds // size
            return f"{amount} {unit}" + ("" if amount == 1 else "s")
    return f"{seconds} seconds"


def _number_words(number: Any) -> str:
    plain = plain_number(float(number)) if _is_number(number) else number
    return f"{plain:g}" if isinstance(plain, float) else str(plain)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
