"""Players' progress on missions: evaluation at ingestion, replay on late linking,
and conversions (SERVICE.md 5).

Runs inside the ingestion transaction. Progress rows are locked (FOR UPDATE on
PostgreSQL; SQLite has one writer) so parallel requests never evaluate the same
progress twice, and a mission's conversion counter is raised with a conditional UPDATE,
so its cap holds under any concurrency.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from api.services.catalog import Catalog, MissionSpec
from api.services.rules import Tally, step
from models import Conversion, GameUser, Mission, Progress, ProgressStatus
from models.events import Event
from models.schemas import EventIn

_mission = Mission.__table__  # type: ignore[attr-defined]
_game_user = GameUser.__table__  # type: ignore[attr-defined]
_event = Event.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class EngineEvent:
    """An event as the rule engine sees it, with its place in arrival order."""

    event: str
    time: datetime
    value: float | None
    traits: dict[str, Any] | None
    order: int

    def as_mapping(self) -> dict[str, Any]:
        return {"event": self.event, "value": self.value, "traits": self.traits}


def evaluate_events(
    session: Session, *, catalog: Catalog, game_id: str, events: Sequence[EventIn], now: datetime
) -> int:
    """Evaluate a request's stored events against started progress; returns conversions made."""
    relevant = [(i, e) for i, e in enumerate(events) if catalog.for_event(game_id, e.event)]
    if not relevant:
        return 0
    users = {e.userId for _, e in relevant}
    links = dict(
        session.execute(
            sa.select(_game_user.c.user_id, _game_user.c.platform_user_id).where(
                _game_user.c.game_id == game_id,
                _game_user.c.user_id.in_(users),
                _game_user.c.platform_user_id.is_not(None),
            )
        ).all()
    )
    if not links:
        return 0
    by_player: dict[str, list[EngineEvent]] = defaultdict(list)
    for index, e in relevant:
        player = links.get(e.userId)
        if player is not None:
            by_player[player].append(EngineEvent(e.event, e.time, e.value, e.traits, index))
    mission_ids = {m.id for _, e in relevant for m in catalog.for_event(game_id, e.event)}
    made = 0
    for progress in _started(session, by_player.keys(), mission_ids):
        spec = catalog.missions[progress.mission_id]
        if spec.expired(now):
            continue
        ordered = sorted(by_player[progress.platform_user_id], key=lambda ev: (ev.time, ev.order))
        made += _advance(session, progress, spec, ordered, now=now, fresh=False)
    return made


def replay_for_link(
    session: Session, *, catalog: Catalog, game_id: str, platform_user_id: str, now: datetime
) -> int:
    """A game user was just linked to `platform_user_id`: evaluate the stored events of
    every game user of this game linked to that player, from each progress's start."""
    specs = {m.id: m for m in catalog.for_game(game_id)}
    if not specs:
        return 0
    progresses = _started(session, [platform_user_id], specs.keys())
    if not progresses:
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
    made = 0
    for progress in progresses:
        spec = specs[progress.mission_id]
        if spec.expired(now):
            continue
        rows = session.execute(
            sa.select(_event.c.name, _event.c.time, _event.c.value, _event.c.traits, _event.c.id)
            .where(
                _event.c.game_id == game_id,
                _event.c.user_id.in_(user_ids),
                _event.c.name == spec.rule.event,
                _event.c.time >= progress.started_at,
            )
            .order_by(_event.c.time, _event.c.id)
        ).all()
        events = [EngineEvent(r.name, r.time, r.value, r.traits, r.id) for r in rows]
        made += _advance(session, progress, spec, events, now=now, fresh=True)
    return made


def _started(session: Session, players: Iterable[str], missions: Iterable[str]) -> list[Progress]:
    players, missions = list(players), list(missions)
    if not players or not missions:
        return []
    query = (
        select(Progress)
        .where(
            Progress.platform_user_id.in_(players),  # type: ignore[attr-defined]
            Progress.mission_id.in_(missions),  # type: ignore[attr-defined]
            Progress.status == ProgressStatus.STARTED,
        )
        .order_by(Progress.id)  # type: ignore[arg-type]
        .with_for_update()
    )
    return list(session.exec(query))


def _advance(
    session: Session,
    progress: Progress,
    spec: MissionSpec,
    events: Sequence[EngineEvent],
    *,
    now: datetime,
    fresh: bool,
) -> int:
    """Run events through the rule. `fresh` recomputes from the start (late linking):
    completions already converted are recognised by their number and not paid again."""
    tally = Tally() if fresh else Tally(progress.count, progress.run, progress.total)
    reached = 0 if fresh else progress.completions
    made = 0
    for event in events:
        if event.time < progress.started_at:
            continue
        if progress.expires_at is not None and event.time > progress.expires_at:
            progress.status = ProgressStatus.EXPIRED
            break
        result = step(spec.rule, tally, event.as_mapping())
        tally = result.tally
        if not result.completed:
            continue
        reached += 1
        if reached > progress.completions:
            if not _convert(session, progress, spec, now):
                progress.status = ProgressStatus.CAPPED
                break
            made += 1
        if not spec.allow_multiple:
            progress.status = ProgressStatus.COMPLETED
            break
        tally = Tally()  # a repeatable mission starts again from zero
    progress.count, progress.run, progress.total = tally.count, tally.run, tally.total
    progress.updated_at = now
    session.add(progress)
    session.flush()
    return made


def _convert(session: Session, progress: Progress, spec: MissionSpec, now: datetime) -> bool:
    """Record a conversion unless the mission's cap is reached (atomically)."""
    raised = session.execute(
        sa.update(_mission)
        .where(
            _mission.c.id == spec.id,
            sa.or_(_mission.c.cap.is_(None), _mission.c.conversions < _mission.c.cap),
        )
        .values(conversions=_mission.c.conversions + 1)
    )
    if raised.rowcount != 1:  # type: ignore[attr-defined]
        return False
    progress.completions += 1
    assert progress.id is not None
    session.add(
        Conversion(
            progress_id=progress.id,
            sequence=progress.completions,
            mission_id=spec.id,
            quest_id=progress.quest_id,
            platform_user_id=progress.platform_user_id,
            offerwall_id=progress.offerwall_id,
            click_id=progress.click_id,
            payout_micros=spec.payout_micros,
            created_at=now,
        )
    )
    return True
