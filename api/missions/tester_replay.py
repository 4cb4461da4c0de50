"""The rule tester on a real player: the events the game stored for one user id over a
range of days, bounded, in time order, and the user ids to suggest."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api.missions.forms import FormError
from api.missions.rule_tester import RuleTest, rule_definition, try_rule
from api.missions.rule_words import summary
from api.missions.rules import Rule
from models import Event

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
