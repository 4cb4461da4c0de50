"""The rule engine: does an event pass a mission's rule, and when is the mission complete.

Pure functions over plain data; no database, no web framework. The same code evaluates
events at ingestion, replays stored events when a player is linked late, and powers the
portal's rule tester.

A rule is a set of matchers (an event name and conditions joined by AND, each on `value`,
`traits.<name>` or `groupId`; `anyOf` lists several, and an event passes when it passes
any matcher of its name) and a completion:

- `count` (passing events), `consecutive` (the current run of passing events; a matching
  event that fails resets it) and `sum` (the total of a field over passing events);
- `max` (the largest `field` of a passing event reaches the threshold) and `min` (the
  smallest is at or below it);
- `distinct` (distinct values of `field` among passing events);
- `days` (distinct calendar days with a passing event, in the rule's time zone) and
  `streak` (calendar days in a row with a passing event; a missed day starts it again);
- `steps`: matchers in order, each after the previous one, all within `within` seconds of
  the first.

`per` (`groupId` or `traits.<name>`) makes the completion be reached within one group (one
match), and `window` counts together only passing events within that many seconds.

What a player's progress keeps stays bounded, whatever the events: `distinct` and `days`
keep at most `threshold` values (KEPT_LIMITS bounds the threshold; a text longer than
KEY_LENGTH is kept as its digest), `streak` the days that could still make the current
run, `window` the events within the window of the latest one (at most `threshold` of them
for a count, the WINDOW_LIMIT latest for a sum), `per` the GROUP_LIMIT groups with the
latest events, and `steps` a start and a last time per step. Callers give the events of
one batch in event-time order; one that arrives after later ones is evaluated against what
is kept then: for `window` an event older than the window of the latest one kept does not
count, for `streak` a day before the current run does not extend it, and for `steps` a
step before the previous step's time does not count.

A definition (an import file, the editor, the API: models/offer_schemas.py `RuleIn`) names
each of these; docs/missions.md describes them with an example each.

Why one module of this size: every kind of completion advances the one `Tally` through the
one `step`, and ingestion, late linking, the backtest and the tester rely on them agreeing;
the kinds are kept side by side so that they do (a rule in words is `rule_words.py`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# The kinds and the limits a definition is checked against, named once, with the schema.
from models.offer_schemas import (
    DAY_KINDS,
    FIELD_KINDS,
    KEPT_LIMITS,
    KINDS,
    LIST_LIMIT,
    MATCHER_LIMIT,
    PER_DISTINCT_LIMIT,
    WINDOW_LIMIT,
)

if TYPE_CHECKING:
    from models.offer_schemas import RuleIn

NUMBER_OPS = (">=", ">", "<=", "<", "==", "!=")
STRING_OPS = ("==", "!=")
PRESENCE_OPS = ("exists", "not exists")
LIST_OPS = ("in", "not in")
COMPLETIONS = KINDS
SEQUENCE = "steps"
# Which kinds `per` and `window` combine with.
PER_KINDS = ("count", "consecutive", "sum", "max", "min", "distinct")
WINDOW_KINDS = ("count", "sum")
GROUP_LIMIT = 32  # `per`: the groups kept, those with the latest events
KEY_LENGTH = 128  # a longer text kept as a value or a group's name is kept as its digest


class RuleError(ValueError):
    """A rule that cannot be evaluated (unknown operator, bad field, …)."""


@dataclass(frozen=True)
class Condition:
    field: str  # "value", "traits.<name>" or "groupId"
    op: str
    operand: Any = None  # a float, a string, a boolean, or a frozenset for in / not in

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Condition:
        field_name, op = raw.get("field"), raw.get("op")
        if not isinstance(field_name, str) or not _valid_field(field_name, group=True):
            raise RuleError('a condition needs "field": "value", "traits.<name>" or "groupId"')
        if op in PRESENCE_OPS:
            return cls(field_name, op)
        operand = raw.get("value")
        if op in LIST_OPS:
            return cls(field_name, op, _listed(operand))
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
        if self.op in LIST_OPS:
            data["value"] = sorted((plain_number(v) for v in self.operand), key=_sort_key)
        elif self.op not in PRESENCE_OPS:
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
        if self.op in LIST_OPS:
            key = _list_key(actual)
            if key is None:
                return False  # a value of a type no list holds fails both
            return (key in self.operand) is (self.op == "in")
        if isinstance(self.operand, float):
            if not _is_number(actual):
                return False  # a trait of the wrong type fails the comparison
            return _compare(float(actual), self.op, self.operand)
        if type(actual) is not type(self.operand):
            return False
        return (actual == self.operand) if self.op == "==" else (actual != self.operand)


def _listed(operand: Any) -> frozenset[Any]:
    """The values of an `in` / `not in` list: strings and numbers (numbers as floats)."""
    if not isinstance(operand, list | tuple) or not operand:
        raise RuleError("in and not in take a list of strings or numbers")
    if len(operand) > LIST_LIMIT:
        raise RuleError(f"a list holds at most {LIST_LIMIT} values")
    values = set()
    for item in operand:
        key = _list_key(item)
        if key is None:
            raise RuleError("in and not in take a list of strings or numbers")
        values.add(key)
    return frozenset(values)


def _list_key(value: Any) -> str | float | None:
    if isinstance(value, str):
        return value
    if _is_number(value):
        return float(value)
    return None


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


@dataclass(frozen=True)
class Matcher:
    """An event name and the conditions (joined by AND) an event of that name must pass."""

    event: str
    conditions: tuple[Condition, ...] = ()

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Matcher:
        event = raw.get("event")
        if not isinstance(event, str) or not event:
            raise RuleError('a matcher needs "event": the event\'s name')
        return cls(event, tuple(Condition.parse(c) for c in raw.get("conditions") or ()))

    def passes(self, event: Mapping[str, Any]) -> bool:
        return event.get("event") == self.event and all(c.holds(event) for c in self.conditions)


@dataclass(frozen=True)
class Rule:
    event: str
    conditions: tuple[Condition, ...] = ()
    completion: str = "count"
    threshold: float = 1
    field: str | None = None  # what sum, max, min and distinct read
    any_of: tuple[Matcher, ...] = ()  # every matcher, the first being (event, conditions)
    time_zone: str = "UTC"  # days and streak
    per: str | None = None
    window_seconds: int | None = None
    steps: tuple[Matcher, ...] = ()  # completion "steps"
    within_seconds: int | None = None

    @classmethod
    def build(
        cls,
        *,
        event: str | None = None,
        conditions: Iterable[Mapping[str, Any]] = (),
        any_of: Iterable[Mapping[str, Any]] = (),
        completion: str = "count",
        threshold: float = 1,
        field: str | None = None,
        sum_field: str | None = None,
        time_zone: str | None = None,
        per: str | None = None,
        window_seconds: int | None = None,
        steps: Iterable[Mapping[str, Any]] = (),
        within_seconds: int | None = None,
    ) -> Rule:
        """A rule from its parts, checked: `event` and `conditions`, or `any_of`, or
        `steps` (a sequence, which is its own completion)."""
        matchers = [Matcher.parse(m) for m in any_of]
        if event is not None:
            matchers.insert(0, Matcher.parse({"event": event, "conditions": list(conditions)}))
        sequence = tuple(Matcher.parse(m) for m in steps)
        if sequence:
            if matchers:
                raise RuleError("a rule has steps, or an event (or anyOf), not both")
            if not 2 <= len(sequence) <= MATCHER_LIMIT:
                raise RuleError(f"a sequence has 2 to {MATCHER_LIMIT} steps")
            matchers, completion, threshold = list(sequence), SEQUENCE, len(sequence)
            if per is not None or window_seconds is not None:
                raise RuleError("a sequence takes neither per nor window")
        elif within_seconds is not None:
            raise RuleError("within belongs to steps")
        if not matchers:
            raise RuleError("a rule needs an event, anyOf or steps")
        if completion not in (*COMPLETIONS, SEQUENCE):
            raise RuleError(f"completion must be one of {', '.join(COMPLETIONS)}")
        # A minimum may be 0 ("no deaths"); every other threshold is above 0.
        if not _is_number(threshold) or threshold < 0 or (threshold == 0 and completion != "min"):
            raise RuleError("the completion threshold must be a positive number")
        if threshold > KEPT_LIMITS.get(completion, math.inf):
            raise RuleError(f"a {completion} threshold is at most {KEPT_LIMITS[completion]:,}")
        if window_seconds is not None and completion == "count" and threshold > WINDOW_LIMIT:
            raise RuleError(f"a count within a window is at most {WINDOW_LIMIT:,}")
        if per is not None and completion == "distinct" and threshold > PER_DISTINCT_LIMIT:
            raise RuleError(f"a distinct within one group is at most {PER_DISTINCT_LIMIT:,}")
        field = field or sum_field
        if completion in FIELD_KINDS:
            if field is None or not _valid_field(field, group=completion == "distinct"):
                raise RuleError(
                    f'a {completion} completion needs "field": "value" or "traits.<name>"'
                )
        else:
            field = None
        if completion in DAY_KINDS:
            time_zone = _zone_name(time_zone or "UTC")
        elif time_zone is not None and time_zone != "UTC":
            raise RuleError("timeZone belongs to days and streak")
        if per is not None:
            if completion not in PER_KINDS:
                raise RuleError(f"per works with {', '.join(PER_KINDS)}")
            if not _valid_field(per, group=True) or per == "value":
                raise RuleError('per is "groupId" or "traits.<name>"')
        for name, seconds in (("window", window_seconds), ("within", within_seconds)):
            if seconds is not None and (
                not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 1
            ):
                raise RuleError(f"{name} is a whole number of seconds, 1 or more")
        if window_seconds is not None and (completion not in WINDOW_KINDS or per is not None):
            raise RuleError(f"window works with {' and '.join(WINDOW_KINDS)}, without per")
        first = matchers[0]
        return cls(
            event=first.event,
            conditions=first.conditions,
            completion=completion,
            threshold=float(threshold),
            field=field,
            any_of=tuple(matchers) if len(matchers) > 1 or sequence else (),
            time_zone=time_zone or "UTC",
            per=per,
            window_seconds=window_seconds,
            steps=sequence,
            within_seconds=within_seconds,
        )

    @classmethod
    def from_input(cls, rule: RuleIn) -> Rule:
        """The engine's rule for a rule definition: the one way an import, the editor, the
        rule tester and the mission index (from the stored definition) get one. The schema
        checked its shape; this adds the engine's own checks (RuleError)."""

        def plain(matchers: list[Any] | None) -> list[dict[str, Any]]:
            return [m.model_dump(exclude_none=True) for m in matchers or ()]

        completion = rule.completion
        return cls.build(
            event=rule.event,
            conditions=[c.model_dump(exclude_none=True) for c in rule.conditions],
            any_of=plain(rule.anyOf),
            completion=completion.kind,
            threshold=completion.threshold,
            field=completion.field,
            time_zone=completion.timeZone,
            per=rule.per,
            window_seconds=rule.window.seconds if rule.window else None,
            steps=plain(rule.steps),
            within_seconds=rule.within.seconds if rule.within else None,
        )

    @property
    def sum_field(self) -> str | None:
        return self.field if self.completion == "sum" else None

    @property
    def matchers(self) -> tuple[Matcher, ...]:
        return self.any_of or (Matcher(self.event, self.conditions),)

    @property
    def kept(self) -> tuple[Any, ...]:
        """What a player's progress on this rule keeps depends on these: two rules that
        differ in them cannot share a progress."""
        return (
            self.completion,
            self.field,
            self.per,
            self.window_seconds,
            self.time_zone,
            self.steps,
            self.within_seconds,
        )

    @cached_property
    def events(self) -> frozenset[str]:
        """Every event name the rule reads."""
        return frozenset(m.event for m in self.matchers)

    def matches(self, event: Mapping[str, Any]) -> bool:
        return event.get("event") in self.events

    def passes(self, event: Mapping[str, Any]) -> bool:
        return any(m.passes(event) for m in self.matchers)


@dataclass(frozen=True)
class Tally:
    """Where a player stands on a rule since the start (or the last conversion), stored in
    a progress row's columns of the same names. By kind:

    - count, consecutive, sum: `count` passing events, `run` the current run, `total`;
    - max, min: `total` the best value so far, `state` 1 once there is one;
    - distinct: `state` the values seen (at most the threshold);
    - days, streak: `state` the days kept (day numbers), `run` the streak's days in a row,
      `total` the day the previous round completed on (`next_round`; 0 before any);
    - window: `state` [time, amount] of the events in the window, `count` and `total`
      of those;
    - per: `state` [group, [count, run, total, state]] per group kept, the rest those of
      the group furthest along;
    - steps: `state` [start, last] (or None) per step, `count` and `run` steps done.
    """

    count: int = 0
    run: int = 0
    total: float = 0.0
    state: Any = None


@dataclass
class StepResult:
    tally: Tally
    matched: bool
    passed: bool
    completed: bool


def step(rule: Rule, tally: Tally, event: Mapping[str, Any]) -> StepResult:
    """Apply one event to a tally. Events of other names change nothing. An event is a
    mapping with `event`, `value`, `traits`, and for the kinds that need them `time` (an
    aware datetime) and `groupId`."""
    if not rule.matches(event):
        return StepResult(tally, matched=False, passed=False, completed=False)
    if rule.steps:
        return _sequence(rule, tally, event)
    if not rule.passes(event):
        # A failing event breaks the current run of passing events (in its group, with
        # per), which consecutive counts; a streak's run is of days, which it does not.
        if rule.completion == "streak" or rule.window_seconds is not None:
            return StepResult(tally, matched=True, passed=False, completed=False)
        if rule.per is None:
            new = replace(tally, run=0)
        else:
            new, _ = _per_group(
                rule, tally, event, lambda before: replace(before, run=0), create=False
            )
        return StepResult(new, matched=True, passed=False, completed=False)
    if rule.per is not None:
        # Only the event's group changed, and no group was complete before it (the tally
        # would have completed then): the rule completes when that group does.
        new, group = _per_group(rule, tally, event, lambda before: _advance(rule, before, event))
        done = group is not None and _complete(rule, group)
        return StepResult(new, matched=True, passed=True, completed=done)
    if rule.window_seconds is not None:
        new = _windowed(rule, tally, event)
    else:
        new = _advance(rule, tally, event)
    return StepResult(new, matched=True, passed=True, completed=is_complete(rule, new))


def _advance(rule: Rule, tally: Tally, event: Mapping[str, Any]) -> Tally:
    """A passing event added to a tally of one of the plain kinds."""
    kind = rule.completion
    count, run, total, state = tally.count + 1, tally.run + 1, tally.total, tally.state
    if kind in FIELD_KINDS and rule.field is not None:
        present, found = read_field(event, rule.field)
        if kind == "distinct":
            key = _kept_key(_list_key(found)) if present else None
            seen = list(state or [])
            if key is not None and key not in seen and len(seen) < math.ceil(rule.threshold):
                seen.append(key)
            state = seen
        elif present and _is_number(found):
            amount = float(found)
            if kind == "sum":
                total += amount
            elif state is None:  # max and min: the first value found
                total, state = amount, 1
            else:
                total = max(total, amount) if kind == "max" else min(total, amount)
    elif kind in DAY_KINDS:
        day = _day(rule, event)
        run = tally.run  # a streak's run is of days
        # `total` is the day the previous round completed on (0 before any): a round
        # counts only the days after it.
        if day is not None and day > tally.total:
            state, run = _days(rule, list(state or []), day)
    return Tally(count=count, run=run, total=total, state=state)


def _days(rule: Rule, days: list[int], day: int) -> tuple[list[int], int]:
    """The days kept and, for a streak, the days in a row ending at the latest. A streak
    keeps the days that could still be part of one reaching the threshold at the latest
    day, so a day that arrives late fills its gap."""
    if day not in days:
        days = sorted([*days, day])
    needed = math.ceil(rule.threshold)
    if rule.completion == "days":
        return days[:needed], 0
    latest = days[-1]
    days = [d for d in days if d > latest - needed]
    run = 0
    while latest - run in days:
        run += 1
    return days, run


def _windowed(rule: Rule, tally: Tally, event: Mapping[str, Any]) -> Tally:
    """Passing events within `window_seconds` of the latest: [time, amount] pairs."""
    when = _seconds(event)
    if when is None:
        return tally
    amount = 1.0
    if rule.completion == "sum" and rule.field is not None:
        present, found = read_field(event, rule.field)
        amount = float(found) if present and _is_number(found) else 0.0
    kept = sorted([*(tally.state or []), [when, amount]])
    latest = kept[-1][0]
    assert rule.window_seconds is not None
    # A count needs no more than its threshold of them; a sum keeps the latest WINDOW_LIMIT.
    most = math.ceil(rule.threshold) if rule.completion == "count" else WINDOW_LIMIT
    kept = [p for p in kept if latest - p[0] <= rule.window_seconds][-most:]
    total = math.fsum(p[1] for p in kept)
    return Tally(count=len(kept), run=0, total=total, state=kept)


def _per_group(
    rule: Rule,
    tally: Tally,
    event: Mapping[str, Any],
    change: Callable[[Tally], Tally],
    *,
    create: bool = True,
) -> tuple[Tally, Tally | None]:
    """`change` applied to the event's group: the new tally, which shows the group
    furthest along, and the event's group's own (None for an event outside any group, or
    of a group not kept when `create` is False: a failing event makes no group).
    `state` holds [group, [count, run, total, state]] for the latest `GROUP_LIMIT` groups,
    latest last."""
    assert rule.per is not None
    present, group = read_field(event, rule.per)
    key = _group_key(group) if present else None
    if key is None:
        return tally, None  # an event outside any group counts for none
    groups = {k: v for k, v in (tally.state or [])}
    if key not in groups and not create:
        return tally, None
    before = Tally(*groups.pop(key)) if key in groups else Tally()
    after = change(before)
    groups[key] = [after.count, after.run, after.total, after.state]
    kept = [[k, v] for k, v in list(groups.items())[-GROUP_LIMIT:]]
    best = _best_group(rule, kept)
    return Tally(best.count, best.run, best.total, kept), after


def _best_group(rule: Rule, groups: Any) -> Tally:
    """Of the groups a `per` tally keeps, the one furthest along (a fresh tally if none;
    the first kept of those as far along)."""
    best, best_standing = None, -math.inf
    for _, kept in groups or ():
        standing = _standing(rule, kept)
        if best is None or standing > best_standing:
            best, best_standing = kept, standing
    return Tally(*best) if best is not None else Tally()


def _group_key(value: Any) -> str | None:
    """A group's name in the kept state: strings and numbers apart ("s:7" is not "n:7")."""
    key = _list_key(value)
    if key is None:
        return None
    return f"s:{_kept_key(key)}" if isinstance(key, str) else f"n:{plain_number(key)}"


def _kept_key(key: Any) -> Any:
    """A value as progress keeps it: a text longer than KEY_LENGTH as its digest, so what
    a player's progress holds stays small whatever the game sends."""
    if isinstance(key, str) and len(key) > KEY_LENGTH:
        return "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def _sequence(rule: Rule, tally: Tally, event: Mapping[str, Any]) -> StepResult:
    """Steps in order. `state[i]` is [start, last] of the partial sequence kept that has
    done i + 1 steps: the first step's time and the latest step's. The latest start leaves
    the most time for the rest (of two as late, the earlier last step). A step counts only
    at or after the previous step's time, so a step that arrives late does not complete a
    sequence out of order. Going from the last step back, one event advances a sequence by
    one step at most."""
    when = _seconds(event)
    done: list[list[float] | None] = _pairs(tally.state, len(rule.steps))
    within = rule.within_seconds
    passed = False
    if when is not None:
        if within is not None:  # a sequence whose time ran out is gone
            done = [d if d is None or when - d[0] <= within else None for d in done]
        for i in reversed(range(len(rule.steps))):
            if not rule.steps[i].passes(event):
                continue
            passed = True
            before = [when, when] if i == 0 else done[i - 1]
            if before is None or when < before[1]:
                continue
            if within is not None and when - before[0] > within:
                continue
            current, candidate = done[i], [before[0], when]
            if current is None or (candidate[0], -candidate[1]) > (current[0], -current[1]):
                done[i] = candidate
    reached = _steps_done(done)
    new = Tally(count=reached, run=reached, total=0.0, state=done)
    return StepResult(new, matched=True, passed=passed, completed=reached == len(rule.steps))


def _pairs(state: Any, steps: int) -> list[list[float] | None]:
    """A sequence's kept [start, last] per step (a fresh one for anything else)."""
    if not isinstance(state, list) or len(state) != steps:
        return [None] * steps
    return [list(d) if isinstance(d, list) and len(d) == 2 else None for d in state]


def _steps_done(done: list[list[float] | None]) -> int:
    return max((i + 1 for i, d in enumerate(done) if d is not None), default=0)


def _standing(rule: Rule, kept: list[Any]) -> float:
    """How far one group (its kept [count, run, total, state]) has gone towards its
    completion, to compare groups: the share of the target, or for min the lower the
    better."""
    count, run, total, state = kept
    kind = rule.completion
    if kind == "min":
        return -total if state is not None else -math.inf
    if kind == "count":
        current = count
    elif kind == "consecutive":
        current = run
    elif kind in ("sum", "max"):
        current = total if kind == "sum" or state is not None else 0.0
    else:  # distinct
        current = len(state or [])
    return current / rule.threshold


def is_complete(rule: Rule, tally: Tally) -> bool:
    if rule.per is not None:  # within one group: the one furthest along
        tally = _best_group(rule, tally.state)
    return _complete(rule, tally)


def _complete(rule: Rule, tally: Tally) -> bool:
    kind = rule.completion
    if kind in ("count", SEQUENCE):
        return tally.count >= rule.threshold
    if kind in ("consecutive", "streak"):
        return tally.run >= rule.threshold
    if kind == "sum":
        return tally.total >= rule.threshold
    if kind == "max":
        return tally.state is not None and tally.total >= rule.threshold
    if kind == "min":
        return tally.state is not None and tally.total <= rule.threshold
    return len(tally.state or []) >= rule.threshold  # distinct, days


def progress(rule: Rule, tally: Tally, now: datetime | None = None) -> tuple[float, float]:
    """(current, target) of a tally, as the offers API and the wall show it: events, days
    in a row, the total or the best value so far, distinct values, days, or steps done;
    with `per`, of the group furthest along. Given `now`, what time has undone since the
    last event is left out: a window's events older than the window, a streak whose last
    day was before yesterday, a sequence whose `within` ran out."""
    if rule.per is not None:
        tally = _best_group(rule, tally.state)
    if now is not None:
        tally = _as_of(rule, tally, now)
    return _progress(rule, tally)


def _as_of(rule: Rule, tally: Tally, now: datetime) -> Tally:
    moment = now.timestamp()
    if rule.window_seconds is not None and isinstance(tally.state, list):
        kept = [p for p in tally.state if moment - p[0] <= rule.window_seconds]
        return Tally(len(kept), 0, math.fsum(p[1] for p in kept), kept)
    if rule.completion == "streak" and tally.state:
        today = now.astimezone(_zone(rule.time_zone)).date().toordinal()
        return tally if max(tally.state) >= today - 1 else replace(tally, run=0)
    if rule.steps and rule.within_seconds is not None:
        done = [
            d if d is not None and moment - d[0] <= rule.within_seconds else None
            for d in _pairs(tally.state, len(rule.steps))
        ]
        reached = _steps_done(done)
        return Tally(reached, reached, 0.0, done)
    return tally


def _progress(rule: Rule, tally: Tally) -> tuple[float, float]:
    kind = rule.completion
    target = rule.threshold
    if kind in ("count", SEQUENCE):
        return float(tally.count), target
    if kind in ("consecutive", "streak"):
        return float(tally.run), target
    if kind in ("sum", "max", "min"):
        return (tally.total if kind == "sum" or tally.state is not None else 0.0), target
    return float(len(tally.state or [])), target


def next_round(rule: Rule, tally: Tally) -> Tally:
    """The tally a repeatable mission starts its next round with, after `tally` completed
    it: from nothing, except that the days kinds count only days after the one the round
    completed on (a second login that day does not start the next streak)."""
    if rule.completion in DAY_KINDS and tally.state:
        return Tally(total=float(max(tally.state)))
    return Tally()


@dataclass
class Replay:
    """The outcome of running a sequence of events through a rule from a fresh start."""

    tally: Tally = field(default_factory=Tally)
    completions: int = 0


def replay(rule: Rule, events: Iterable[Mapping[str, Any]], *, repeatable: bool) -> Replay:
    """Evaluate events in order; a repeatable mission starts its next round after each
    completion (`next_round`), a one-time mission stops at its first."""
    result = Replay()
    for event in events:
        outcome = step(rule, result.tally, event)
        result.tally = outcome.tally
        if outcome.completed:
            result.completions += 1
            if not repeatable:
                break
            result.tally = next_round(rule, result.tally)
    return result


def _seconds(event: Mapping[str, Any]) -> float | None:
    when = event.get("time")
    return when.timestamp() if isinstance(when, datetime) and when.tzinfo else None


def _day(rule: Rule, event: Mapping[str, Any]) -> int | None:
    """The calendar day of an event's time in the rule's time zone (a day number)."""
    when = event.get("time")
    if not isinstance(when, datetime) or when.tzinfo is None:
        return None
    return when.astimezone(_zone(rule.time_zone)).date().toordinal()


@lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def _zone_name(name: str) -> str:
    try:
        _zone(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a directory's name
        raise RuleError(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Berlin"
        ) from None
    return name


def read_field(event: Mapping[str, Any], name: str) -> tuple[bool, Any]:
    """(present, value) of `value`, `groupId` or `traits.<name>` in an event."""
    if name in ("value", "groupId"):
        value = event.get(name)
        return value is not None, value
    traits = event.get("traits")
    key = name[len("traits.") :]
    if not isinstance(traits, Mapping) or key not in traits:
        return False, None
    return True, traits[key]


def _valid_field(name: str, *, group: bool = False) -> bool:
    """`value` or `traits.<name>`, and `groupId` where `group` allows it."""
    if group and name == "groupId":
        return True
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


def plain_number(operand: Any) -> Any:
    """A whole number as an int (10, not 10.0): the engine compares floats, people read
    what they typed."""
    if isinstance(operand, float) and operand.is_integer() and abs(operand) < 2**53:
        return int(operand)
    return operand
