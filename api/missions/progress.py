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
in which rows are taken; split, the lock order would be spread over files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY
from sqlmodel import Session

from api.core.driver import DriverStatement, from_db_json, from_db_time
from api.fraud import DEFAULT_POLICY, Policy
from api.fraud import policy as fraud
from api.missions import open_offers
from api.missions.index import MissionIndex, MissionSpec, bump
from api.missions.rules import Tally, next_round, step
from api.postbacks import outbox as postbacks
from models import ConversionStatus, PostbackKind, ProgressStatus
from models.schemas import EventIn
from models.tables import PROGRESS_STATE
from models.tables import cheat_flag as _cheat_flag
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import event as _event
from models.tables import game_user as _game_user
from models.tables import mission as _mission
from models.tables import progress as _progress
from models.types import new_uuid

_PROGRESS_COLUMNS = ("id", *PROGRESS_STATE, "rate_minute", "rate_count", "state")


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
    rate_minute: int = 0
    rate_count: int = 0
    state: Any = None  # what the richer kinds keep (rules.Tally.state)


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
            columns[-1] = from_db_json(columns[-1])  # state
            row = by_id[columns[0]] = ProgressRow(*columns)
        users_of[row.platform_user_id].add(user_id)
    if not by_id:
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
        mine, names = player_events[row.platform_user_id]
        if spec.rule.events.isdisjoint(names):
            continue  # nothing in this batch for this mission
        runs.append(Run(row, spec, mine, fresh=False))
    before = {id(r.row): _state(r.row) for r in runs}
    made = _advance_all(session, runs, now, policy)
    _save(session, [r.row for r in runs if _state(r.row) != before[id(r.row)]], now)
    return made


def _state(row: ProgressRow) -> tuple[Any, ...]:
    return (row.status, row.count, row.run, row.total, row.state, row.completions, *_rate(row))


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
    rows = _started(session, [platform_user_id], specs.keys())
    if not rows:
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
    runs: list[Run] = []
    for row in rows:
        spec = specs[row.mission_id]
        if spec.expired(now):
            continue
        stored = session.execute(
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
                _event.c.time >= row.started_at,
            )
            .order_by(_event.c.time, _event.c.id)
        ).all()
        events = [EngineEvent(*r) for r in stored]
        runs.append(Run(row, spec, events, fresh=True))
    made = _advance_all(session, runs, now, policy)
    _save(session, rows, now)
    return made


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
            if advance(replace(run.row), run, convert=lambda *_: True, flag=lambda *_: None)
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

    def convert(row: ProgressRow, spec: MissionSpec, event: EngineEvent) -> bool:
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
    return made


def advance(
    row: ProgressRow,
    run: Run,
    *,
    convert: Callable[[ProgressRow, MissionSpec, EngineEvent], bool],
    flag: Callable[[ProgressRow, MissionSpec, EngineEvent, str, str], None],
) -> int:
    """Run the run's events through the rule on `row`, calling `convert` for each new
    completion. `fresh` recomputes from the start (late linking): completions already
    converted are recognised by their number and not paid again. An event of the rule
    that breaks one of the mission's anti-cheat limits does not count; `flag` records it."""
    spec, events, fresh = run.spec, run.events, run.fresh
    tally = Tally() if fresh else Tally(row.count, row.run, row.total, row.state)
    reached = 0 if fresh else row.completions
    if fresh:
        row.rate_minute, row.rate_count = 0, 0
    made = 0
    for event in events:
        if event.time < row.started_at:
            continue
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
        if not result.completed:
            continue
        reached += 1
        if reached > row.completions:
            if not convert(row, spec, event):
                row.status = ProgressStatus.CAPPED
                break
            made += 1
        if not spec.allow_multiple:
            row.status = ProgressStatus.COMPLETED
            break
        tally = next_round(spec.rule, tally)  # a repeatable mission starts again
    row.count, row.run, row.total, row.state = tally.count, tally.run, tally.total, tally.state
    return made


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
) -> bool:
    """Record a conversion unless the mission's cap is reached (atomically). A held one
    (docs/fraud.md#the-review-queue) is pending, without its postback, and counts against
    the cap like any other, so approvals can never overshoot it. The test player's
    (its click's `test`) is never held and takes no place under the cap: it is not paid."""
    test = bool(session.execute(_CLICK_IS_TEST, {"click_id": row.click_id}).scalar_one())
    if not test and not _raise_count(session, spec.id):
        return False

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
    conversion_id = session.execute(
        _conversion.insert()
        .values(
            transaction_id=new_uuid(),
            progress_id=row.id,
            sequence=row.completions,
            mission_id=spec.id,
            quest_id=row.quest_id,
            platform_user_id=row.platform_user_id,
            offerwall_id=row.offerwall_id,
            click_id=row.click_id,
            payout_micros=spec.payout_micros,
            created_at=now,
            status=ConversionStatus.PENDING if held else ConversionStatus.APPROVED,
            signals=assessed.signals or None,
            review_due_at=policy.review_due(now) if held else None,
            test=test,
        )
        .returning(_conversion.c.id)
    ).scalar_one()
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


_CLICK_IS_TEST = sa.select(_click.c.test).where(_click.c.id == sa.bindparam("click_id"))


def _raise_count(session: Session, mission_id: str) -> bool:
    """Count one more conversion of the mission unless its cap is reached (atomically);
    False when it is."""
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
        return False
    if raised.cap is not None and raised.conversions >= raised.cap:
        bump(session)  # capped now: offer listings drop it
    return True
