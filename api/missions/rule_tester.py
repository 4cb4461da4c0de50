"""The rule tester: the rule builder's rule over typed events (`tester_events.py`) or a
player's stored ones (`tester_replay.py`), event by event through the engine's own `step`,
with why each event passes or not and the progress after it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from api.missions.forms import FormError, from_form
from api.missions.rule_words import summary
from api.missions.rules import (
    DAY_KINDS,
    Rule,
    RuleError,
    StepResult,
    Tally,
    next_round,
    plain_number,
    progress,
    read_field,
    step,
)
from api.missions.tester_events import check_numbers, event_lines, is_number
from models.offer_schemas import RuleIn


def rule_definition(form: Mapping[str, str]) -> RuleIn:
    """The rule builder's inputs (`rule.…`) as a rule definition the engine accepts."""
    rule = from_form(RuleIn, form, root="rule")
    try:
        Rule.from_input(rule)
    except RuleError as exc:
        raise FormError({"rule": str(exc)}) from None
    return rule


def rule_from_form(form: Mapping[str, str]) -> Rule:
    """The rule builder's inputs (`rule.…`) as the engine's rule (for the tester)."""
    return Rule.from_input(rule_definition(form))


@dataclass(frozen=True)
class RuleStep:
    n: int
    event: str
    value: str
    traits: str
    outcome: str  # "other event" | "passes" | "fails the filter"
    count: int
    run: int
    total: str
    completed: bool
    # After a one-time mission completed: shown with what it would do, counted no more
    # (ingestion ignores a completed mission's events too).
    after_completion: bool = False
    time: str = ""  # "2026-11-20 10:00:00" (UTC), when the event has one
    group: str = ""  # its groupId
    why: str = ""  # what the outcome is about: "value ≥ 1000 does not hold (value is 300)"
    progress: str = ""  # towards the completion after it: "2 / 3"


@dataclass(frozen=True)
class RuleTest:
    """The tester's answer: the rule in words, every event, and where it completes."""

    summary: str
    steps: list[RuleStep]
    completed_at: int  # the number of the completing event, 0 when none does
    note: str = ""  # which events ran, when they are a player's stored ones


def run_rule_test(*, form: Mapping[str, str], repeatable: bool) -> RuleTest:
    """The rule tester: the rule builder's rule over the form's events, event by event."""
    rule = rule_definition(form)
    engine_rule = Rule.from_input(rule)
    lines = event_lines(form.get("events", ""))
    check_numbers(engine_rule, lines)
    steps = try_rule(engine_rule, [event for _, event in lines], repeatable=repeatable)
    completed_at = next((s.n for s in steps if s.completed), 0)
    return RuleTest(summary(rule), steps, completed_at)


def try_rule(rule: Rule, events: list[dict[str, Any]], *, repeatable: bool) -> list[RuleStep]:
    """Each event through the engine (the same `step` ingestion uses), with why it passes
    or not and the progress after it; a repeatable mission starts its next round after a
    completion, as ingestion does (`rules.next_round`). After a one-time mission completed, each later event is still listed with
    what it would do, marked `after_completion`, and changes nothing."""
    tally, steps, done = Tally(), [], False
    for n, event in enumerate(events, start=1):
        before = tally
        outcome = step(rule, tally, event)
        why = _why(rule, before, outcome, event)
        if done:
            outcome = replace(outcome, tally=tally, completed=False)
        tally = outcome.tally
        current, target = progress(rule, tally)
        when = event.get("time")
        steps.append(
            RuleStep(
                n=n,
                event=str(event.get("event")),
                value="" if event.get("value") is None else f"{event['value']:g}",
                traits=", ".join(f"{k}={v}" for k, v in (event.get("traits") or {}).items()),
                outcome=(
                    "other event"
                    if not outcome.matched
                    else "passes"
                    if outcome.passed
                    else "fails the filter"
                ),
                count=tally.count,
                run=tally.run,
                total=f"{tally.total:g}",
                completed=outcome.completed,
                after_completion=done,
                time=(
                    when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
                    if isinstance(when, datetime) and when.tzinfo
                    else ""
                ),
                group="" if event.get("groupId") is None else str(event["groupId"]),
                why=why,
                progress=f"{_amount(current)} / {_amount(target)}",
            )
        )
        if outcome.completed:
            if repeatable:
                tally = next_round(rule, tally)
            else:
                done = True
    return steps


def _amount(number: float) -> str:
    plain = plain_number(float(number))
    return str(plain) if isinstance(plain, int) else f"{plain:.2f}".rstrip("0").rstrip(".")


def _why(rule: Rule, before: Tally, outcome: StepResult, event: Mapping[str, Any]) -> str:
    """What an event's outcome is about, in words: the condition that failed, the step it
    did, its group or day, or why it counted for nothing."""
    if not outcome.matched:
        return "not an event the rule reads"
    timed = isinstance(event.get("time"), datetime) and event["time"].tzinfo is not None
    if rule.steps:
        return _step_words(rule, before, outcome, event, timed)
    if not outcome.passed:
        return _failed_words(rule, event)
    if rule.window_seconds is not None:
        return f"{outcome.tally.count} in the window" if timed else "no time: in no window"
    if rule.completion in DAY_KINDS:
        if not timed:
            return "no time: it counts for no day"
        day = event["time"].astimezone(ZoneInfo(rule.time_zone)).date()
        return f"day {day.isoformat()} ({rule.time_zone})"
    words = []
    if rule.per is not None:
        present, group = read_field(event, rule.per)
        if not present:
            return f"no {_name(rule.per)}: it counts for no group"
        words.append(f"{_name(rule.per)} {_shown(group)}")
    if rule.field is not None:
        present, found = read_field(event, rule.field)
        if not present:
            words.append(f"no {_name(rule.field)}: adds nothing")
        elif rule.completion != "distinct" and not is_number(found):
            words.append(f"{_name(rule.field)} is not a number: adds nothing")
        else:
            words.append(f"{_name(rule.field)} {_shown(found)}")
    return ", ".join(words)


def _step_words(
    rule: Rule, before: Tally, outcome: StepResult, event: Mapping[str, Any], timed: bool
) -> str:
    total = len(rule.steps)
    if not timed:
        return "no time: steps are in time order, an event without one is none"
    if not outcome.passed:
        return _failed_words(rule, event)
    if outcome.tally.count > before.count:
        return f"step {outcome.tally.count} of {total}"
    matched = next(i for i, m in enumerate(rule.steps) if m.passes(event))
    if matched > before.count:
        return f"step {matched + 1} of {total}, before step {matched}: it waits for that"
    if rule.within_seconds is not None and outcome.tally.count < before.count:
        return f"step {matched + 1} of {total}: too late, the steps started over"
    return f"step {matched + 1} of {total}, again"


def _failed_words(rule: Rule, event: Mapping[str, Any]) -> str:
    """The first condition that fails in each matcher of the event's name."""
    reasons = []
    for i, matcher in enumerate(rule.matchers):
        if matcher.event != event.get("event"):
            continue
        failing = next((c for c in matcher.conditions if not c.holds(event)), None)
        if failing is None:
            continue
        where = ""
        if rule.steps:
            where = f"step {i + 1}: "
        elif rule.any_of:
            where = f"group {i + 1}: "
        reasons.append(where + _condition_failure(failing, event))
    return "; ".join(reasons)


_OP_WORDS = {">=": "≥", "<=": "≤", "==": "=", "!=": "≠"}


def _condition_failure(condition: Any, event: Mapping[str, Any]) -> str:
    shown = condition.to_dict()
    name = _name(condition.field)
    present, found = read_field(event, condition.field)
    if condition.op in ("exists", "not exists"):
        return f"{name} is {'not ' if condition.op == 'exists' else ''}set"
    operand = shown["value"]
    wanted = ", ".join(map(str, operand)) if isinstance(operand, list) else operand
    if isinstance(wanted, bool):
        wanted = "true" if wanted else "false"
    rule_words = f"{name} {_OP_WORDS.get(condition.op, condition.op)} {wanted}"
    if not present:
        return f"{rule_words} does not hold ({name} is not set)"
    return f"{rule_words} does not hold ({name} is {_shown(found)})"


def _shown(value: Any) -> str:
    """A value of an event as people read it: 300 (not 300.0), true, “ranked”."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if is_number(value):
        return str(plain_number(float(value)))
    return str(value)


def _name(field_name: str) -> str:
    return field_name.removeprefix("traits.")
