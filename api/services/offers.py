"""Missions and quests: create, update, import, activate, list. Every change bumps the
catalog version, so every process's mission index follows it."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from api.services import catalog
from api.services.errors import DomainError
from api.services.rules import Rule, RuleError
from models import Game, Mission, Quest
from models.offer_schemas import CatalogFile, MissionIn, QuestIn, _OfferCommon
from models.types import utcnow


class OfferError(DomainError, ValueError):
    """An offer that cannot be saved as given."""


def _common_fields(data: _OfferCommon) -> dict[str, Any]:
    return {
        "description": data.description,
        "thumbnail": data.thumbnail,
        "preview_url": data.previewUrl,
        "destination_url": data.destinationUrl,
        "expiration_date": data.expirationDate,
        "is_active": data.isActive,
        "operating_systems": data.operatingSystem,
        "countries_include": data.geotargeting.countriesInclude,
        "countries_exclude": data.geotargeting.countriesExclude,
        "tags": data.tags,
        "instructions": data.instructions,
        "requirements": data.requirements,
    }


def _mission_fields(data: MissionIn) -> dict[str, Any]:
    rule = data.rule
    try:
        Rule.build(
            event=rule.event,
            conditions=[c.model_dump() for c in rule.conditions],
            completion=rule.completion.kind,
            threshold=rule.completion.threshold,
            sum_field=rule.completion.field,
        )
    except RuleError as exc:
        raise OfferError(f"mission {data.title!r}: {exc}") from None
    return {
        **_common_fields(data),
        "title": data.title,
        "payout_micros": data.payout_micros,
        "cap": data.cap,
        "allow_multiple_conversions": data.allowMultipleConversions,
        "time_limit_seconds": data.timeLimitSeconds,
        "rule_event": rule.event,
        "rule_conditions": [c.model_dump(exclude_none=True) for c in rule.conditions],
        "rule_completion": rule.completion.kind,
        "rule_threshold": rule.completion.threshold,
        "rule_sum_field": rule.completion.field if rule.completion.kind == "sum" else None,
    }


def save_mission(
    *,
    session: Session,
    game_id: str,
    data: MissionIn,
    quest_id: str | None = None,
    position: int = 0,
) -> Mission:
    """Create a mission, or update the one with `data.id`."""
    fields = _mission_fields(data)
    mission = _existing(session, Mission, data.id, game_id)
    if mission is None:
        mission = (
            Mission(id=data.id, game_id=game_id, **fields)
            if data.id
            else Mission(game_id=game_id, **fields)
        )
    else:
        for key, value in fields.items():
            setattr(mission, key, value)
        mission.updated_at = utcnow()
    mission.quest_id, mission.quest_position = quest_id, position
    session.add(mission)
    session.flush()
    catalog.bump(session)
    return mission


def save_quest(*, session: Session, game_id: str, data: QuestIn) -> Quest:
    """Create a quest with its missions, or update the one with `data.id`."""
    fields = {**_common_fields(data), "name": data.name, "start_cap": data.startCap}
    quest = _existing(session, Quest, data.id, game_id)
    if quest is None:
        quest = (
            Quest(id=data.id, game_id=game_id, **fields)
            if data.id
            else Quest(game_id=game_id, **fields)
        )
    else:
        for key, value in fields.items():
            setattr(quest, key, value)
        quest.updated_at = utcnow()
    session.add(quest)
    session.flush()
    for position, mission in enumerate(data.missions):
        save_mission(
            session=session, game_id=game_id, data=mission, quest_id=quest.id, position=position
        )
    return quest


def import_catalog(*, session: Session, data: CatalogFile) -> tuple[list[Mission], list[Quest]]:
    """Create or update every mission and quest of an import file, in one transaction."""
    if session.get(Game, data.gameId) is None:
        raise OfferError(f"no game with id {data.gameId}")
    missions = [save_mission(session=session, game_id=data.gameId, data=m) for m in data.missions]
    quests = [save_quest(session=session, game_id=data.gameId, data=q) for q in data.quests]
    return missions, quests


def set_active(*, session: Session, kind: str, offer_id: str, active: bool) -> Mission | Quest:
    """Activate or deactivate a mission or quest."""
    offer: Mission | Quest | None = (
        session.get(Mission, offer_id) if kind == "mission" else session.get(Quest, offer_id)
    )
    if offer is None:
        raise OfferError(f"no {kind} with id {offer_id}")
    offer.is_active = active
    offer.updated_at = utcnow()
    session.add(offer)
    session.flush()
    catalog.bump(session)
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


def _existing(
    session: Session, model: type[Mission] | type[Quest], offer_id: str | None, game_id: str
) -> Any:
    if offer_id is None:
        return None
    found: Any = session.get(model, offer_id)
    if found is not None and found.game_id != game_id:
        raise OfferError(f"{offer_id} belongs to another game")
    return found
