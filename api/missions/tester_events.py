"""The rule tester's events as the designer types them: one per line, a JSON object or
the short form `EVENT [value] [trait=value …]`, each refusal naming its line."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from api.missions.forms import FormError, scalar
from api.missions.rules import Rule, plain_number, read_field

MAX_TEST_EVENTS = 500


def parse_events(text: str) -> list[dict[str, Any]]:
    """Events to test, one per line: a JSON object ({"event": …, "value": …, "traits": …,
    "time": …, "groupId": …}) or the short form `EVENT [value] [trait=value …]`, e.g.
    `GAME_OVER 1200 mode=ranked`."""
    return [event for _, event in event_lines(text)]


def event_lines(text: str) -> list[tuple[int, dict[str, Any]]]:
    """The events of `text`, each with the number of its line."""
    events: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        event = _json_event(line, number) if line.startswith("{") else _short_event(line, number)
        events.append((number, event))
        if len(events) > MAX_TEST_EVENTS:
            raise FormError({"events": f"at most {MAX_TEST_EVENTS} events per test"})
    if not events:
        raise FormError({"events": "write at least one event"})
    return events


def _json_event(line: str, number: int) -> dict[str, Any]:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        raise FormError(
            {"events": f"line {number}: not JSON; check its quotes, commas and braces"}
        ) from None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        raise FormError({"events": f'line {number}: an object with "event" is needed'})
    if event.get("value") is not None and not is_number(event["value"]):
        raise FormError({"events": f"line {number}: the value is a number"})
    if event.get("time") is not None:
        event["time"] = _event_time(event["time"], number)
    group = event.get("groupId")
    if group is not None and not (isinstance(group, str) or is_number(group)):
        raise FormError({"events": f"line {number}: the groupId is text or a number"})
    if group is not None:  # as ingestion has it: text, and an empty one is none
        event["groupId"] = (str(plain_number(group)) if is_number(group) else group) or None
    return event


def _event_time(text: Any, number: int) -> datetime:
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise FormError(
            {
                "events": f"line {number}: the time is a moment with its zone, e.g. 2026-11-20T10:00:00Z"
            }
        )
    return when


def _short_event(line: str, number: int) -> dict[str, Any]:
    name, *rest = line.split()
    event: dict[str, Any] = {"event": name}
    for part in rest:
        if "=" in part:
            key, _, raw = part.partition("=")
            event.setdefault("traits", {})[key] = scalar(raw)
        elif "value" not in event:
            value = scalar(part)
            if not is_number(value):
                raise FormError({"events": f"line {number}: the value is a number"})
            event["value"] = value
        else:
            raise FormError({"events": f"line {number}: write traits as name=value"})
    return event


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def check_numbers(rule: Rule, lines: list[tuple[int, dict[str, Any]]]) -> None:
    """Refuse a test event of the rule whose field the rule compares with a number (or
    adds up, or keeps the highest or lowest of) but holds something else, naming every
    such line: ingestion would let the event fail the filter, which is the mistake the
    tester is there to show."""
    numeric = [c.field for m in rule.matchers for c in m.conditions if isinstance(c.operand, float)]
    if rule.completion in ("sum", "max", "min") and rule.field:
        numeric.append(rule.field)
    problems = []
    for number, event in lines:
        if not rule.matches(event):
            continue
        for name in dict.fromkeys(numeric):
            present, found = read_field(event, name)
            if present and not is_number(found):
                what = "the value" if name == "value" else name.removeprefix("traits.")
                shown = f"“{found}”" if isinstance(found, str) else json.dumps(found)
                problems.append(f"line {number}: {what} is {shown}, not a number")
    if problems:
        raise FormError({"events": "; ".join(problems)})
