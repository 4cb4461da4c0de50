"""Tracking links (SERVICE.md 6): record the click, start the progress, redirect."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import sqlalchemy as sa
from sqlmodel import Session, select

from api.core.sql import insert_ignore
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
_platform_users = PlatformUser.__table__  # type: ignore[attr-defined]
_progress = Progress.__table__  # type: ignore[attr-defined]
_quest = Quest.__table__  # type: ignore[attr-defined]
_click = Click.__table__  # type: ignore[attr-defined]


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
    session: Session, *, click: ClickIn, countries: CountryLookup, now: datetime
) -> Tracked:
    """Validate a click, record it, start the player's progress, and say where to go."""
    offerwall = _approved_offerwall(session, click.owid)
    offer, missions = _offer(session, click)
    uid, clickid = click.uid or None, click.clickid or None
    if uid is None and clickid is None:
        raise TrackingRefusal(400, "Missing player", "The link needs a uid or a clickid parameter.")
    for name, value in (
        ("uid", uid),
        ("clickid", clickid),
        *zip(("platform_sub1", "platform_sub2", "platform_sub3"), click.subs, strict=True),
    ):
        if value is not None and len(value) > MAX_PARAM:
            raise TrackingRefusal(
                400, "Invalid link", f"{name} must be at most {MAX_PARAM} characters."
            )
    _check_available(offer, missions, now)
    country = countries.country(click.ip)
    os_name = detect_os(click.user_agent)
    _check_targeting(offer, country, os_name)

    player = _platform_user(session, offerwall.id, uid, now)
    click_id = session.execute(
        _click.insert()
        .values(
            offerwall_id=offerwall.id,
            mission_id=offer.id if click.kind == "mission" else None,
            quest_id=offer.id if click.kind == "quest" else None,
            platform_user_id=player,
            uid=uid,
            clickid=clickid,
            sub1=click.subs[0],
            sub2=click.subs[1],
            sub3=click.subs[2],
            ip=click.ip,
            user_agent=click.user_agent[:1024],
            country=country,
            os=os_name,
            started=False,
            created_at=now,
        )
        .returning(_click.c.id)
    ).scalar_one()
    started = _start(session, offer, missions, click, player, offerwall.id, click_id, now)
    if started:
        session.execute(sa.update(_click).where(_click.c.id == click_id).values(started=True))
    return Tracked(with_platform_id(offer.destination_url, player), player, started)


def with_platform_id(url: str, platform_user_id: str) -> str:
    """The destination with `platformid` added to its query, its own parameters kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "platformid"]
    query.append(("platformid", platform_user_id))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _approved_offerwall(session: Session, owid: str | None) -> Offerwall:
    offerwall = (
        session.exec(select(Offerwall).where(Offerwall.owid == owid)).first() if owid else None
    )
    if offerwall is None or offerwall.status != OfferwallStatus.APPROVED:
        raise TrackingRefusal(404, "Offer not found", "This offerwall link is not valid.")
    return offerwall


def _offer(session: Session, click: ClickIn) -> tuple[Mission | Quest, list[Mission]]:
    if click.kind == "mission":
        mission = session.get(Mission, click.offer_id)
        # A mission inside a quest is offered only through the quest's link.
        if mission is None or mission.quest_id is not None:
            raise TrackingRefusal(404, "Offer not found", "This offer does not exist.")
        return mission, [mission]
    quest = session.get(Quest, click.offer_id)
    if quest is None:
        raise TrackingRefusal(404, "Offer not found", "This offer does not exist.")
    missions = session.exec(
        select(Mission)
        .where(Mission.quest_id == quest.id, Mission.is_active)
        .order_by(Mission.quest_position)  # type: ignore[arg-type]
    ).all()
    return quest, list(missions)


def _check_available(offer: Mission | Quest, missions: list[Mission], now: datetime) -> None:
    if not offer.is_active or (offer.expiration_date is not None and offer.expiration_date <= now):
        raise TrackingRefusal(410, "Offer ended", "This offer is no longer available.")
    open_missions = [m for m in missions if m.cap is None or m.conversions < m.cap]
    if not open_missions:
        raise TrackingRefusal(410, "Offer ended", "This offer has reached its limit.")


def _check_targeting(offer: Mission | Quest, country: str | None, os_name: str | None) -> None:
    include, exclude = offer.countries_include, offer.countries_exclude
    if (include and country not in include) or (exclude and country in exclude):
        raise TrackingRefusal(
            403, "Not available in your country", "This offer is not available where you are."
        )
    if offer.operating_systems and os_name not in offer.operating_systems:
        raise TrackingRefusal(
            403, "Not available on this device", "This offer is not available on your device."
        )


def _platform_user(session: Session, offerwall_id: str, uid: str | None, now: datetime) -> str:
    """The platform user for (offerwall, uid), created on first sight; a click with only
    a clickid gets a platform user of its own."""
    if uid is None:
        user = PlatformUser(offerwall_id=offerwall_id, created_at=now)
        session.add(user)
        session.flush()
        return user.id
    insert_ignore(
        session,
        _platform_users,
        {"id": new_uuid(), "offerwall_id": offerwall_id, "uid": uid, "created_at": now},
        conflict=("offerwall_id", "uid"),
    )
    return session.execute(
        sa.select(_platform_users.c.id).where(
            _platform_users.c.offerwall_id == offerwall_id, _platform_users.c.uid == uid
        )
    ).scalar_one()


def _start(
    session: Session,
    offer: Mission | Quest,
    missions: list[Mission],
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
        if mission.cap is not None and mission.conversions >= mission.cap:
            continue
        expires = (
            now + timedelta(seconds=mission.time_limit_seconds)
            if mission.time_limit_seconds
            else None
        )
        inserted = insert_ignore(
            session,
            _progress,
            {
                "mission_id": mission.id,
                "platform_user_id": player,
                "quest_id": quest_id,
                "offerwall_id": offerwall_id,
                "click_id": click_id,
                "status": ProgressStatus.STARTED,
                "started_at": now,
                "expires_at": expires,
                "count": 0,
                "run": 0,
                "total": 0.0,
                "completions": 0,
                "updated_at": now,
            },
            conflict=("mission_id", "platform_user_id"),
        )
        started_any = started_any or inserted
    if started_any and isinstance(offer, Quest) and offer.start_cap is not None:
        raised = session.execute(
            sa.update(_quest)
            .where(_quest.c.id == offer.id, _quest.c.starts < _quest.c.start_cap)
            .values(starts=_quest.c.starts + 1)
        )
        if raised.rowcount != 1:  # type: ignore[attr-defined]
            raise TrackingRefusal(
                410, "Offer ended", "This quest has reached its limit of players."
            )
    elif started_any and isinstance(offer, Quest):
        session.execute(
            sa.update(_quest).where(_quest.c.id == offer.id).values(starts=_quest.c.starts + 1)
        )
    return started_any
