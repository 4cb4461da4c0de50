"""Players' progress on missions: evaluation at ingestion, replay on late linking,
and conversions (docs/contract.md#progress-and-conversions).

Runs inside the ingestion transaction. Progress rows are locked (FOR UPDATE on
PostgreSQL; SQLite has one writer) so parallel requests never evaluate the same
progress twice, and a mission's conversion counter is raised with a conditional UPDATE,
so its cap holds under any concurrency. Both kinds of rows are locked in id order, so
batches converting the same missions wait for each other instead of deadlocking. Rows
are read and written with Core statements, the changed ones in one executemany: a
batch may touch hundreds of them.

Why one module of this size: evaluation, replay and conversion share the locks and the order
in which rows are taken; split, the lock order would be spread over files. A completion that
waited for a place under a cap is paid here too (`pay_waiting`): by the same conversion,
under the same order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlmodel import Session

from api import economics
from api.core.driver import DriverStatement, from_db_json, from_db_time
from api.core.sql import dialect_insert, insert_ignore
from api.economics import budgets, payout_rules, promotions
from api.economics import terms as economics_terms
from api.fraud import DEFAULT_POLICY, Policy
from api.fraud import policy as fraud
from api.missions import open_offers
from api.missions.index import INDEX, MissionIndex, MissionSpec, bump
from api.missions.rules import Tally, is_complete, next_round, progress, step
from api.ops import CONVERSIONS, MISSION_COMPLETIONS, count_on_commit
from api.postbacks import outbox as postbacks
from api.webhooks import messages as webhooks
from models import ConversionStatus, PostbackKind, ProgressStatus
from models.schemas import EventIn
from models.tables import EMPTY_TALLY, PROGRESS_STATE
from models.tables import cap_count as _cap_count
from models.tables import cheat_flag as _cheat_flag
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import event as _event
from models.tables import game_user as _game_user
from models.tables import mission as _mission
from models.tables import platform_user as _platform_user
from models.tables import progress as _progress
from models.tables import quest as _quest
from models.types import new_uuid

_PROGRESS_COLUMNS = (
    "id",
    *PROGRESS_STATE,
    "rate_minute",
    "rate_count",
    "state",
    "waiting_on",
    "waiting_since",
    "waiting_event",
)


# Built once (every batch with a mission event runs it). Locks the progress rows only.
def _started_for_users(dialect: str) -> sa.Select[Any]:
    """The started progress of every platform user linked to one of a game's users.

    The user ids travel as one parameter (a JSON array on SQLite, an array on
    PostgreSQL), so the statement is compiled once. Locks the progress rows only."""
    if dialect == "postgresql":
        users = _game_user.c.user_id == sa.any_(sa.bindparam("users", type_=ARRAY(sa.String)))
    else:
        listed: Any = sa.select(sa.column("value")).select_from(
            sa.func.json_each(sa.bindparam("users"))
        )
        users = _game_user.c.user_id.in_(listed.scalar_subquery())
    return (
        sa.select(_game_user.c.user_id, *(_progress.c[name] for name in _PROGRESS_COLUMNS))
        .select_from(
            _game_user.join(
                _progress, _progress.c.platform_user_id == _game_user.c.platform_user_id
            )
        )
        .where(
            _game_user.c.game_id == sa.bindparam("game_id"),
            users,
            _progress.c.status == ProgressStatus.STARTED,
            _progress.c.period == "",  # a recurring mission's rows: `_period_runs`
        )
        .order_by(_progress.c.id)
        .with_for_update(of=_progress)
    )


# Runs for every batch that carries a mission's event: straight on the driver.
_STARTED_FOR_USERS = DriverStatement(_started_for_users)


@dataclass(frozen=True)
class EngineEvent:
    """An event as the rule engine sees it, with its place in arrival order, the game's
    user id and when it arrived."""

    event: str
    time: datetime
    value: float | None
    traits: dict[str, Any] | None
    order: int
    user_id: str = ""
    arrived: datetime | None = None
    # The country of the player's address, when the game sent it (`playerIp`).
    country: str | None = None
    group_id: str | None = None

    def as_mapping(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "value": self.value,
            "traits": self.traits,
            "time": self.time,
            "groupId": self.group_id,
        }


@dataclass
class ProgressRow:
    id: int
    mission_id: str
    platform_user_id: str
    quest_id: str | None
    offerwall_id: str
    click_id: int
    status: str
    started_at: datetime
    expires_at: datetime | None
    count: int
    run: int
    total: float
    completions: int
    period: str = ""  # a recurring mission's period (its first date); "" otherwise
    resets_at: datetime | None = None  # when that period ends
    rate_minute: int = 0
    rate_count: int = 0
    state: Any = None  # what the richer kinds keep (rules.Tally.state)
    # A completion a full cap refused: the counter it waits on, since when, and its event
    # (`_wait`); None when nothing waits.
    waiting_on: str | None = None
    waiting_since: datetime | None = None
    waiting_event: Any = None


def evaluate_events(
    session: Session,
    *,
    mission_index: MissionIndex,
    game_id: str,
    events: Sequence[EventIn],
    now: datetime,
    policy: Policy = DEFAULT_POLICY,
) -> int:
    """Evaluate a request's events against started progress; returns conversions made."""
    relevant = [(i, e) for i, e in enumerate(events) if mission_index.for_event(game_id, e.event)]
    if not relevant:
        return 0
    periodic = {
        spec.id: spec
        for _, e in relevant
        for spec in mission_index.for_event(game_id, e.event)
        if spec.period is not None and not spec.expired(now)
    }
    # One statement: the started progress of every player linked to a user of the batch.
    by_id: dict[int, ProgressRow] = {}
    users_of: dict[str, set[str]] = defaultdict(set)
    connection = session.connection()
    users = sorted({e.userId for _, e in relevant})
    param = users if connection.dialect.name == "postgresql" else orjson.dumps(users).decode()
    cursor = _STARTED_FOR_USERS.execute(connection, {"game_id": game_id, "users": param})
    for user_id, *columns in cursor.fetchall():
        row = by_id.get(columns[0])
        if row is None:
            columns[7] = from_db_time(columns[7])  # started_at
            columns[8] = from_db_time(columns[8])  # expires_at
            columns[14] = from_db_time(columns[14])  # resets_at
            columns[-4] = from_db_json(columns[-4])  # state
            columns[-2] = from_db_time(columns[-2])  # waiting_since
            columns[-1] = from_db_json(columns[-1])  # waiting_event
            row = by_id[columns[0]] = ProgressRow(*columns)
        users_of[row.platform_user_id].add(user_id)
    if not by_id and not periodic:
        return 0
    by_user: dict[str, list[EngineEvent]] = defaultdict(list)
    for index, e in relevant:
        by_user[e.userId].append(
            EngineEvent(
                e.event, e.time, e.value, e.traits, index, e.userId, now, e.country, e.groupId
            )
        )
    # Each player's events of this batch, in time order, and the names among them.
    player_events: dict[str, tuple[list[EngineEvent], set[str]]] = {}
    for player, player_users in users_of.items():
        mine = [ev for user in player_users for ev in by_user[user]]
        mine.sort(key=lambda ev: (ev.time, ev.order))
        player_events[player] = (mine, {ev.event for ev in mine})
    runs: list[Run] = []
    for row in by_id.values():
        spec = mission_index.missions.get(row.mission_id)
        if spec is None or spec.game_id != game_id or spec.expired(now):
            continue  # inactive, another game's, or expired
        if spec.period is not None:
            continue  # made recurring since: its periods' rows take the events
        mine, names = player_events[row.platform_user_id]
        if spec.rule.events.isdisjoint(names):
            continue  # nothing in this batch for this mission
        runs.append(Run(row, spec, mine, fresh=False))
    if periodic:
        runs += _period_runs(session, periodic, _players_of(session, game_id, by_user), now)
    before = {id(r.row): _state(r.row) for r in runs}
    made = _advance_all(session, runs, now, policy)
    changed = [r for r in runs if _state(r.row) != before[id(r.row)]]
    _save(session, [r.row for r in changed], now)
    moved = [r for r in changed if _tally(r.row) != before[id(r.row)][1:5]]
    _tell_progress(session, moved, now)
    return made


def _tally(row: ProgressRow) -> tuple[Any, ...]:
    return (row.count, row.run, row.total, row.state)


def _tell_progress(session: Session, runs: Sequence[Run], now: datetime) -> None:
    """`mission.progressed` for each row still counting whose tally moved, to the games
    whose endpoints asked for it (coalesced per player and mission: api/webhooks); each
    game's endpoints read once."""
    endpoints: dict[str, list[Any]] = {}
    for run in runs:
        spec, row = run.spec, run.row
        if "mission.progressed" not in spec.told or row.status != ProgressStatus.STARTED:
            continue
        if spec.game_id not in endpoints:
            endpoints[spec.game_id] = webhooks.game_endpoints(session, spec.game_id)
        current, target = progress(spec.rule, Tally(row.count, row.run, row.total, row.state), now)
        webhooks.emit_progressed(
            session,
            endpoints=endpoints[spec.game_id],
            player=row.platform_user_id,
            mission_id=spec.id,
            data={
                "userId": run.events[-1].user_id if run.events else None,
                "platformUserId": row.platform_user_id,
                "mission": {"id": spec.id, "title": spec.title},
                "questId": row.quest_id,
                "period": row.period or None,
                "progress": {"current": _whole(current), "target": _whole(target)},
            },
            now=now,
        )


def _players_of(
    session: Session, game_id: str, by_user: dict[str, list[EngineEvent]]
) -> dict[str, list[EngineEvent]]:
    """Each platform user linked to a user of the batch, with their events in time order."""
    links = session.execute(
        sa.select(_game_user.c.user_id, _game_user.c.platform_user_id).where(
            _game_user.c.game_id == game_id,
            _game_user.c.user_id.in_(sorted(by_user)),
            _game_user.c.platform_user_id.is_not(None),
        )
    ).all()
    players: dict[str, list[EngineEvent]] = defaultdict(list)
    for user_id, player in links:
        players[player].extend(by_user[user_id])
    for mine in players.values():
        mine.sort(key=lambda ev: (ev.time, ev.order))
    return players


def _period_runs(
    session: Session,
    specs: dict[str, MissionSpec],
    players: dict[str, list[EngineEvent]],
    now: datetime,
    *,
    fresh: bool = False,
) -> list[Run]:
    """The runs of recurring and pooled missions: each event goes to its player's row of
    the period it is timed in (docs/missions.md#recurring-missions), late ones included.
    A recurring mission's player takes part in every period after their first click, so
    a missing row of a later period is made here (from the period's start, attributed to
    the player's latest click); a pooled mission's rows come from clicks only."""
    wanted: dict[tuple[str, str, str], list[EngineEvent]] = defaultdict(list)
    for player, mine in players.items():
        for spec in specs.values():
            period = spec.period
            assert period is not None
            for ev in mine:
                if ev.event in spec.rule.events:
                    wanted[(spec.id, player, period.key(ev.time))].append(ev)
    if not wanted:
        return []
    rows = _period_rows(session, wanted)
    missing = [k for k in wanted if k not in rows and specs[k[0]].every_period]
    if missing and _enrol(session, missing, specs, now):
        rows = _period_rows(session, wanted)
    _adopt(session, rows, specs)
    return [
        Run(row, specs[key[0]], wanted[key], fresh=fresh)
        for key, row in sorted(rows.items(), key=lambda item: item[1].id)
        if row.status == ProgressStatus.STARTED
    ]


def _adopt(
    session: Session, rows: dict[tuple[str, str, str], ProgressRow], specs: dict[str, MissionSpec]
) -> None:
    """A row made before its mission's recurrence changed (a day made a week, another time
    zone) ends where the old period ended: it is carried into the period that now has its
    name, to that period's end, tally and all."""
    moved = []
    for (mission_id, _, key), row in rows.items():
        period = specs[mission_id].period
        assert period is not None
        end = period.bounds_of(key)[1]
        if row.resets_at != end:
            row.resets_at = end
            moved.append({"row_id": row.id, "new_resets_at": end})
    if moved:
        session.execute(
            sa.update(_progress)
            .where(_progress.c.id == sa.bindparam("row_id"))
            .values(resets_at=sa.bindparam("new_resets_at", type_=_progress.c.resets_at.type)),
            moved,
        )


def _period_rows(
    session: Session, wanted: dict[tuple[str, str, str], Any]
) -> dict[tuple[str, str, str], ProgressRow]:
    """The rows of the wanted (mission, player, period)s that exist, locked in id order."""
    missions = sorted({k[0] for k in wanted})
    players = sorted({k[1] for k in wanted})
    periods = sorted({k[2] for k in wanted})
    query = (
        sa.select(*(_progress.c[name] for name in _PROGRESS_COLUMNS))
        .where(
            _progress.c.mission_id.in_(missions),
            _progress.c.platform_user_id.in_(players),
            _progress.c.period.in_(periods),
        )
        .order_by(_progress.c.id)
        .with_for_update()
    )
    found = (ProgressRow(*row) for row in session.execute(query))
    return {
        key: row
        for row in found
        if (key := (row.mission_id, row.platform_user_id, row.period)) in wanted
    }


def _enrol(
    session: Session,
    missing: list[tuple[str, str, str]],
    specs: dict[str, MissionSpec],
    now: datetime,
) -> bool:
    """Make the rows of periods a recurring mission's players take part in without a new
    click; True when one was made. A period that ended before the player's first click
    (a late event of an earlier day) gets none."""
    missions = sorted({k[0] for k in missing})
    players = sorted({k[1] for k in missing})
    first = (
        sa.select(
            _progress.c.mission_id,
            _progress.c.platform_user_id,
            sa.func.min(_progress.c.started_at).label("since"),
            sa.func.max(_progress.c.id).label("latest"),
        )
        .where(
            _progress.c.mission_id.in_(missions),
            _progress.c.platform_user_id.in_(players),
        )
        .group_by(_progress.c.mission_id, _progress.c.platform_user_id)
    )
    enrolled = {(r.mission_id, r.platform_user_id): r for r in session.execute(first)}
    if not enrolled:
        return False
    latest_ids = sorted({r.latest for r in enrolled.values()})
    attribution = {
        r.id: r
        for r in session.execute(
            sa.select(
                _progress.c.id, _progress.c.quest_id, _progress.c.offerwall_id, _progress.c.click_id
            ).where(_progress.c.id.in_(latest_ids))
        )
    }
    made = []
    for mission_id, player, key in missing:
        found = enrolled.get((mission_id, player))
        spec = specs[mission_id]
        if found is None or spec.period is None:
            continue
        start, end = spec.period.bounds_of(key)
        since = from_db_time(found.since) or start
        if end <= since or (spec.expiration_date is not None and start >= spec.expiration_date):
            continue
        started = max(start, since)
        limit = spec.time_limit_seconds
        source = attribution[found.latest]
        made.append(
            {
                "mission_id": mission_id,
                "platform_user_id": player,
                "quest_id": source.quest_id,
                "offerwall_id": source.offerwall_id,
                "click_id": source.click_id,
                "status": ProgressStatus.STARTED,
                "started_at": started,
                "expires_at": started + timedelta(seconds=limit) if limit else None,
                "period": key,
                "resets_at": end,
                **EMPTY_TALLY,
                "updated_at": now,
            }
        )
    # In one order everywhere, so two batches making the same rows wait, never deadlock.
    made.sort(key=lambda v: (v["mission_id"], v["platform_user_id"], v["period"]))
    for values in made:
        insert_ignore(
            session,
            _progress,
            values,
            conflict=("mission_id", "platform_user_id", "period"),
        )
    return bool(made)


def _state(row: ProgressRow) -> tuple[Any, ...]:
    return (
        row.status,
        row.count,
        row.run,
        row.total,
        row.state,
        row.completions,
        *_rate(row),
        row.waiting_on,
        row.waiting_since,
    )


def _rate(row: ProgressRow) -> tuple[int, int]:
    return (row.rate_minute, row.rate_count)


def replay_for_link(
    session: Session,
    *,
    mission_index: MissionIndex,
    game_id: str,
    platform_user_id: str,
    now: datetime,
    policy: Policy = DEFAULT_POLICY,
) -> int:
    """A game user was just linked to `platform_user_id`: evaluate the stored events of
    every game user of this game linked to that player, from each progress's start."""
    specs = {m.id: m for m in mission_index.for_game(game_id)}
    if not specs:
        return 0
    rows = [
        row
        for row in _started(session, [platform_user_id], specs.keys())
        if specs[row.mission_id].period is None
    ]
    since = _periodic_since(session, platform_user_id, specs)
    if not rows and not since:
        return 0
    user_ids = (
        session.execute(
            sa.select(_game_user.c.user_id).where(
                _game_user.c.game_id == game_id, _game_user.c.platform_user_id == platform_user_id
            )
        )
        .scalars()
        .all()
    )

    def stored(spec: MissionSpec, start: datetime) -> list[EngineEvent]:
        found = session.execute(
            sa.select(
                _event.c.name,
                _event.c.time,
                _event.c.value,
                _event.c.traits,
                _event.c.id,
                _event.c.user_id,
                _event.c.received_at,
                _event.c.country,
                _event.c.group_id,
            )
            .where(
                _event.c.game_id == game_id,
                _event.c.user_id.in_(user_ids),
                _event.c.name.in_(sorted(spec.rule.events)),
                _event.c.time >= start,
            )
            .order_by(_event.c.time, _event.c.id)
        ).all()
        return [EngineEvent(*r) for r in found]

    runs: list[Run] = []
    for row in rows:
        spec = specs[row.mission_id]
        if spec.expired(now):
            continue
        runs.append(Run(row, spec, stored(spec, row.started_at), fresh=True))
    for mission_id, start in since.items():
        spec = specs[mission_id]
        if spec.expired(now):
            continue
        players = {platform_user_id: stored(spec, start)}
        runs += _period_runs(session, {spec.id: spec}, players, now, fresh=True)
    made = _advance_all(session, runs, now, policy)
    _save(session, [run.row for run in runs], now)
    return made


def _periodic_since(
    session: Session, player: str, specs: dict[str, MissionSpec]
) -> dict[str, datetime]:
    """When the player first started each of the recurring and pooled missions they did."""
    periodic = sorted(m for m, spec in specs.items() if spec.period is not None)
    if not periodic:
        return {}
    found = session.execute(
        sa.select(_progress.c.mission_id, sa.func.min(_progress.c.started_at))
        .where(_progress.c.platform_user_id == player, _progress.c.mission_id.in_(periodic))
        .group_by(_progress.c.mission_id)
    ).all()
    return {mission_id: from_db_time(start) or start for mission_id, start in found if start}


def _started(
    session: Session, players: Iterable[str], missions: Iterable[str] | None
) -> list[ProgressRow]:
    players = list(players)
    if not players:
        return []
    conditions = [
        _progress.c.platform_user_id.in_(players),
        _progress.c.status == ProgressStatus.STARTED,
    ]
    if missions is not None:
        conditions.append(_progress.c.mission_id.in_(list(missions)))
    query = (
        sa.select(*(_progress.c[name] for name in _PROGRESS_COLUMNS))
        .where(*conditions)
        .order_by(_progress.c.id)
        .with_for_update()
    )
    return [ProgressRow(*row) for row in session.execute(query)]


@dataclass(frozen=True)
class Run:
    """Events to run through one progress row's rule."""

    row: ProgressRow
    spec: MissionSpec
    events: Sequence[EngineEvent]
    fresh: bool


def _always(*_: Any) -> bool:
    return True


def _advance_all(session: Session, runs: Sequence[Run], now: datetime, policy: Policy) -> int:
    """Advance every run; returns the conversions made.

    A conversion raises its mission's counter, which locks the mission's row until
    commit. Two batches converting the same missions in different orders would
    deadlock, so a dry run (every conversion allowed, nothing written) first finds the
    missions this batch may convert, and their rows are locked in id order up front.
    The real run can only convert fewer (a cap reached stops a row), never others.
    """
    # One mission is one lock: no order to keep, and no dry run to pay for.
    converting: set[str] = set()
    if len({run.spec.id for run in runs}) > 1:
        converting = {
            run.spec.id
            for run in runs
            if advance(replace(run.row), run, convert=_always, flag=lambda *_: None)
        }
    if len(converting) > 1:
        session.execute(
            sa.select(_mission.c.id)
            .where(_mission.c.id.in_(sorted(converting)))
            .order_by(_mission.c.id)
            # FOR NO KEY UPDATE, as the counter's UPDATE takes: clicks that only
            # reference the mission (foreign keys) do not wait for it.
            .with_for_update(key_share=True)
        ).all()

    def convert(row: ProgressRow, spec: MissionSpec, event: EngineEvent) -> bool | None:
        return _convert(session, row, spec, event, now, policy)

    flags: list[dict[str, Any]] = []

    def flag(row: ProgressRow, spec: MissionSpec, event: EngineEvent, rule: str, detail: str):
        flags.append(
            {
                "game_id": spec.game_id,
                "mission_id": spec.id,
                "platform_user_id": row.platform_user_id,
                "user_id": event.user_id,
                "event": event.event,
                "event_time": event.time,
                "value": event.value,
                "rule": rule,
                "detail": detail,
                "created_at": now,
            }
        )

    made = sum(advance(run.row, run, convert=convert, flag=flag) for run in runs)
    if flags:
        session.execute(_cheat_flag.insert(), flags)
    if session.info.pop(_BUMP_DUE, False):
        bump(session)
    return made


# Set in a session whose batch filled an offer: its catalog bump waits for the batch's end.
_BUMP_DUE = "questwall_bump_due"


def advance(
    row: ProgressRow,
    run: Run,
    *,
    convert: Callable[[ProgressRow, MissionSpec, EngineEvent], bool | None],
    flag: Callable[[ProgressRow, MissionSpec, EngineEvent, str, str], None],
) -> int:
    """Run the run's events through the rule on `row`, calling `convert` for each new
    conversion: a completion, or each stage of a ladder reached. `convert` answers True
    (converted), False (the mission's cap is reached: the row ends) or None (a cap of the
    period is: the row waits, as it stands, for the next period). `fresh` recomputes from
    the start (late linking): conversions already made are recognised by their number and
    not paid again. An event of the rule that breaks one of the mission's anti-cheat
    limits does not count; `flag` records it. A recurring mission's row takes the events
    of its own period only."""
    spec, events, fresh = run.spec, run.events, run.fresh
    tally = Tally() if fresh else Tally(row.count, row.run, row.total, row.state)
    reached = 0 if fresh else row.completions
    if fresh:
        row.rate_minute, row.rate_count = 0, 0
    made = 0
    for event in events:
        if event.time < row.started_at:
            continue
        if row.resets_at is not None and event.time >= row.resets_at:
            continue  # the next period's
        if row.expires_at is not None and event.time > row.expires_at:
            row.status = ProgressStatus.EXPIRED
            break
        if event.event in spec.rule.events:
            broken = _broken(row, spec, event)
            if broken is not None:
                flag(row, spec, event, *broken)
                continue
        result = step(spec.rule, tally, event.as_mapping())
        tally = result.tally
        due = _due(spec, tally, event, result.completed, reached)
        if not due:
            continue
        outcome: bool | None = True
        for _ in range(due):
            reached += 1
            if reached <= row.completions:
                continue  # paid before (a fresh run)
            outcome = convert(row, spec, event)
            if not outcome:
                reached -= 1
                break
            made += 1
        if outcome is None:
            break  # a cap of the period: wait for the next one
        if outcome is False:
            row.status = ProgressStatus.CAPPED
            break
        if not result.completed:
            continue  # a ladder's stage, not its last
        if not spec.allow_multiple:
            row.status = ProgressStatus.COMPLETED
            break
        tally = next_round(spec.rule, tally)  # a repeatable mission starts again
    row.count, row.run, row.total, row.state = tally.count, tally.run, tally.total, tally.state
    return made


def _due(spec: MissionSpec, tally: Tally, event: EngineEvent, completed: bool, reached: int) -> int:
    """How many conversions an event makes due: one for a completion; for a ladder, each
    stage of the round its progress now reaches and none before it paid."""
    if not spec.stages:
        return 1 if completed else 0
    count = len(spec.stages)
    if completed:
        hit = count
    else:
        current, _ = progress(spec.rule, tally, event.time)
        hit = min(count - 1, sum(1 for threshold, _ in spec.stages if current >= threshold))
    return max(0, hit - reached % count)


def _broken(row: ProgressRow, spec: MissionSpec, event: EngineEvent) -> tuple[str, str] | None:
    """The anti-cheat limit an event of the mission's rule breaks, if any. The rate counts
    every such event in its minute (of event time), those set aside too."""
    if spec.max_events_per_minute is not None:
        minute = int(event.time.timestamp() // 60)
        if minute == row.rate_minute:
            row.rate_count += 1
        else:
            row.rate_minute, row.rate_count = minute, 1
        if row.rate_count > spec.max_events_per_minute:
            return (
                "rate",
                f"event {row.rate_count} of {event.event} in one minute; "
                f"at most {spec.max_events_per_minute} count",
            )
    return spec.broken_limit(event.value, event.traits)


def _save(session: Session, rows: Sequence[ProgressRow], now: datetime) -> None:
    if not rows:
        return
    statement = (
        sa.update(_progress)
        .where(_progress.c.id == sa.bindparam("row_id"))
        .values(
            status=sa.bindparam("new_status"),
            count=sa.bindparam("new_count"),
            run=sa.bindparam("new_run"),
            total=sa.bindparam("new_total"),
            state=sa.bindparam("new_state", type_=_progress.c.state.type),
            completions=sa.bindparam("new_completions"),
            rate_minute=sa.bindparam("new_rate_minute"),
            rate_count=sa.bindparam("new_rate_count"),
            waiting_on=sa.bindparam("new_waiting_on"),
            waiting_since=sa.bindparam("new_waiting_since", type_=_progress.c.waiting_since.type),
            waiting_event=sa.bindparam("new_waiting_event", type_=_progress.c.waiting_event.type),
            updated_at=sa.bindparam("now", type_=_progress.c.updated_at.type),
        )
    )
    session.execute(
        statement,
        [
            {
                "row_id": r.id,
                "new_status": r.status,
                "new_count": r.count,
                "new_run": r.run,
                "new_total": r.total,
                "new_state": r.state,
                "new_completions": r.completions,
                "new_rate_minute": r.rate_minute,
                "new_rate_count": r.rate_count,
                "new_waiting_on": r.waiting_on,
                "new_waiting_since": r.waiting_since,
                "new_waiting_event": r.waiting_event,
                "now": now,
            }
            for r in rows
        ],
    )


def _convert(
    session: Session,
    row: ProgressRow,
    spec: MissionSpec,
    event: EngineEvent,
    now: datetime,
    policy: Policy,
) -> bool | None:
    """Record a conversion unless a cap is reached (atomically; `_take_place`). A held one
    (docs/fraud.md#the-review-queue) is pending, without its postback, and counts against
    the cap like any other, so approvals can never overshoot it. The test player's
    (its click's `test`) is never held and takes no place under the cap: it is not paid.
    A completion a full cap refuses waits on that cap's counter for a place given back
    (`_wait`, `pay_waiting`)."""
    click = session.execute(_CLICK_OF, {"click_id": row.click_id}).one()
    test = bool(click.test)
    stage = row.completions % len(spec.stages) if spec.stages else None
    money = _money(session, row, spec, stage, click.country, now)
    drawn: list[list[str]] = []
    places: list[list[str]] = []
    if not test:
        full: list[str] = []
        room = _take_place(
            session, spec, row.offerwall_id, now, money.revenue_micros, drawn, places, full
        )
        if room is not True:
            if full:
                _wait(row, full[0], event, now)
            return room

    row.waiting_on = row.waiting_since = row.waiting_event = None
    row.completions += 1
    assessed = fraud.assess(
        session,
        fraud.Completion(
            click_id=row.click_id,
            platform_user_id=row.platform_user_id,
            offerwall_id=row.offerwall_id,
            mission_id=spec.id,
            quest_id=row.quest_id,
            started_at=row.started_at,
            event_time=event.time,
            arrived_at=event.arrived or now,
            min_seconds=spec.min_completion_seconds,
            event_country=event.country,
            mission_actions=spec.fraud_actions,
        ),
        policy,
    )
    held = assessed.held and not test
    transaction_id = new_uuid()
    payout_micros = money.payout_micros
    conversion_id = session.execute(
        _conversion.insert()
        .values(
            transaction_id=transaction_id,
            progress_id=row.id,
            sequence=row.completions,
            mission_id=spec.id,
            quest_id=row.quest_id,
            platform_user_id=row.platform_user_id,
            offerwall_id=row.offerwall_id,
            click_id=row.click_id,
            payout_micros=payout_micros,
            revenue_micros=money.revenue_micros,
            country=click.country,
            payout_rule=money.rule,
            promotion=money.promotion,
            multiplier=money.multiplier,
            budget_charges=drawn or None,
            cap_places=places or None,
            period=row.period or None,
            stage=None if stage is None else stage + 1,
            created_at=now,
            status=ConversionStatus.PENDING if held else ConversionStatus.APPROVED,
            signals=assessed.signals or None,
            review_due_at=policy.review_due(now) if held else None,
            test=test,
        )
        .returning(_conversion.c.id)
    ).scalar_one()
    status = ConversionStatus.PENDING if held else ConversionStatus.APPROVED
    count_on_commit(session, CONVERSIONS.labels(status=status.value))
    count_on_commit(session, MISSION_COMPLETIONS)
    if not test and spec.told:
        _tell_the_game(session, row, spec, event, stage, transaction_id, payout_micros, held, now)
    if not held:
        kind = PostbackKind.CONVERSION
    elif assessed.notify:
        kind = PostbackKind.HELD
    else:
        return True
    postbacks.enqueue(
        session, conversion_id=conversion_id, offerwall_id=row.offerwall_id, now=now, kind=kind
    )
    return True


def _tell_the_game(
    session: Session,
    row: ProgressRow,
    spec: MissionSpec,
    event: EngineEvent,
    stage: int | None,
    transaction_id: str,
    payout_micros: int,
    held: bool,
    now: datetime,
) -> None:
    """The game's webhooks of a conversion (docs/game-integration.md#webhooks), in the
    order they happened: the ladder's stage, the mission's completion (a ladder's at its
    last stage), the conversion approved or held."""
    about = {
        "userId": event.user_id,
        "platformUserId": row.platform_user_id,
        "mission": {"id": spec.id, "title": spec.title},
        "questId": row.quest_id,
        "period": row.period or None,
    }
    items: list[tuple[str, dict[str, Any]]] = []
    last = stage is None or stage + 1 == len(spec.stages)
    if stage is not None:
        items.append(
            ("mission.stage_reached", about | {"stage": stage + 1, "stages": len(spec.stages)})
        )
    if last:
        target = spec.rule.threshold
        progress_done = {"current": _whole(target), "target": _whole(target)}
        items.append(("mission.completed", about | {"progress": progress_done}))
    conversion = about | {
        "transactionId": transaction_id,
        "payoutUsd": format(Decimal(payout_micros) / 1_000_000, "f"),
        "stage": None if stage is None else stage + 1,
    }
    items.append(("conversion.held" if held else "conversion.approved", conversion))
    if last and row.quest_id and "quest.completed" in spec.told:
        quest = _quest_completed(session, row, spec)
        if quest is not None:
            items.append(
                (
                    "quest.completed",
                    {
                        "userId": event.user_id,
                        "platformUserId": row.platform_user_id,
                        "quest": quest,
                    },
                )
            )
    items = [item for item in items if item[0] in spec.told]
    if items:
        webhooks.emit(
            session, game_id=spec.game_id, player=row.platform_user_id, items=items, now=now
        )


def _quest_completed(session: Session, row: ProgressRow, spec: MissionSpec) -> dict | None:
    """The quest (id, name) when this completion is the one that completes it for the
    player: every active mission of the quest completed (a ladder at its last stage; held
    ones count, rejected and reversed ones do not), this one for the first time; None
    otherwise."""
    found = session.execute(sa.select(_quest.c.name).where(_quest.c.id == row.quest_id)).first()
    missions = {
        mission_id: len(stages or ())
        for mission_id, stages in session.execute(
            sa.select(_mission.c.id, _mission.c.stages).where(
                _mission.c.quest_id == row.quest_id, _mission.c.is_active
            )
        )
    }
    finals: dict[str, int] = {}
    for mission_id, stage in session.execute(
        sa.select(_conversion.c.mission_id, _conversion.c.stage).where(
            _conversion.c.quest_id == row.quest_id,
            _conversion.c.platform_user_id == row.platform_user_id,
            _conversion.c.status.in_([ConversionStatus.APPROVED, ConversionStatus.PENDING]),
        )
    ):
        if mission_id in missions and (stage is None or stage == missions[mission_id]):
            finals[mission_id] = finals.get(mission_id, 0) + 1
    if found is None or set(finals) != set(missions) or finals.get(spec.id) != 1:
        return None
    return {"id": row.quest_id, "name": found.name}


def _whole(number: float) -> float | int:
    return int(number) if float(number).is_integer() else number


_CLICK_OF = sa.select(_click.c.test, _click.c.country).where(
    _click.c.id == sa.bindparam("click_id")
)


@dataclass(frozen=True)
class _Money:
    """A conversion's economics as it stores them (docs/economics.md)."""

    payout_micros: int
    revenue_micros: int | None
    rule: str
    promotion: str | None
    multiplier: int


def _money(
    session: Session,
    row: ProgressRow,
    spec: MissionSpec,
    stage: int | None,
    country: str | None,
    now: datetime,
) -> _Money:
    """The payout by the one precedence (`economics.resolve`), a ladder stage's part of it
    and of the revenue, and the offerwall's promotion that applies at `now`."""
    terms = spec.terms or economics.Terms(spec.id, spec.payout_micros)
    rules = payout_rules.for_mission(session, row.offerwall_id, spec.id)
    resolved = economics.resolve(terms, rules, country)
    payout, revenue = resolved.payout_micros, terms.revenue_micros
    if stage is not None and terms.stages:
        payout = economics_terms.stage_payouts(payout, terms)[stage]
        if revenue is not None:
            revenue = economics_terms.portion(revenue, terms.stages, stage)
    sales = promotions.live_sales(session, [row.offerwall_id], now).get(row.offerwall_id)
    applied = None
    if sales:
        applied = economics.best(sales, now, country=country, first=False)
        if_first = economics.best(sales, now, country=country, first=True)
        # Only when a first-conversion promotion would win is the player's first asked.
        if if_first != applied and _first_conversion(session, row.platform_user_id):
            applied = if_first
    return _Money(
        payout,
        revenue,
        resolved.rule,
        None if applied is None else applied.name,
        100 if applied is None else applied.multiplier,
    )


def _first_conversion(session: Session, platform_user_id: str) -> bool:
    """Whether the player (at one offerwall) has no conversion yet that counts, asked
    under a lock on the player's row until the commit: of two conversions of one player
    decided at once (two missions in two batches), the second waits for the first and
    sees it (PostgreSQL's statements read what was committed before them; SQLite has one
    writer). FOR NO KEY UPDATE, as a click's no-op update of the player takes: rows that
    only refer to the player (progress, clicks) do not wait for it."""
    session.execute(
        sa.select(_platform_user.c.id)
        .where(_platform_user.c.id == platform_user_id)
        .with_for_update(key_share=True)
    )
    earlier = session.execute(
        sa.select(_conversion.c.id)
        .where(
            _conversion.c.platform_user_id == platform_user_id,
            _conversion.c.status.in_([ConversionStatus.APPROVED, ConversionStatus.PENDING]),
            sa.not_(_conversion.c.test),
        )
        .limit(1)
    ).first()
    return earlier is None


def _take_place(
    session: Session,
    spec: MissionSpec,
    offerwall_id: str,
    now: datetime,
    revenue_micros: int | None = None,
    drawn: list[list[str]] | None = None,
    places: list[list[str]] | None = None,
    full: list[str] | None = None,
) -> bool | None:
    """Count one more conversion of the mission under every cap it has, atomically: True
    when there was room under all of them (the counters raised besides the mission's own
    added to `places` as [scope, period]); False when its cap (or its cap for this
    offerwall) is reached for good, None when one of its period's is, the full counter's
    name added to `full` (`_counter`). The mission's row is taken first, as every
    conversion and give-back of it takes it (and as a batch locks its missions up front),
    then the counters; those raised before one that is full are lowered again, in the same
    transaction. The listings are told once all are taken."""
    raised = _raise_count(session, spec.id)
    if raised is None:
        if full is not None:
            full.append(LIFETIME)
        return False
    taken: list[tuple[str, str]] = []
    filled = raised
    for scope, period, limit in spec.cap_scopes(offerwall_id, now):
        count = _raise_cap_count(session, spec.id, scope, period, limit)
        if count is None:
            _give_back(session, spec.id, taken)
            if full is not None:
                full.append(_counter(scope, period))
            return False if period == "total" else None
        taken.append((scope, period))
        filled = filled or count >= limit
    spent = _spend(session, spec, revenue_micros or 0, now, [] if drawn is None else drawn)
    if spent is None:
        _give_back(session, spec.id, taken)
        return None  # a budget: the progress waits for the next period (or a raise)
    if places is not None:
        places.extend([scope, period] for scope, period in taken)
    if spent:
        filled = True
    if filled:
        # Full now (for good, for a period, at an offerwall, or by a budget): listings drop
        # it. The catalog's row is locked once, after every other row the batch takes.
        session.info[_BUMP_DUE] = True
    return True


def _spend(
    session: Session,
    spec: MissionSpec,
    revenue_micros: int,
    now: datetime,
    drawn: list[list[str]],
) -> bool | None:
    """Draw a conversion's revenue on the mission's budgets (docs/economics.md#budgets),
    naming each (scope, period) in `drawn`: None when one cannot take it (those drawn on
    before are given back), else whether a mission of one is now closed. The designers'
    mail is queued once every budget took it."""
    if not revenue_micros or not spec.charges:
        return False
    taken: list[tuple[budgets.Charge, str, int]] = []
    for charge in spec.charges:
        period = charge.budget.period(now)
        spent = budgets.spend(session, charge, revenue_micros, now)
        if spent is None:
            for earlier, earlier_period, _ in taken:
                budgets.give_back(session, earlier.scope, earlier_period, revenue_micros)
            return None
        taken.append((charge, period, spent))
    closes = False
    for charge, period, spent in taken:
        drawn.append([charge.scope, period])
        budgets.warn(session, charge, spent, now)
        closes = closes or charge.crossed(spent - revenue_micros, spent)
    return closes


def _raise_cap_count(
    session: Session, mission_id: str, scope: str, period: str, limit: int
) -> int | None:
    """One more under a cap's counter unless it is at `limit`: the new count, or None."""
    dialect = session.get_bind().dialect.name
    statement = dialect_insert(dialect, _cap_count).values(
        mission_id=mission_id, scope=scope, period=period, count=1
    )
    statement = statement.on_conflict_do_update(
        index_elements=("mission_id", "scope", "period"),
        set_={"count": _cap_count.c.count + 1},
        where=_cap_count.c.count < limit,
    ).returning(_cap_count.c.count)
    return session.execute(statement).scalar()


def _give_back(session: Session, mission_id: str, taken: list[tuple[str, str]]) -> None:
    """Lower the mission's conversions and the counters in `taken` by the one just raised."""
    session.execute(
        sa.update(_mission)
        .where(_mission.c.id == mission_id)
        .values(conversions=_mission.c.conversions - 1)
    )
    for scope, period in taken:
        session.execute(
            sa.update(_cap_count)
            .where(
                _cap_count.c.mission_id == mission_id,
                _cap_count.c.scope == scope,
                _cap_count.c.period == period,
            )
            .values(count=_cap_count.c.count - 1)
        )


def _raise_count(session: Session, mission_id: str) -> bool | None:
    """Count one more conversion of the mission unless its cap is reached (atomically):
    None when it is, else whether this one filled it."""
    raised = session.execute(
        sa.update(_mission)
        .where(
            _mission.c.id == mission_id,
            open_offers.under_cap_sql(_mission),
        )
        .values(conversions=_mission.c.conversions + 1)
        .returning(_mission.c.conversions, _mission.c.cap)
    ).first()
    if raised is None:
        return None
    return raised.cap is not None and raised.conversions >= raised.cap


# --- completions waiting for a place (docs/missions.md#caps) --------------------------

# The counter a mission's `cap` is (its `conversions`), as a waiting completion names it.
LIFETIME = "cap"
# How many waiting completions one freed place is offered to, in turn, before it is left
# to the next completion: one that cannot take it waits on another counter from then on.
_OFFERED = 20


def _counter(scope: str, period: str) -> str:
    """A cap counter's name as a waiting completion gives it: its period for the
    mission's period caps ("day:2026-11-28"), "total:<offerwall id>" for its cap at one
    offerwall."""
    return f"{period}:{scope}" if scope else period


def _wait(row: ProgressRow, counter: str, event: EngineEvent, now: datetime) -> None:
    """The row's completion waits on the full `counter`: in turn from when it first
    waited on it, with what its event said, to be paid as it would have been."""
    if row.waiting_on == counter and row.waiting_since is not None:
        return
    row.waiting_on, row.waiting_since = counter, now
    row.waiting_event = {
        "time": event.time.isoformat(),
        "arrived": (event.arrived or now).isoformat(),
        "country": event.country,
        "userId": event.user_id,
    }


def pay_waiting(
    session: Session,
    *,
    mission_id: str,
    places: Sequence[Sequence[str]],
    now: datetime,
    policy: Policy = DEFAULT_POLICY,
) -> bool:
    """Give the place a conversion taken back freed to the earliest completion waiting for
    it: one waiting on the mission's `cap`, or on a counter the conversion took (`places`,
    [scope, period]: its offerwall's cap, a period cap of a period still running), in the
    order they started waiting. It is paid by `_convert`, as the completion would have
    been when made (its checks as of `now`: an inactive or expired mission pays no one).
    True when one was paid. The caller holds the mission's row (it gave the place back)
    and bumps the catalog; rows another transaction holds are passed over, never waited
    for, since this one already holds the mission a batch takes after its rows."""
    spec = INDEX.current(session).missions.get(mission_id)
    if spec is None or spec.expired(now):
        return False
    running = {_counter(scope, period) for scope, period, _ in spec.cap_scopes("", now)}
    counters = {LIFETIME}
    for scope, period in places:
        name = _counter(scope, period)
        if period == "total" or name in running:
            counters.add(name)
    passed: list[int] = []
    try:
        for _ in range(_OFFERED):
            query = (
                sa.select(*(_progress.c[name] for name in _PROGRESS_COLUMNS))
                .where(
                    _progress.c.mission_id == mission_id,
                    _progress.c.waiting_on.in_(sorted(counters)),
                    _progress.c.status.in_([ProgressStatus.STARTED, ProgressStatus.CAPPED]),
                    _progress.c.id.not_in(passed),
                )
                .order_by(_progress.c.waiting_since, _progress.c.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            found = session.execute(query).first()
            if found is None:
                return False
            row = ProgressRow(*found)
            passed.append(row.id)
            if _pay(session, row, spec, now, policy):
                return True
        return False
    finally:
        session.info.pop(_BUMP_DUE, None)


def _pay(
    session: Session, row: ProgressRow, spec: MissionSpec, now: datetime, policy: Policy
) -> bool:
    """Convert a waiting row's completion now, and move the row on as `advance` would have
    (completed; a repeatable mission's next round; a ladder's next stage). A completion
    that no longer stands (a run broken since, a recurring mission's period over) waits
    no more."""
    saved = row.waiting_event or {}
    event = EngineEvent(
        "",
        datetime.fromisoformat(saved["time"]) if saved else now,
        None,
        None,
        0,
        saved.get("userId") or "",
        datetime.fromisoformat(saved["arrived"]) if saved else now,
        saved.get("country"),
    )
    over = row.resets_at is not None and row.resets_at <= now
    if not saved or over or not _stands(row, spec, event.time):
        row.waiting_on = row.waiting_since = row.waiting_event = None
        _save(session, [row], now)
        return False
    stage = row.completions % len(spec.stages) if spec.stages else None
    paid = _convert(session, row, spec, event, now, policy)
    if paid is False:
        row.status = ProgressStatus.CAPPED  # another cap, reached for good
    elif paid:
        last = stage is None or stage + 1 == len(spec.stages)
        if last and not spec.allow_multiple:
            row.status = ProgressStatus.COMPLETED
        else:
            row.status = ProgressStatus.STARTED
            if last:
                tally = next_round(spec.rule, Tally(row.count, row.run, row.total, row.state))
                row.count, row.run, row.total, row.state = (
                    tally.count,
                    tally.run,
                    tally.total,
                    tally.state,
                )
    _save(session, [row], now)
    return bool(paid)


def _stands(row: ProgressRow, spec: MissionSpec, moment: datetime) -> bool:
    """Whether the row's tally still reaches what it waits to be paid for: the rule's
    completion, or a ladder's next stage."""
    tally = Tally(row.count, row.run, row.total, row.state)
    if not spec.stages or (row.completions + 1) % len(spec.stages) == 0:
        return is_complete(spec.rule, tally)
    current, _ = progress(spec.rule, tally, moment)
    return current >= spec.stages[row.completions % len(spec.stages)][0]
