"""Tracking links (SERVICE.md 6): record the click, start the progress, redirect."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import sqlalchemy as sa
from sqlalchemy import Connection
from sqlalchemy.engine import Row

from api.core.sql import get_or_create, insert_ignore
from api.services.geo import CountryLookup, detect_os
from models import (
    Click,
    Mission,
    Offerwall,
    OfferwallStatus,
    PlatformUser,
    Progress,
    ProgressStatus,
    Quest,
)
from models.types import new_uuid

MAX_PARAM = 255
SUB_NAMES = ("platform_sub1", "platform_sub2", "platform_sub3")
_platform_users = PlatformUser.__table__  # type: ignore[attr-defined]
_progress = Progress.__table__  # type: ignore[attr-defined]
_quest = Quest.__table__  # type: ignore[attr-defined]
_click = Click.__table__  # type: ignore[attr-defined]


_offerwall = Offerwall.__table__  # type: ignore[attr-defined]
_mission = Mission.__table__  # type: ignore[attr-defined]

# Built once: a click runs these on every request.
_OFFER_COLUMNS = (
    "id",
    "destination_url",
    "expiration_date",
    "is_active",
    "operating_systems",
    "countries_include",
    "countries_exclude",
)
# The offer and the offerwall in one statement (the offerwall's columns are NULL when
# no offerwall has that owid).
_OFFERWALL_JOIN = (
    _offerwall.c.id.label("offerwall_id"),
    _offerwall.c.status.label("offerwall_status"),
)
_FIND_MISSION = (
    sa.select(
        *(_mission.c[c] for c in _OFFER_COLUMNS),
        _mission.c.quest_id,
        _mission.c.cap,
        _mission.c.conversions,
        _mission.c.time_limit_seconds,
        *_OFFERWALL_JOIN,
    )
    .select_from(_mission.outerjoin(_offerwall, _offerwall.c.owid == sa.bindparam("owid")))
    .where(_mission.c.id == sa.bindparam("offer_id"))
)
_FIND_QUEST = (
    sa.select(*(_quest.c[c] for c in _OFFER_COLUMNS), _quest.c.start_cap, *_OFFERWALL_JOIN)
    .select_from(_quest.outerjoin(_offerwall, _offerwall.c.owid == sa.bindparam("owid")))
    .where(_quest.c.id == sa.bindparam("offer_id"))
)
_QUEST_MISSIONS = (
    sa.select(_mission.c.id, _mission.c.cap, _mission.c.conversions, _mission.c.time_limit_seconds)
    .where(_mission.c.quest_id == sa.bindparam("quest_id"), _mission.c.is_active)
    .order_by(_mission.c.quest_position)
)
_INSERT_CLICK = _click.insert().returning(_click.c.id)
_MARK_STARTED = (
    sa.update(_click).where(_click.c.id == sa.bindparam("click_id")).values(started=True)
)


class TrackingRefusal(Exception):
    """A click that is not redirected: the status and a sentence for the person."""

    def __init__(self, status: int, title: str, message: str):
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


@dataclass(frozen=True)
class ClickIn:
    kind: str  # "mission" or "quest"
    offer_id: str
    owid: str | None
    uid: str | None
    clickid: str | None
    subs: tuple[str | None, str | None, str | None]
    ip: str
    user_agent: str


@dataclass(frozen=True)
class Tracked:
    redirect_url: str
    platform_user_id: str
    started: bool


def track_click(
    db: Connection, *, click: ClickIn, countries: CountryLookup, now: datetime
) -> Tracked:
    """Validate a click, record it, start the player's progress, and say where to go."""
    offer, missions = _offer(db, click)
    if offer.offerwall_id is None or offer.offerwall_status != OfferwallStatus.APPROVED:
        raise TrackingRefusal(404, "Offer not found", "This offerwall link is not valid.")
    offerwall_id = offer.offerwall_id
    uid, clickid = click.uid or None, click.clickid or None
    if uid is None and clickid is None:
        raise TrackingRefusal(400, "Missing player", "The link needs a uid or a clickid parameter.")
    named = (("uid", uid), ("clickid", clickid), *zip(SUB_NAMES, click.subs, strict=True))
    for name, value in named:
        if value is not None and len(value) > MAX_PARAM:
            raise TrackingRefusal(
                400, "Invalid link", f"{name} must be at most {MAX_PARAM} characters."
            )
    _check_available(offer, missions, now)
    country = countries.country(click.ip)
    os_name = detect_os(click.user_agent)
    _check_targeting(offer, country, os_name)

    player, new_player = _platform_user(db, offerwall_id, uid, now)
    click_id = db.execute(
        _INSERT_CLICK,
        {
            "offerwall_id": offerwall_id,
            "mission_id": offer.id if click.kind == "mission" else None,
            "quest_id": offer.id if click.kind == "quest" else None,
            "platform_user_id": player,
            "uid": uid,
            "clickid": clickid,
            "sub1": click.subs[0],
            "sub2": click.subs[1],
            "sub3": click.subs[2],
            "ip": click.ip,
            "user_agent": click.user_agent[:1024],
            "country": country,
            "os": os_name,
            "started": new_player,
            "created_at": now,
        },
    ).scalar_one()
    started = _start(db, offer, missions, click, player, offerwall_id, click_id, now)
    if started and not new_player:  # a known player starting another offer
        db.execute(_MARK_STARTED, {"click_id": click_id})
    return Tracked(with_platform_id(offer.destination_url, player), player, started)


def with_platform_id(url: str, platform_user_id: str) -> str:
    """The destination with `platformid` added to its query, its own parameters kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "platformid"]
    query.append(("platformid", platform_user_id))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _offer(db: Connection, click: ClickIn) -> tuple[Any, list[Any]]:
    """The offer (with its offerwall's id and status joined in) and its missions."""
    params = {"offer_id": click.offer_id, "owid": click.owid or ""}
    if click.kind == "mission":
        mission = db.execute(_FIND_MISSION, params).first()
        # A mission inside a quest is offered only through the quest's link.
        if mission is None or mission.quest_id is not None:
            raise TrackingRefusal(404, "Offer not found", "This offer does not exist.")
        return mission, [mission]
    quest = db.execute(_FIND_QUEST, params).first()
    if quest is None:
        raise TrackingRefusal(404, "Offer not found", "This offer does not exist.")
    return quest, list(db.execute(_QUEST_MISSIONS, {"quest_id": quest.id}))


def _is_open(mission: Row[Any]) -> bool:
    return mission.cap is None or mission.conversions < mission.cap


def _check_available(offer: Row[Any], missions: list[Row[Any]], now: datetime) -> None:
    if not offer.is_active or (offer.expiration_date is not None and offer.expiration_date <= now):
        raise TrackingRefusal(410, "Offer ended", "This offer is no longer available.")
    if not any(_is_open(m) for m in missions):
        raise TrackingRefusal(410, "Offer ended", "This offer has reached its limit.")


def _check_targeting(offer: Row[Any], country: str | None, os_name: str | None) -> None:
    include, exclude = offer.countries_include, offer.countries_exclude
    if (include and country not in include) or (exclude and country in exclude):
        raise TrackingRefusal(
            403, "Not available in your country", "This offer is not available where you are."
        )
    if offer.operating_systems and os_name not in offer.operating_systems:
        raise TrackingRefusal(
            403, "Not available on this device", "This offer is not available on your device."
        )


def _platform_user(
    db: Connection, offerwall_id: str, uid: str | None, now: datetime
) -> tuple[str, bool]:
    """The platform user for (offerwall, uid), created on first sight (then True); a
    click with only a clickid gets a platform user of its own."""
    values = {"id": new_uuid(), "offerwall_id": offerwall_id, "uid": uid, "created_at": now}
    if uid is None:
        db.execute(_platform_users.insert(), values)
        return values["id"], True  # type: ignore[return-value]
    player, created = get_or_create(db, _platform_users, values, conflict=("offerwall_id", "uid"))
    return str(player), created


def _start(
    db: Connection,
    offer: Row[Any],
    missions: list[Row[Any]],
    click: ClickIn,
    player: str,
    offerwall_id: str,
    click_id: int,
    now: datetime,
) -> bool:
    """Start progress on each mission the player has not started; the first click owns it."""
    quest_id = offer.id if click.kind == "quest" else None
    started_any = False
    for mission in missions:
        if not _is_open(mission):
            continue
        limit = mission.time_limit_seconds
        inserted = insert_ignore(
            db,
            _progress,
            {
                "mission_id": mission.id,
                "platform_user_id": player,
                "quest_id": quest_id,
                "offerwall_id": offerwall_id,
                "click_id": click_id,
                "status": ProgressStatus.STARTED,
                "started_at": now,
                "expires_at": now + timedelta(seconds=limit) if limit else None,
                "count": 0,
                "run": 0,
                "total": 0.0,
                "completions": 0,
                "updated_at": now,
            },
            conflict=("mission_id", "platform_user_id"),
        )
        started_any = started_any or inserted
    if started_any and quest_id is not None:
        # A new player of the quest: counted against its start cap, atomically.
        counted = db.execute(
            sa.update(_quest)
            .where(
                _quest.c.id == quest_id,
                sa.or_(_quest.c.start_cap.is_(None), _quest.c.starts < _quest.c.start_cap),
            )
            .values(starts=_quest.c.starts + 1)
        )
        if counted.rowcount != 1:
            raise TrackingRefusal(
                410, "Offer ended", "This quest has reached its limit of players."
            )
    return started_any
