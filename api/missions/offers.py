"""Missions and quests: the one owner of their rules. Import files, the CLI and the portal's
editor all save through `save_mission` and `save_quest`, and read a stored offer back as its
definition through `models.offer_schemas` (`mission_in`, `quest_in`). Every change bumps
the catalog version, so every process's mission index follows it.

Quest membership, the same from every caller: a quest has at least one mission; a mission
belongs to the quest's game and to at most one quest (one already in another quest is
refused: take it out there first); missions taken out of a quest become standalone again.
Saving a mission on its own never changes its quest."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson
import sqlalchemy as sa
from sqlmodel import Session, col, select

from api import audit
from api.core.refusals import DomainError
from api.economics import budgets
from api.missions import index, open_offers
from api.missions.rules import Rule, RuleError, Tally, progress
from models import Game, Mission, MissionPool, Progress, ProgressStatus, Quest
from models.offer_schemas import (
    RULE_COLUMNS,
    MissionIn,
    OffersFile,
    PoolIn,
    QuestFields,
    QuestIn,
    mission_in,
    offer_columns,
    quest_fields,
    quest_in,
    stored_rule,
)
from models.types import utcnow


class OfferError(DomainError, ValueError):
    """An offer that cannot be saved as given; `field` is the definition's field path it is
    about ("form" when it is about the whole)."""

    def __init__(self, message: str, *, field: str = "form"):
        super().__init__(message, field)

    @property
    def errors(self) -> dict[str, str]:
        """The message under the input it is about, as a form shows it."""
        return {self.field or "form": str(self)}


def check_rule(data: MissionIn) -> Rule:
    """The engine's own checks of a mission's rule, beyond the schema's."""
    try:
        return Rule.from_input(data.rule)
    except RuleError as exc:
        raise OfferError(f"mission {data.title!r}: {exc}", field="rule") from None


def rule_of(row: Any) -> Rule:
    """The engine's rule of a stored mission, or of a row with its `RULE_COLUMNS` (as
    listings read them beside a player's progress); the same columns give the same rule
    once."""
    return _rule_of(orjson.dumps([getattr(row, name) for name in RULE_COLUMNS]))


def mission_rule(mission: Mission) -> Rule:
    """The engine's rule of a stored mission."""
    return rule_of(mission)


@lru_cache(maxsize=4096)
def _rule_of(columns: bytes) -> Rule:
    return Rule.from_input(stored_rule(*orjson.loads(columns)))


def standing(
    rule: Rule, count: int, run: int, total: float, state: Any, now: datetime
) -> tuple[float, float]:
    """(current, target) of a player's stored progress on a rule at `now`: what the offers
    API and the wall show (events, days in a row, a total or best value, steps done, …)."""
    return progress(rule, Tally(count or 0, run or 0, float(total or 0), state), now)


def save_mission(
    *,
    session: Session,
    game_id: str,
    data: MissionIn,
    now: datetime | None = None,
    imported: bool = False,
) -> Mission:
    """Create a mission, or update the one with `data.id` (of this game). A new mission is
    standalone; an existing one stays in its quest. One put in its pool, or opened again
    in it, joins the pool's draw at `now` (an import file's missions at the same moment).

    A rule changed in what its players' progress keeps (`Rule.kept`: the kind, its field,
    the group, the window, the steps, the time zone) starts their progress again, since
    what was kept meant something else; a new threshold or new conditions keep it."""
    rule = check_rule(data)
    if data.pool is not None and pool_named(session, game_id, data.pool) is None:
        raise OfferError(
            f"mission {data.title!r}: no pool named {data.pool} in this game; "
            "define it under pools first",
            field="pool",
        )
    before = _existing(session, Mission, data.id, game_id) if data.id else None
    if data.pool is not None and before is not None and before.quest_id is not None:
        raise OfferError(
            f"mission {data.title!r} is in a quest: a pooled mission is offered on its own; "
            "take it out of the quest first",
            field="pool",
        )
    kept_before = mission_rule(before).kept if before is not None else None
    now = now or utcnow()
    drawn_before = (
        before is not None and before.pool == data.pool and open_offers.running(before, now)
    )
    mission = _saved(session, Mission, game_id, data, imported)
    if mission.pool is None:
        mission.pool_since = None
    elif not drawn_before:
        mission.pool_since = now  # joins its pool's draw at the next period
    if kept_before is not None and kept_before != rule.kept:
        session.execute(
            sa.update(Progress)
            .where(
                col(Progress.mission_id) == mission.id,
                col(Progress.status) == ProgressStatus.STARTED,
            )
            .values(count=0, run=0, total=0, state=None, updated_at=utcnow())
        )
    index.bump(session)
    return mission


def save_quest(
    *, session: Session, game_id: str, data: QuestFields, mission_ids: Sequence[str] = ()
) -> Quest:
    """Create or update a quest and set its missions, in order: those of an import file's
    `QuestIn` (saved first), or the game's existing missions named by id (the editor)."""
    imported = isinstance(data, QuestIn)
    if isinstance(data, QuestIn):
        mission_ids = [
            save_mission(session=session, game_id=game_id, data=m, imported=True).id
            for m in data.missions
        ]
    if not mission_ids:
        raise OfferError("a quest needs at least one mission", field="missions")
    pooled = session.scalars(
        sa.select(col(Mission.title)).where(
            col(Mission.id).in_(list(mission_ids)), col(Mission.pool).is_not(None)
        )
    ).first()
    if pooled is not None:
        raise OfferError(
            f"{pooled} rotates in a pool: a pooled mission is offered on its own, not in a quest",
            field="missions",
        )
    earlier = _existing(session, Quest, data.id, game_id) if data.id else None
    before = list(session.scalars(_quest_missions(earlier.id))) if earlier is not None else []
    missions = ({"missions": before}, {"missions": list(mission_ids)})
    quest = _saved(session, Quest, game_id, data, imported, missions)
    _set_missions(session, quest, list(mission_ids))
    index.bump(session)
    return quest


def _quest_missions(quest_id: str) -> sa.Select:
    return (
        sa.select(col(Mission.id))
        .where(col(Mission.quest_id) == quest_id)
        .order_by(col(Mission.quest_position))
    )


def _saved(
    session: Session,
    model: type[Mission] | type[Quest],
    game_id: str,
    data: Any,
    imported: bool = False,
    also: tuple[dict[str, Any], dict[str, Any]] = ({}, {}),
) -> Any:
    """Create or update the offer, recorded with each changed column before and after
    (a mission's rule among them; `also`: more of the change, a quest's missions)."""
    fields = offer_columns(data)
    offer = _existing(session, model, data.id, game_id)
    kind = "mission" if model is Mission else "quest"
    if offer is None:
        before: dict[str, Any] = {}
        offer = model(game_id=game_id, **fields, **({"id": data.id} if data.id else {}))
        action = f"{kind}.imported" if imported else f"{kind}.created"
    else:
        before = {key: getattr(offer, key) for key in fields}
        for key, value in fields.items():
            setattr(offer, key, value)
        if before != fields:  # saved unchanged: no write, no event
            offer.updated_at = utcnow()
        action = f"{kind}.imported" if imported else f"{kind}.edited"
    session.add(offer)
    session.flush()
    _note_offer(session, offer, action, before | also[0], fields | also[1])
    return offer


def _note_offer(
    session: Session,
    offer: Mission | Quest | MissionPool,
    action: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """An audit event of a mission, quest or pool, in its game's studio's scope."""
    game = session.get(Game, offer.game_id)
    studio_id = game.studio_id if game is not None else None
    name = offer.title if isinstance(offer, Mission) else offer.name
    target = audit.Target.of_studio(action.split(".")[0], offer.id, name, studio_id)
    audit.note_changed(session, action, target, before, after)


def _set_missions(session: Session, quest: Quest, mission_ids: list[str]) -> None:
    chosen = session.scalars(
        sa.select(Mission).where(
            col(Mission.id).in_(mission_ids), col(Mission.game_id) == quest.game_id
        )
    ).all()
    by_id = {m.id: m for m in chosen}
    if set(by_id) != set(mission_ids):
        raise OfferError("a chosen mission is not one of this game's", field="missions")
    for mission in by_id.values():
        if mission.quest_id not in (None, quest.id):
            raise OfferError(f"{mission.title} is in another quest", field="missions")
    for m in session.scalars(sa.select(Mission).where(col(Mission.quest_id) == quest.id)):
        if m.id not in by_id:
            m.quest_id, m.quest_position = None, 0
    for position, mission_id in enumerate(mission_ids):
        by_id[mission_id].quest_id, by_id[mission_id].quest_position = quest.id, position
    session.flush()


def pool_named(session: Session, game_id: str, name: str) -> MissionPool | None:
    return session.exec(
        select(MissionPool).where(MissionPool.game_id == game_id, MissionPool.name == name)
    ).first()


def save_pool(*, session: Session, game_id: str, data: PoolIn) -> MissionPool:
    """Create the game's pool of this name, or change its size and period."""
    found = pool_named(session, game_id, data.name)
    pool = found or MissionPool(game_id=game_id, name=data.name)
    before = pool_in(found).model_dump(mode="json") if found is not None else {}
    pool.size, pool.every = data.size, data.every
    pool.time_zone, pool.week_starts_on = data.timeZone, data.weekStartsOn
    session.add(pool)
    session.flush()
    action = "pool.edited" if found is not None else "pool.created"
    _note_offer(session, pool, action, before, data.model_dump(mode="json"))
    index.bump(session)
    return pool


def game_pools(*, session: Session, game_id: str) -> list[MissionPool]:
    return list(
        session.exec(
            select(MissionPool).where(MissionPool.game_id == game_id).order_by(MissionPool.name)
        )
    )


def pool_in(pool: MissionPool) -> PoolIn:
    return PoolIn(
        name=pool.name,
        size=pool.size,
        every=pool.every,
        timeZone=pool.time_zone,
        weekStartsOn=pool.week_starts_on,
    )


def import_offers(*, session: Session, data: OffersFile) -> tuple[list[Mission], list[Quest]]:
    """Create or update every pool, mission and quest of an import file, in one
    transaction."""
    if session.get(Game, data.gameId) is None:
        raise OfferError(f"no game with id {data.gameId}")
    if data.budget is not None:
        budgets.set_game_budget(session, data.gameId, data.budget)
    for pool in data.pools:
        save_pool(session=session, game_id=data.gameId, data=pool)
    now = utcnow()
    missions = [
        save_mission(session=session, game_id=data.gameId, data=m, now=now, imported=True)
        for m in data.missions
    ]
    quests = [save_quest(session=session, game_id=data.gameId, data=q) for q in data.quests]
    return missions, quests


def export_offers(*, session: Session, game_id: str) -> OffersFile:
    """A game's missions and quests as an import file that saves them again unchanged."""
    missions, quests = list_offers(session=session, game_id=game_id)
    inside: dict[str, list[Mission]] = {q.id: [] for q in quests}
    for m in sorted(missions, key=lambda m: m.quest_position):
        if m.quest_id is not None:
            inside[m.quest_id].append(m)
    game = session.get(Game, game_id)
    return OffersFile(
        gameId=game_id,
        budget=game.budget if game is not None else None,
        pools=[pool_in(p) for p in game_pools(session=session, game_id=game_id)],
        missions=[mission_in(m) for m in missions if m.quest_id is None],
        quests=[quest_in(q, inside[q.id]) for q in quests],
    )


def mission_of_game(*, session: Session, game_id: str, mission_id: str) -> Mission:
    """The game's mission with this id; another game's answers like a missing one."""
    mission = session.get(Mission, mission_id)
    if mission is None or mission.game_id != game_id:
        raise OfferError("No such mission.")
    return mission


def quest_of_game(*, session: Session, game_id: str, quest_id: str) -> Quest:
    """The game's quest with this id; another game's answers like a missing one."""
    quest = session.get(Quest, quest_id)
    if quest is None or quest.game_id != game_id:
        raise OfferError("No such quest.")
    return quest


def set_active(
    *, session: Session, kind: str, offer_id: str, active: bool, game_id: str | None = None
) -> Mission | Quest:
    """Activate or deactivate a mission or quest (of `game_id`, when given)."""
    offer: Mission | Quest | None = (
        session.get(Mission, offer_id) if kind == "mission" else session.get(Quest, offer_id)
    )
    if offer is None or (game_id is not None and offer.game_id != game_id):
        raise OfferError(f"no {kind} with id {offer_id}")
    if isinstance(offer, Mission) and offer.pool is not None and active and not offer.is_active:
        offer.pool_since = utcnow()  # opened again: in its pool's draw from the next period
    _note_offer(
        session,
        offer,
        f"{kind}.{'activated' if active else 'archived'}",
        {"is_active": offer.is_active},
        {"is_active": active},
    )
    offer.is_active = active
    offer.updated_at = utcnow()
    session.add(offer)
    session.flush()
    index.bump(session)
    return offer


def list_offers(
    *, session: Session, game_id: str | None = None
) -> tuple[list[Mission], list[Quest]]:
    missions = select(Mission).order_by(Mission.created_at)  # type: ignore[arg-type]
    quests = select(Quest).order_by(Quest.created_at)  # type: ignore[arg-type]
    if game_id:
        missions = missions.where(Mission.game_id == game_id)
        quests = quests.where(Quest.game_id == game_id)
    return list(session.exec(missions)), list(session.exec(quests))


def listing(*, session: Session, game_id: str | None = None) -> dict[str, Any]:
    """The CLI's listing: each pool, and each offer as its definition, with its game and its
    state."""
    missions, quests = list_offers(session=session, game_id=game_id)
    pools = select(MissionPool).order_by(MissionPool.game_id, MissionPool.name)
    if game_id:
        pools = pools.where(MissionPool.game_id == game_id)
    return {
        "pools": [
            {**pool_in(p).model_dump(mode="json"), "gameId": p.game_id} for p in session.exec(pools)
        ],
        "missions": [
            {
                **mission_in(m).model_dump(mode="json"),
                "gameId": m.game_id,
                "questId": m.quest_id,
                "conversions": m.conversions,
            }
            for m in missions
        ],
        "quests": [
            {
                **quest_fields(q).model_dump(mode="json"),
                "gameId": q.game_id,
                "starts": q.starts,
            }
            for q in quests
        ],
    }


def _existing(
    session: Session, model: type[Mission] | type[Quest], offer_id: str | None, game_id: str
) -> Any:
    if offer_id is None:
        return None
    found: Any = session.get(model, offer_id)
    if found is not None and found.game_id != game_id:
        raise OfferError(f"{offer_id} belongs to another game")
    return found
