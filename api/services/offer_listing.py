"""GET /offerwall/offers (SERVICE.md 8): what an approved offerwall may list.

Standalone missions and quests, newest first, in one combined list that pages cut across.
Only active, unexpired, uncapped offers; missions inside a quest appear only inside it.
Payouts are in the offerwall's currency; tracking links carry its owid.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from api.core.crypto import SecretBox
from api.core.errors import ApiError
from api.services.offerwalls import find_by_api_key
from models import Mission, Offerwall, OfferwallStatus, Quest

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
_mission = Mission.__table__  # type: ignore[attr-defined]
_quest = Quest.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Page:
    limit: int
    offset: int


def parse_page(limit: str | None, offset: str | None) -> Page:
    """limit (default 20, clamped to 100) and offset (default 0); 400 when not a whole
    number of at least 0."""
    values = []
    for name, raw, default in (("limit", limit, DEFAULT_LIMIT), ("offset", offset, 0)):
        if raw is None or raw == "":
            values.append(default)
            continue
        if not raw.isascii() or not raw.isdigit():
            raise ApiError(
                400,
                "invalid_parameter",
                f"{name} must be a whole number of at least 0.",
                [{"path": name, "value": raw[:50]}],
            )
        values.append(int(raw))
    return Page(limit=min(values[0], MAX_LIMIT), offset=values[1])


def approved_offerwall(*, session: Session, box: SecretBox, api_key: str | None) -> Offerwall:
    """The offerwall of an API key: 401 missing or unknown, 403 not approved."""
    offerwall = find_by_api_key(session=session, box=box, api_key=api_key) if api_key else None
    if offerwall is None:
        raise ApiError(401, "invalid_api_key", "The x-api-key header is missing or not valid.")
    if offerwall.status != OfferwallStatus.APPROVED:
        raise ApiError(
            403,
            "offerwall_not_approved",
            f"This offerwall is {offerwall.status}; only an approved offerwall lists offers.",
        )
    return offerwall


def _open_mission(now: datetime) -> Any:
    return sa.and_(
        _mission.c.is_active,
        sa.or_(_mission.c.expiration_date.is_(None), _mission.c.expiration_date > now),
        sa.or_(_mission.c.cap.is_(None), _mission.c.conversions < _mission.c.cap),
    )


def list_offers(
    *,
    session: Session,
    offerwall: Offerwall,
    page: Page,
    base_url: str,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The offers envelope of the original spec, for one page."""
    now = now or datetime.now(UTC)
    open_mission = _open_mission(now)
    inner = _mission.alias("inner")
    quest_has_open_mission = sa.exists().where(
        inner.c.quest_id == _quest.c.id,
        inner.c.is_active,
        sa.or_(inner.c.expiration_date.is_(None), inner.c.expiration_date > now),
        sa.or_(inner.c.cap.is_(None), inner.c.conversions < inner.c.cap),
    )
    standalone = sa.select(
        _mission.c.id, _mission.c.created_at, sa.literal("mission").label("kind")
    ).where(_mission.c.quest_id.is_(None), open_mission)
    quests = sa.select(_quest.c.id, _quest.c.created_at, sa.literal("quest").label("kind")).where(
        _quest.c.is_active,
        sa.or_(_quest.c.expiration_date.is_(None), _quest.c.expiration_date > now),
        sa.or_(_quest.c.start_cap.is_(None), _quest.c.starts < _quest.c.start_cap),
        quest_has_open_mission,
    )
    offers = sa.union_all(standalone, quests).subquery("offers")
    total = session.execute(sa.select(sa.func.count()).select_from(offers)).scalar_one()
    rows = (
        session.execute(
            sa.select(offers.c.id, offers.c.kind)
            .order_by(offers.c.created_at.desc(), offers.c.id.desc())
            .limit(page.limit)
            .offset(page.offset)
        ).all()
        if page.limit
        else []
    )
    mission_ids = [r.id for r in rows if r.kind == "mission"]
    quest_ids = [r.id for r in rows if r.kind == "quest"]
    missions = {m.id: m for m in _load(session, Mission, mission_ids)}
    quest_rows = {q.id: q for q in _load(session, Quest, quest_ids)}
    inside: dict[str, list[Mission]] = {q: [] for q in quest_ids}
    if quest_ids:
        query = (
            sa.select(Mission)
            .where(_mission.c.quest_id.in_(quest_ids), open_mission)
            .order_by(_mission.c.quest_position)
        )
        for m in session.scalars(query):
            inside[str(m.quest_id)].append(m)
    money = _Money(offerwall)
    owid = offerwall.owid
    return {
        "statusCode": 200,
        "message": "OK",
        "total": total,
        "offset": page.offset,
        "limit": page.limit,
        "data": {
            "missions": [_mission_json(missions[i], money, base_url, owid) for i in mission_ids],
            "quests": [
                _quest_json(quest_rows[i], inside[i], money, base_url, owid) for i in quest_ids
            ],
        },
    }


def _load(session: Session, model: Any, ids: list[str]) -> list[Any]:
    if not ids:
        return []
    return list(session.scalars(sa.select(model).where(model.__table__.c.id.in_(ids))))


class _Money:
    """USD micros → the offerwall's currency, rounded to its decimals."""

    def __init__(self, offerwall: Offerwall):
        self.rate = Decimal(str(offerwall.exchange_rate))
        self.quantum = Decimal(1).scaleb(-offerwall.currency_decimals)

    def __call__(self, payout_micros: int) -> float:
        usd = Decimal(payout_micros) / Decimal(1_000_000)
        return float((usd * self.rate).quantize(self.quantum, rounding=ROUND_HALF_UP))


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _geo(offer: Mission | Quest) -> dict[str, list[str]]:
    return {
        "countriesInclude": offer.countries_include,
        "countriesExclude": offer.countries_exclude,
    }


def _mission_json(m: Mission, money: _Money, base_url: str, owid: str | None) -> dict[str, Any]:
    return {
        "id": m.id,
        "title": m.title,
        "description": m.description,
        "thumbnail": m.thumbnail,
        "expirationDate": _iso(m.expiration_date),
        "previewUrl": m.preview_url,
        "trackingLink": f"{base_url}/missions/{m.id}?owid={owid}",
        "payout": money(m.payout_micros),
        "cap": m.cap,
        "isActive": m.is_active,
        "operatingSystem": m.operating_systems,
        "geotargeting": _geo(m),
        "tags": m.tags,
        "instructions": m.instructions,
        "requirements": m.requirements,
        "allowMultipleConversions": m.allow_multiple_conversions,
    }


def _quest_json(
    q: Quest, missions: list[Mission], money: _Money, base_url: str, owid: str | None
) -> dict[str, Any]:
    return {
        "id": q.id,
        "name": q.name,
        "description": q.description,
        "thumbnail": q.thumbnail,
        "expirationDate": _iso(q.expiration_date),
        "trackingLink": f"{base_url}/quests/{q.id}?owid={owid}",
        "previewUrl": q.preview_url,
        "startCap": q.start_cap,
        "isActive": q.is_active,
        "operatingSystem": q.operating_systems,
        "tags": q.tags,
        "geotargeting": _geo(q),
        "instructions": q.instructions,
        "requirements": q.requirements,
        "missions": [
            {
                "id": m.id,
                "title": m.title,
                "description": m.description,
                "payout": money(m.payout_micros),
                "cap": m.cap,
                "instructions": m.instructions,
                "requirements": m.requirements,
                "allowMultipleConversions": m.allow_multiple_conversions,
            }
            for m in missions
        ],
    }
