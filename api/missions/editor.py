"""The mission editor's and the quest builder's use cases: the editor's save (and the
new pool it names), the draft "Try on history" runs, the game's pools and event names
for its pickers, and the quest builder's missions.

Forms become definitions in `forms.py`, and are saved by `offers.py` like import
files: the portal adds no rules of its own."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session, col

from api.missions import offers
from api.missions.forms import FormError, from_form
from models import Event, Mission, Quest
from models.offer_schemas import MissionIn, PoolIn, QuestFields, mission_in, quest_fields

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
    in_quest = stored is not None and stored.quest_id is not None
    try:
        data = from_form(MissionIn, form, stored=mission_in(stored) if stored else None)
    except FormError as refused:  # named with the form's other problems, at once
        if in_quest and str(form.get("pool", "")).strip():
            raise FormError({"pool": IN_QUEST} | refused.errors) from None
        raise
    if data.pool is not None and in_quest:
        raise FormError({"pool": IN_QUEST})
    return data


IN_QUEST = "This mission is in a quest: a pooled mission is offered on its own."


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
