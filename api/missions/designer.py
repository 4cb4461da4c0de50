"""What the portal's mission editor and rule tester need: the editor's saves, the rule
tester's event-by-event run, the offer preview, the game's offers and its event names.

Forms become definitions in `forms.py`, and are saved by `offers.py` like import
files: the portal adds no rules of its own."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from pydantic import BaseModel
from sqlmodel import Session, col

from api.accounts import Account, game_for
from api.economics import budgets
from api.missions import offers
from api.missions.forms import FormError, form_values, from_form, scalar
from api.missions.funnels import (
    Funnel,
    PeriodFunnel,
    duration_words,
    mission_funnels,
    period_funnels,
)
from api.missions.open_offers import closed_missions
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
    summary,
)
from models import Event, Mission, Quest
from models.offer_schemas import (
    BudgetIn,
    MissionIn,
    PoolIn,
    QuestFields,
    RuleIn,
    mission_in,
    quest_fields,
    rule_in,
)
from models.types import utcnow

MAX_TEST_EVENTS = 500


# The inputs of a pool the editor creates with the mission that names it first:
# `newPool.size`, `newPool.every`, `newPool.timeZone`, `newPool.weekStartsOn`.
NEW_POOL = "newPool"


def save_mission_form(
    *, session: Session, game_id: str, form: Mapping[str, str], mission_id: str | None
) -> Mission:
    """The editor's save: the game's mission (or a new one) with the form over it. A pool
    name the game does not have yet is a new pool, made from the form's `newPool.…`
    inputs in the same transaction, before the mission."""
    data = _definition(session=session, game_id=game_id, form=form, mission_id=mission_id)
    if data.pool is not None and offers.pool_named(session, game_id, data.pool) is None:
        pool = from_form(PoolIn, {**form, f"{NEW_POOL}.name": data.pool}, root=NEW_POOL)
        offers.save_pool(session=session, game_id=game_id, data=pool)
    return offers.save_mission(session=session, game_id=game_id, data=data)


@dataclass(frozen=True)
class PoolChoice:
    name: str
    words: str  # "3 of its missions a day (UTC)"


def pool_choices(*, session: Session, game_id: str) -> list[PoolChoice]:
    """The game's pools, by name, each with what it does in words (the editor's list)."""
    return [
        PoolChoice(p.name, f"{p.size} of its missions {_EVERY_WORDS[p.every]} ({p.time_zone})")
        for p in offers.game_pools(session=session, game_id=game_id)
    ]


_EVERY_WORDS = {"day": "a day", "week": "a week", "month": "a month"}


def mission_draft(
    *, session: Session, game_id: str, form: Mapping[str, str], mission_id: str | None
) -> MissionIn:
    """The definition the editor's form makes, checked by the schema and the engine as a
    save would, without saving: what "Try on history" backtests."""
    data = _definition(session=session, game_id=game_id, form=form, mission_id=mission_id)
    offers.check_rule(data)
    return data


def _definition(
    *, session: Session, game_id: str, form: Mapping[str, str], mission_id: str | None
) -> MissionIn:
    """The game's mission (or a new one) with the form over it, as the schema reads it."""
    stored = (
        offers.mission_of_game(session=session, game_id=game_id, mission_id=mission_id)
        if mission_id
        else None
    )
    data = from_form(MissionIn, form, stored=mission_in(stored) if stored else None)
    if data.pool is not None and stored is not None and stored.quest_id is not None:
        raise FormError(
            {"pool": "This mission is in a quest: a pooled mission is offered on its own."}
        )
    return data


def save_quest_form(
    *,
    session: Session,
    game_id: str,
    form: Mapping[str, str],
    quest_id: str | None,
    mission_ids: list[str],
) -> Quest:
    """The quest builder's save: the game's quest (or a new one) with the form over it,
    made of the chosen missions in order."""
    stored = (
        offers.quest_of_game(session=session, game_id=game_id, quest_id=quest_id)
        if quest_id
        else None
    )
    data = from_form(QuestFields, form, stored=quest_fields(stored) if stored else None)
    return offers.save_quest(session=session, game_id=game_id, data=data, mission_ids=mission_ids)


@dataclass(frozen=True)
class QuestBuilder:
    quest: Quest | None  # None: a new quest
    chosen: list[Mission]  # the quest's missions, in order
    available: list[Mission]  # the game's missions in no quest


def quest_builder(*, session: Session, game_id: str, quest_id: str | None) -> QuestBuilder:
    """What the quest builder opens with: the game's quest (OfferError when it is not this
    game's), its missions in order, and the missions that could join it."""
    quest = (
        offers.quest_of_game(session=session, game_id=game_id, quest_id=quest_id)
        if quest_id
        else None
    )
    missions = session.scalars(
        sa.select(Mission)
        .where(col(Mission.game_id) == game_id)
        .order_by(col(Mission.quest_position), col(Mission.created_at))
    ).all()
    return QuestBuilder(
        quest,
        [m for m in missions if quest is not None and m.quest_id == quest.id],
        # A pooled mission is offered on its own, never in a quest.
        [m for m in missions if m.quest_id is None and m.pool is None],
    )


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


# --- the rule tester ----------------------------------------------------------------


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
    lines = _event_lines(form.get("events", ""))
    _check_numbers(engine_rule, lines)
    steps = try_rule(engine_rule, [event for _, event in lines], repeatable=repeatable)
    completed_at = next((s.n for s in steps if s.completed), 0)
    return RuleTest(summary(rule), steps, completed_at)


MAX_REPLAY_EVENTS = 1000
REPLAY_DAYS = 7  # the range the tester offers first: the last week


@dataclass(frozen=True)
class PlayerEvents:
    events: list[dict[str, Any]]  # in time order, as the engine reads them
    cut: bool  # more were stored in the range than `limit`


def player_events(
    *,
    session: Session,
    game_id: str,
    user_id: str,
    names: Iterable[str],
    start: datetime,
    end: datetime,
    limit: int = MAX_REPLAY_EVENTS,
) -> PlayerEvents:
    """A player's stored events of these names from `start` to before `end`, in time
    order: at most `limit`, the earliest ones."""
    rows = session.execute(
        sa.select(
            col(Event.name),
            col(Event.time),
            col(Event.value),
            col(Event.traits),
            col(Event.group_id),
        )
        .where(
            col(Event.game_id) == game_id,
            col(Event.user_id) == user_id,
            col(Event.name).in_(sorted(set(names))),
            col(Event.time) >= start,
            col(Event.time) < end,
        )
        .order_by(col(Event.time), col(Event.id))
        .limit(limit + 1)
    ).all()
    events = [
        {
            "event": name,
            "time": when if when.tzinfo else when.replace(tzinfo=UTC),
            "value": value,
            "traits": traits or {},
            "groupId": group_id,
        }
        for name, when, value, traits, group_id in rows[:limit]
    ]
    return PlayerEvents(events, cut=len(rows) > limit)


def replay_player(
    *, session: Session, game_id: str, form: Mapping[str, str], repeatable: bool
) -> RuleTest:
    """The rule tester on a real player: the rule builder's rule over the events the game
    stored for the user id `player` from the day `from` to the day `to` (UTC, both
    included), event by event."""
    rule = rule_definition(form)
    engine_rule = Rule.from_input(rule)
    user_id = form.get("player", "").strip()
    start, end = _day_range(form.get("from", ""), form.get("to", ""))
    if not user_id:
        raise FormError({"player": "Enter the game's user id of the player to replay."})
    found = player_events(
        session=session,
        game_id=game_id,
        user_id=user_id,
        names=engine_rule.events,
        start=start,
        end=end,
        limit=MAX_REPLAY_EVENTS,
    )
    steps = try_rule(engine_rule, found.events, repeatable=repeatable)
    completed_at = next((s.n for s in steps if s.completed), 0)
    days = f"from {start:%Y-%m-%d} to {end - timedelta(days=1):%Y-%m-%d} (UTC)"
    if not found.events:
        note = f"Player {user_id} sent no event the rule reads {days}."
    elif found.cut:
        note = (
            f"The first {MAX_REPLAY_EVENTS:,} events player {user_id} sent {days}, of the "
            "names the rule reads: later ones are left out; choose a shorter range to see them."
        )
    else:
        count = len(found.events)
        note = f"{count} event{'' if count == 1 else 's'} player {user_id} sent {days}, of the names the rule reads."
    return RuleTest(summary(rule), steps, completed_at, note)


LAST_DAY = datetime(9999, 12, 31, tzinfo=UTC)  # the last day a range may end on


def _day_range(first: str, last: str) -> tuple[datetime, datetime]:
    """[start, end) of the days `first` to `last` (YYYY-MM-DD, UTC, both included)."""
    errors, days = {}, []
    for name, text in (("from", first), ("to", last)):
        try:
            days.append(datetime.strptime(text.strip(), "%Y-%m-%d").replace(tzinfo=UTC))
        except ValueError:
            errors[name] = "Enter a day, e.g. 2026-11-20."
    if errors:
        raise FormError(errors)
    start, end = days[0], days[1] + (timedelta(days=1) if days[1] < LAST_DAY else timedelta(0))
    if start >= end:
        raise FormError({"from": "The range starts after it ends."})
    return start, end


def default_range(today: date) -> tuple[str, str]:
    """The tester's first range: the last `REPLAY_DAYS` days, today included."""
    return (today - timedelta(days=REPLAY_DAYS - 1)).isoformat(), today.isoformat()


def player_ids(*, session: Session, game_id: str, now: datetime, limit: int = 50) -> list[str]:
    """The game's user ids that sent events in the last `REPLAY_DAYS` days, most recent
    first (the tester's suggestions; a recent range reads a month's partition, not the
    game's whole history)."""
    latest = sa.func.max(col(Event.time))
    found = session.execute(
        sa.select(col(Event.user_id))
        .where(
            col(Event.game_id) == game_id,
            col(Event.time) >= now - timedelta(days=REPLAY_DAYS),
        )
        .group_by(col(Event.user_id))
        .order_by(latest.desc())
        .limit(limit)
    ).scalars()
    return list(found)


def parse_events(text: str) -> list[dict[str, Any]]:
    """Events to test, one per line: a JSON object ({"event": …, "value": …, "traits": …,
    "time": …, "groupId": …}) or the short form `EVENT [value] [trait=value …]`, e.g.
    `GAME_OVER 1200 mode=ranked`."""
    return [event for _, event in _event_lines(text)]


def _event_lines(text: str) -> list[tuple[int, dict[str, Any]]]:
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
    if event.get("value") is not None and not _is_number(event["value"]):
        raise FormError({"events": f"line {number}: the value is a number"})
    if event.get("time") is not None:
        event["time"] = _event_time(event["time"], number)
    group = event.get("groupId")
    if group is not None and not (isinstance(group, str) or _is_number(group)):
        raise FormError({"events": f"line {number}: the groupId is text or a number"})
    if group is not None:  # as ingestion has it: text, and an empty one is none
        event["groupId"] = (str(plain_number(group)) if _is_number(group) else group) or None
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
            if not _is_number(value):
                raise FormError({"events": f"line {number}: the value is a number"})
            event["value"] = value
        else:
            raise FormError({"events": f"line {number}: write traits as name=value"})
    return event


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_numbers(rule: Rule, lines: list[tuple[int, dict[str, Any]]]) -> None:
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
            if present and not _is_number(found):
                what = "the value" if name == "value" else name.removeprefix("traits.")
                shown = f"“{found}”" if isinstance(found, str) else json.dumps(found)
                problems.append(f"line {number}: {what} is {shown}, not a number")
    if problems:
        raise FormError({"events": "; ".join(problems)})


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
        elif rule.completion != "distinct" and not _is_number(found):
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
    if _is_number(value):
        return str(plain_number(float(value)))
    return str(value)


def _name(field_name: str) -> str:
    return field_name.removeprefix("traits.")


# --- suggestions and previews --------------------------------------------------------


def event_names(*, session: Session, game_id: str, limit: int = 50) -> list[str]:
    """The event names the game has sent, most frequent first (for the editor)."""
    found = session.execute(
        sa.select(col(Event.name))
        .where(col(Event.game_id) == game_id)
        .group_by(col(Event.name))
        .order_by(sa.func.count().desc())
        .limit(limit)
    ).scalars()
    return list(found)


# --- the game's offers ----------------------------------------------------------------


@dataclass(frozen=True)
class LiveBadge:
    """One fact of a mission's live operations, as the list shows it at a glance."""

    kind: str  # "recurring" | "pool" | "stages" | "full" | "budget" | "scheduled"
    text: str  # "Daily · America/New_York", "Pool daily-pvp", "3 stages", …


@dataclass(frozen=True)
class PeriodLine:
    """A recurring or pooled mission's funnel in one period, in words."""

    label: str  # "Today", "Last week", "Nov 2026"
    first_day: str  # the period's first date, "2026-11-28"
    clicks: str
    started: str
    completed: str


@dataclass(frozen=True)
class OfferRow:
    id: str
    kind: str  # "mission" | "quest"
    title: str
    payout_micros: int | None  # USD millionths; None for a quest
    active: bool
    cap: str  # "3 / 100 conversions", "2 / ∞ players" (a quest's start cap)
    rule: str  # the rule in words
    quest: str  # for a mission inside a quest: the quest's name
    quest_id: str
    # The funnel (api/missions/funnels.py); a quest's missions carry their own.
    clicks: str = ""
    started: str = ""
    in_progress: str = ""
    completed: str = ""
    median_time: str = ""
    live: list[LiveBadge] = field(default_factory=list)
    # A recurring or pooled mission's funnel this period and the one before.
    periods: list[PeriodLine] = field(default_factory=list)
    # What the game pays per conversion (USD millionths; None: no revenue set, or a quest).
    revenue_micros: int | None = None


EVERY_BADGE = {"day": "Daily", "week": "Weekly", "month": "Monthly"}


def live_badges(
    m: Mission,
    pools: dict[str, Any],
    closed: dict[str, datetime | None],
    now: datetime,
    spent: dict[str, datetime | None] | None = None,
) -> list[LiveBadge]:
    """What a mission does in live operations, in words: recurring, pooled, staged, full
    for its period now (and until when), its budget spent (and until when), not started
    yet."""
    badges = []
    if m.recurrence:
        every = str(m.recurrence.get("every", "day"))
        week = str(m.recurrence.get("weekStartsOn") or "monday")
        starts = f" from {week.capitalize()}" if every == "week" and week != "monday" else ""
        zone = m.recurrence.get("timeZone") or "UTC"
        badges.append(LiveBadge("recurring", f"{EVERY_BADGE.get(every, every)}{starts} · {zone}"))
    if m.pool:
        pool = pools.get(m.pool)
        every = f" · {EVERY_BADGE.get(pool.every, pool.every).lower()}" if pool else ""
        badges.append(LiveBadge("pool", f"Pool {m.pool}{every}"))
    if m.stages:
        badges.append(LiveBadge("stages", f"{len(m.stages)} stages"))
    if m.id in closed:
        reopens = closed[m.id]
        if reopens is None:
            badges.append(LiveBadge("full", "Full at its cap"))
        else:
            zone = str((m.period_caps or {}).get("timeZone") or "UTC")
            badges.append(LiveBadge("full", f"Full · reopens {_moment(reopens, zone, now)}"))
    if spent is not None and m.id in spent:
        reopens = spent[m.id]
        if reopens is None:
            badges.append(LiveBadge("budget", "Budget spent · raise it to reopen"))
        else:
            badges.append(
                LiveBadge("budget", f"Budget spent · reopens {_moment(reopens, 'UTC', now)}")
            )
    if m.start_date is not None and m.start_date > now:
        badges.append(LiveBadge("scheduled", f"Starts {_moment(m.start_date, 'UTC', now)}"))
    return badges


def _moment(when: datetime, zone: str, now: datetime) -> str:
    """A moment as the list says it: "24 Dec", "24 Dec 15:00" (in `zone`, named unless it
    is UTC at midnight), with the year when it is not this one."""
    local = when.astimezone(ZoneInfo(zone))
    text = f"{local.day} {local:%b}"
    if local.year != now.astimezone(ZoneInfo(zone)).year:
        text += f" {local.year}"
    if (local.hour, local.minute) != (0, 0):
        text += f" {local:%H:%M}"
    if zone != "UTC":
        text += f" ({zone})"
    return text


def period_lines(funnel: PeriodFunnel) -> list[PeriodLine]:
    """This period's funnel and the one before's, each named as people say it."""
    return [
        PeriodLine(
            _period_label(funnel.every, key, this),
            key,
            str(c.clicks),
            str(c.started),
            str(c.completed),
        )
        for key, c, this in (
            (funnel.current, funnel.now, True),
            (funnel.previous, funnel.before, False),
        )
    ]


def _period_label(every: str, key: str, current: bool) -> str:
    """ "Today", "Last week", "Nov 2026": short enough for one line of the list."""
    if every == "week":
        return "This week" if current else "Last week"
    if every == "month":
        return f"{date.fromisoformat(key):%b %Y}"
    return "Today" if current else "Yesterday"


def _mission_row(
    m: Mission,
    quest: Quest | None,
    funnel: Funnel,
    live: list[LiveBadge],
    periods: PeriodFunnel | None,
) -> OfferRow:
    return OfferRow(
        m.id,
        "mission",
        m.title,
        m.payout_micros,
        m.is_active,
        f"{m.conversions} / {m.cap or '∞'} conversions",
        summary(rule_in(m)),
        quest.name if quest else "",
        m.quest_id or "",
        clicks=str(funnel.clicks),
        started=str(funnel.started),
        in_progress=str(funnel.in_progress),
        completed=str(funnel.completed),
        median_time=duration_words(funnel.median_seconds),
        live=live,
        periods=period_lines(periods) if periods else [],
        revenue_micros=m.revenue_micros,
    )


def game_offers(*, session: Session, game_id: str, now: datetime | None = None) -> list[OfferRow]:
    """The game's quests, then its missions (standalone first, then by quest, in order),
    each mission with its rule in words, its funnel, what it does in live operations and,
    when it turns over, its funnel this period and the one before."""
    now = now or utcnow()
    quests = {
        q.id: q
        for q in session.execute(sa.select(Quest).where(col(Quest.game_id) == game_id)).scalars()
    }
    missions = list(
        session.execute(
            sa.select(Mission)
            .where(col(Mission.game_id) == game_id)
            .order_by(
                col(Mission.quest_id).is_(None).desc(),
                col(Mission.quest_position),
                col(Mission.created_at),
            )
        ).scalars()
    )
    funnels = mission_funnels(session=session, game_id=game_id, now=now)
    per_period = period_funnels(session=session, game_id=game_id, now=now)
    pools = {p.name: p for p in offers.game_pools(session=session, game_id=game_id)}
    capped = [m for m in missions if m.period_caps]
    closed = closed_missions(session.connection(), capped, None, now) if capped else {}
    spent = budgets.closed(session.connection(), missions, now)
    mission_rows = [
        _mission_row(
            m,
            quests.get(m.quest_id or ""),
            funnels.get(m.id, Funnel()),
            live_badges(m, pools, closed, now, spent),
            per_period.get(m.id),
        )
        for m in missions
    ]
    # A quest's clicks are those of its link, which each of its missions shows too.
    quest_clicks = {r.quest_id: r.clicks for r in mission_rows if r.quest_id}
    quest_rows = [
        OfferRow(
            q.id,
            "quest",
            q.name,
            None,
            q.is_active,
            f"{q.starts} / {q.start_cap or '∞'} players",
            "",
            "",
            "",
            clicks=quest_clicks.get(q.id, "0"),
            live=(
                [LiveBadge("scheduled", f"Starts {_moment(q.start_date, 'UTC', now)}")]
                if q.start_date is not None and q.start_date > now
                else []
            ),
        )
        for q in sorted(quests.values(), key=lambda q: q.created_at)
    ]
    return quest_rows + mission_rows


# --- budgets ----------------------------------------------------------------------------


class GameBudgetForm(BaseModel):
    """The game's budget form: `budget.amount`, `budget.every`, `budget.timeZone`; all
    left empty (or the amount emptied), the game has no budget."""

    budget: BudgetIn | None = None


def game_budget_values(
    *, session: Session, account: Account | None, game_id: str
) -> dict[str, str]:
    """The game's budget as its form's inputs (empty when it has none)."""
    game = game_for(session=session, account=account, game_id=game_id)
    return form_values(GameBudgetForm.model_validate({"budget": game.budget}))


def save_game_budget(
    *, session: Session, account: Account | None, game_id: str, form: Mapping[str, str]
) -> BudgetIn | None:
    """Set or remove a game's budget of revenue from its form: only on a game the account
    manages (its studio's for a designer; any for staff). Its missions reopen at once
    when the new budget has room."""
    game = game_for(session=session, account=account, game_id=game_id)
    budget = from_form(GameBudgetForm, form).budget
    budgets.set_game_budget(session, game.id, budget)
    return budget


def remove_game_budget(*, session: Session, account: Account | None, game_id: str) -> None:
    """Take a game's budget away (the account manages the game)."""
    game = game_for(session=session, account=account, game_id=game_id)
    budgets.set_game_budget(session, game.id, None)


def budget_burn(
    *, session: Session, game_id: str, now: datetime | None = None
) -> list[budgets.Burn]:
    """The game's budget and its missions' own, each with what its current period spent."""
    missions = session.execute(
        sa.select(Mission).where(col(Mission.game_id) == game_id).order_by(col(Mission.created_at))
    ).scalars()
    return budgets.burn(session.connection(), game_id, list(missions), now or utcnow())
