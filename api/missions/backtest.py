"""Backtest: a draft mission (or every mission of an import file) over a game's stored
events of the last N days, as if every player who sent an event in that range had started
it at their first event (docs/missions.md#backtest).

One streaming pass per game: the events come in (player, time) order from the index the
event table has for it, a player at a time, and each event is run at once through every
mission with the code live evaluation uses (`progress.advance`: the rule, repeats, the
time limit and the anti-cheat limits). What stays in memory is one player's progress per
mission, and per mission the days with completions and one time-to-complete per player
who completed: never the events.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from api.missions.index import MissionSpec, spec_of
from api.missions.progress import EngineEvent, ProgressRow, Run, advance
from models import Mission, ProgressStatus
from models.offer_schemas import MissionIn, offer_columns
from models.tables import event as _event

PROGRESS_EVERY = 50_000  # events between two progress reports
READ_BATCH = 5_000  # rows fetched from the database at a time


@dataclass
class MissionOutcome:
    """What one mission would have done over the range."""

    title: str
    payout_micros: int
    cap: int | None
    reached: int = 0  # players with at least one completion
    completions: int = 0  # with repeats
    set_aside: int = 0  # events its anti-cheat limits would not have counted
    per_day: Counter[str] = field(default_factory=Counter)  # completions by UTC date
    seconds_to_complete: list[float] = field(default_factory=list)  # first completion, each
    cost_micros: int = 0  # every completion's payout (a ladder's: its stage's), uncapped

    @property
    def paid(self) -> int:
        """Completions that would have been paid: all of them, up to the cap."""
        return self.completions if self.cap is None else min(self.completions, self.cap)

    @property
    def cost(self) -> Decimal:
        """What the paid completions cost: all of them, or up to the cap at the average
        payout of a completion (a ladder's stages pay differently)."""
        if not self.completions:
            return Decimal(0)
        return Decimal(self.cost_micros) * self.paid / self.completions / 1_000_000

    def as_json(self) -> dict[str, Any]:
        times = sorted(self.seconds_to_complete)
        return {
            "mission": self.title,
            "reached": self.reached,
            "completions": self.completions,
            "completionsPerDay": dict(sorted(self.per_day.items())),
            "medianSecondsToComplete": _rounded(statistics.median(times)) if times else None,
            "p90SecondsToComplete": _rounded(_percentile(times, 0.9)) if times else None,
            "costUsd": str(self.cost.quantize(Decimal("0.000001")).normalize()),
            "cap": self.cap,
            "eventsSetAside": self.set_aside,
        }


@dataclass
class Backtest:
    game_id: str
    since: datetime
    until: datetime
    events: int = 0  # events read
    players: int = 0  # players with an event in the range: each started every mission
    missions: list[MissionOutcome] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "gameId": self.game_id,
            "from": self.since.isoformat(),
            "to": self.until.isoformat(),
            "events": self.events,
            "players": self.players,
            "missions": [m.as_json() for m in self.missions],
        }


def _percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile of sorted values."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _rounded(seconds: float) -> float | int:
    return int(seconds) if float(seconds).is_integer() else round(seconds, 3)


def draft_spec(game_id: str, number: int, data: MissionIn) -> MissionSpec:
    """The spec live evaluation would use for a definition, saved or not."""
    columns = {k: v for k, v in offer_columns(data).items() if k in Mission.model_fields}
    mission = Mission(id=data.id or f"draft-{number}", game_id=game_id, **columns)
    return spec_of(mission)


def run_backtest(
    conn: Connection,
    *,
    game_id: str,
    missions: Sequence[MissionIn],
    days: int,
    now: datetime,
    on_progress: Callable[[int, int], None] | None = None,
) -> Backtest:
    """Run `missions` over the game's events of the `days` before `now`. `on_progress` is
    told (events read, events in the range) every PROGRESS_EVERY events and at the end."""
    since = now - timedelta(days=days)
    specs = [draft_spec(game_id, n, m) for n, m in enumerate(missions)]
    result = Backtest(game_id, since, now)
    result.missions = [MissionOutcome(m.title, m.payout_micros, m.cap) for m in missions]
    in_range = (_event.c.game_id == game_id, _event.c.time >= since, _event.c.time <= now)
    total = conn.execute(sa.select(sa.func.count()).where(*in_range)).scalar_one()
    names = sorted({name for spec in specs for name in spec.rule.events})
    rows = conn.execution_options(stream_results=True, yield_per=READ_BATCH).execute(
        sa.select(
            _event.c.user_id,
            _event.c.name,
            _event.c.time,
            _event.c.value,
            _event.c.traits,
            _event.c.group_id,
        )
        .where(*in_range)
        .order_by(_event.c.user_id, _event.c.time, _event.c.id)
    )
    player: _Player | None = None
    for user_id, name, time, value, traits, group_id in rows:
        result.events += 1
        if player is None or player.user_id != user_id:
            if player is not None:
                player.finish(result.missions)
            player = _Player(user_id, time, specs)
            result.players += 1
        if name in names:
            player.take(EngineEvent(name, time, value, traits, 0, user_id, group_id=group_id))
        if on_progress is not None and result.events % PROGRESS_EVERY == 0:
            on_progress(result.events, total)
    if player is not None:
        player.finish(result.missions)
    if on_progress is not None:
        on_progress(result.events, total)
    return result


@dataclass
class _Track:
    """One mission's run for the player, and what records its conversions and flags."""

    run: Run
    convert: Callable[[ProgressRow, MissionSpec, EngineEvent], bool]
    flag: Callable[..., None]


class _Player:
    """One player's progress on every mission, from their first event in the range (a
    recurring mission's: each period from zero, as live evaluation keeps a row a period)."""

    def __init__(self, user_id: str, first: datetime, specs: Sequence[MissionSpec]):
        self.user_id, self.first = user_id, first
        self.completed_at: list[list[datetime]] = [[] for _ in specs]
        self.cost_micros = [0] * len(specs)
        self.set_aside = [0] * len(specs)
        self.event: list[EngineEvent] = []  # the event being taken, as a run of one
        self.tracks = [
            _Track(
                Run(_fresh_row(spec, first), spec, self.event, fresh=False),
                self._convert(n),
                self._flag(n),
            )
            for n, spec in enumerate(specs)
        ]

    def take(self, event: EngineEvent) -> None:
        self.event[:] = (event,)
        for track in self.tracks:
            spec = track.run.spec
            if event.event not in spec.rule.events:
                continue
            if spec.period is not None and spec.period.key(event.time) != track.run.row.period:
                row = _period_row(spec, self.first, event.time)
                track.run = Run(row, spec, self.event, fresh=False)
            if track.run.row.status == ProgressStatus.STARTED:
                advance(track.run.row, track.run, convert=track.convert, flag=track.flag)

    def _convert(self, n: int) -> Callable[[ProgressRow, MissionSpec, EngineEvent], bool]:
        def convert(row: ProgressRow, spec: MissionSpec, event: EngineEvent) -> bool:
            stage = row.completions % len(spec.stages) if spec.stages else None
            row.completions += 1
            self.completed_at[n].append(event.time)
            self.cost_micros[n] += spec.payout_micros if stage is None else spec.stages[stage][1]
            return True

        return convert

    def _flag(self, n: int) -> Callable[..., None]:
        def flag(*_: Any) -> None:
            self.set_aside[n] += 1

        return flag

    def finish(self, outcomes: list[MissionOutcome]) -> None:
        for n, outcome in enumerate(outcomes):
            times = self.completed_at[n]
            outcome.set_aside += self.set_aside[n]
            if not times:
                continue
            outcome.reached += 1
            outcome.completions += len(times)
            outcome.cost_micros += self.cost_micros[n]
            outcome.per_day.update(t.date().isoformat() for t in times)
            outcome.seconds_to_complete.append((times[0] - self.first).total_seconds())


def _period_row(spec: MissionSpec, first: datetime, moment: datetime) -> ProgressRow:
    """A recurring mission's row of the period holding `moment`, from its start (or the
    player's first event, in the first period)."""
    assert spec.period is not None
    start, end = spec.period.bounds(moment)
    row = _fresh_row(spec, max(start, first))
    row.period, row.resets_at = spec.period.key(moment), end
    return row


def _fresh_row(spec: MissionSpec, start: datetime) -> ProgressRow:
    """A progress started at `start`, as a click would make it (never stored)."""
    limit = spec.time_limit_seconds
    return ProgressRow(
        id=0,
        mission_id=spec.id,
        platform_user_id="",
        quest_id=None,
        offerwall_id="",
        click_id=0,
        status=ProgressStatus.STARTED,
        started_at=start,
        expires_at=start + timedelta(seconds=limit) if limit else None,
        count=0,
        run=0,
        total=0.0,
        completions=0,
    )
