"""Tracking links (docs/contract.md#tracking-links): record the click, start the progress, redirect.

Why one module of this size: a click is one transaction on the hottest path after ingestion
(the offer's checks, the cap, the platform user, the progress it starts, the redirect), kept
in one place to be read and measured as one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from api.core.db import run_transaction, write_connection
from api.core.driver import DriverStatement, from_db_json, from_db_time, to_db_json, to_db_time
from api.core.geo import CountryLookup, detect_os, device_signature
from api.core.refusals import N_
from api.core.sql import dialect_insert
from api.fraud import DEFAULT_POLICY, Policy
from api.fraud import policy as fraud
from api.missions import bump, open_offers
from api.tracking import live_ops
from api.tracking.refusal import TrackingRefusal
from api.webhooks import messages as webhooks
from models import OfferwallStatus, ProgressStatus
from models import RefusalReason as Reason
from models.schemas import NUL
from models.tables import EMPTY_TALLY, PROGRESS_STATE
from models.tables import click as _click
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
from models.tables import platform_user as _platform_users
from models.tables import progress as _progress
from models.tables import quest as _quest
from models.tables import refused_click as _refused_click
from models.tracking import TEST_UID
from models.types import new_uuid, utcnow

MAX_PARAM = 255
SUB_NAMES = ("platform_sub1", "platform_sub2", "platform_sub3")


# Built once: a click runs these on every request.
_OFFER_COLUMNS = (
    "id",
    "destination_url",
    "expiration_date",
    "start_date",
    "is_active",
    "operating_systems",
    "countries_include",
    "countries_exclude",
)
# The offer and the offerwall in one statement (the offerwall's columns are NULL when
# no offerwall has that owid). The hottest statements run straight on the driver.
_OFFERWALL_JOIN = (_offerwall.c.id, _offerwall.c.status, _offerwall.c.fraud_actions)
# A mission's live operations (docs/missions.md#live-operations), after its game.
_LIVE_COLUMNS = (
    "game_id",
    "recurrence",
    "pool",
    "period_caps",
    "cap_per_offerwall",
    "revenue_micros",
    "budget",
    "stages",
)
_FIND_MISSION = DriverStatement(
    sa.select(
        *(_mission.c[c] for c in _OFFER_COLUMNS),
        _mission.c.quest_id,
        _mission.c.cap,
        _mission.c.conversions,
        _mission.c.time_limit_seconds,
        sa.null(),  # start_cap: quests only
        _mission.c.fraud_actions,
        *(_mission.c[c] for c in _LIVE_COLUMNS),
        *_OFFERWALL_JOIN,
    )
    .select_from(_mission.outerjoin(_offerwall, _offerwall.c.owid == sa.bindparam("owid")))
    .where(_mission.c.id == sa.bindparam("offer_id"))
)
_FIND_QUEST = DriverStatement(
    sa.select(
        *(_quest.c[c] for c in _OFFER_COLUMNS),
        sa.null(),  # quest_id
        sa.null(),  # cap
        sa.null(),  # conversions
        sa.null(),  # time_limit_seconds
        _quest.c.start_cap,
        sa.null(),  # a quest's rules are its missions' (_offer)
        _quest.c.game_id,
        *(sa.null() for _ in _LIVE_COLUMNS[1:]),  # a quest's are its missions'
        *_OFFERWALL_JOIN,
    )
    .select_from(_quest.outerjoin(_offerwall, _offerwall.c.owid == sa.bindparam("owid")))
    .where(_quest.c.id == sa.bindparam("offer_id"))
)


@dataclass(frozen=True)
class Offer:
    """A mission or quest as a click needs it, with its offerwall's id, status and
    fraud rules. `mission_actions`: the mission's own fraud rules; a quest's, per signal
    the strictest of its missions'."""

    id: str
    destination_url: str
    expiration_date: datetime | None
    start_date: datetime | None
    is_active: bool
    operating_systems: list[str]
    countries_include: list[str]
    countries_exclude: list[str]
    quest_id: str | None
    cap: int | None
    conversions: int | None
    time_limit_seconds: int | None
    start_cap: int | None
    mission_actions: dict[str, str]
    game_id: str
    recurrence: dict[str, Any] | None
    pool: str | None
    period_caps: dict[str, Any] | None
    cap_per_offerwall: int | None
    revenue_micros: int | None  # a mission with revenue may be closed by a budget
    budget: dict[str, Any] | None
    stages: list[dict[str, Any]] | None  # a ladder's: a budget judges its first stage
    offerwall_id: str | None
    offerwall_status: str | None
    fraud_actions: dict[str, str]

    @classmethod
    def from_driver(cls, row: Sequence[Any]) -> Offer:
        values = list(row)
        values[2] = from_db_time(values[2])
        values[3] = from_db_time(values[3])
        values[4] = bool(values[4])
        values[5:8] = [from_db_json(v) or [] for v in values[5:8]]
        values[13] = from_db_json(values[13]) or {}  # mission_actions
        values[15] = from_db_json(values[15])  # recurrence
        values[17] = from_db_json(values[17])  # period_caps
        values[20] = from_db_json(values[20])  # budget
        values[21] = from_db_json(values[21])  # stages
        values[-1] = from_db_json(values[-1]) or {}
        return cls(*values)


# The no-op update (so that RETURNING gives the existing id) sets a column outside any
# key: on PostgreSQL it then takes the weaker FOR NO KEY UPDATE row lock, which does not
# wait for batches whose foreign keys merely point at the player (a link, a progress).
_GET_OR_CREATE_PLAYER = DriverStatement(
    lambda dialect: (
        dialect_insert(dialect, _platform_users)
        .on_conflict_do_update(
            index_elements=("offerwall_id", "uid"),
            set_={"created_at": _platform_users.c.created_at},
        )
        .returning(_platform_users.c.id)
    ),
    column_keys=("id", "offerwall_id", "uid", "created_at"),
)
_START_PROGRESS = DriverStatement(
    lambda dialect: (
        dialect_insert(dialect, _progress)
        .on_conflict_do_nothing(index_elements=("mission_id", "platform_user_id", "period"))
        .returning(_progress.c.id)
    ),
    column_keys=(*PROGRESS_STATE, "rate_minute", "rate_count", "updated_at"),
)
_QUEST_MISSIONS = (
    sa.select(
        _mission.c.id,
        _mission.c.cap,
        _mission.c.conversions,
        _mission.c.time_limit_seconds,
        _mission.c.fraud_actions,
        *(_mission.c[c] for c in _LIVE_COLUMNS),
    )
    .where(
        _mission.c.quest_id == sa.bindparam("quest_id"),
        _mission.c.is_active,
        # A mission scheduled later joins the quest when it starts.
        sa.or_(
            _mission.c.start_date.is_(None),
            _mission.c.start_date <= sa.bindparam("now", type_=_mission.c.start_date.type),
        ),
    )
    .order_by(_mission.c.quest_position)
)
_CLICK_COLUMNS = (
    "offerwall_id",
    "mission_id",
    "quest_id",
    "platform_user_id",
    "uid",
    "clickid",
    "sub1",
    "sub2",
    "sub3",
    "ip",
    "user_agent",
    "country",
    "os",
    "device",
    "started",
    "signals",
    "created_at",
    "test",
)
_INSERT_CLICK = DriverStatement(_click.insert().returning(_click.c.id), column_keys=_CLICK_COLUMNS)
_MARK_STARTED = (
    sa.update(_click).where(_click.c.id == sa.bindparam("click_id")).values(started=True)
)


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
    # Read only into the click's device signature (`geo.device_signature`), never kept.
    accept_language: str = ""
    platform: str = ""  # Sec-CH-UA-Platform


@dataclass(frozen=True)
class Tracked:
    redirect_url: str
    platform_user_id: str
    started: bool


def record_click(
    *,
    engine: Engine,
    click: ClickIn,
    countries: CountryLookup,
    signals: Sequence[str] = (),
    policy: Policy = DEFAULT_POLICY,
) -> Tracked:
    """`track_click` in its own write transaction, run again from the start if it
    deadlocks or fails to serialize, so the person clicking never sees that error."""

    def attempt() -> Tracked:
        with write_connection(engine) as db:
            return track_click(
                db, click=click, countries=countries, now=utcnow(), signals=signals, policy=policy
            )

    return run_transaction(attempt)


@dataclass(frozen=True)
class ScreenedClick:
    """A click and the risk signals its screening found: what a grouped write needs."""

    click: ClickIn
    signals: tuple[str, ...] = ()
    # The request's context (its id, its trace): a group's write runs each click in its
    # own, so the webhook messages a click makes name the request that brought it.
    made_in: contextvars.Context = field(default_factory=contextvars.copy_context)


def record_clicks_together(
    engine: Engine,
    countries: CountryLookup,
    policy: Policy,
    clicks: Sequence[ScreenedClick],
) -> list[Tracked | Exception]:
    """Clicks that arrived together, in one transaction and one commit (SQLite's group
    commit, `api.core.group_commit`): the answer of each, or the exception its request
    raises (a `TrackingRefusal`: nothing of that click is kept).

    Each click runs in a savepoint of its own, so a refused or failed one is rolled back
    alone. A click whose savepoint failed on a database error, or every click when the
    shared transaction fails, is then recorded alone (`record_click`). Nothing is answered
    before the commit, so every redirect stands for a click that is stored.
    """
    done: list[Tracked | Exception | None] = []
    try:
        with write_connection(engine) as db:
            now = utcnow()
            for screened in clicks:
                done.append(
                    screened.made_in.run(_track_in_savepoint, db, screened, countries, policy, now)
                )
    except DBAPIError:
        done = [None] * len(clicks)
    answers: list[Tracked | Exception] = []
    for answer, screened in zip(done, clicks, strict=True):
        if answer is None:
            try:
                answer = screened.made_in.run(
                    partial(
                        record_click,
                        engine=engine,
                        click=screened.click,
                        countries=countries,
                        signals=screened.signals,
                        policy=policy,
                    )
                )
            except Exception as exc:  # this click's error, raised to its request alone
                answer = exc
        answers.append(answer)
    return answers


def _track_in_savepoint(
    db: Connection,
    screened: ScreenedClick,
    countries: CountryLookup,
    policy: Policy,
    now: datetime,
) -> Tracked | Exception | None:
    """One click of a group: its answer, its refusal or error (rolled back), or None for
    a database error (rolled back, to be recorded alone)."""
    savepoint = db.begin_nested()
    try:
        tracked = track_click(
            db,
            click=screened.click,
            countries=countries,
            now=now,
            signals=screened.signals,
            policy=policy,
        )
    except DBAPIError:
        savepoint.rollback()
        return None
    except Exception as exc:  # a refusal, or a fault of this click alone
        savepoint.rollback()
        return exc
    savepoint.commit()
    return tracked


def _kept(text: str | None, length: int = MAX_PARAM) -> str | None:
    """A refused click's value as it can be stored: a NUL made visible, cut to the column."""
    return None if text is None else text.replace(NUL, "\ufffd")[:length]


def record_refusal(
    *, engine: Engine, click: ClickIn, reason: Reason, countries: CountryLookup
) -> None:
    """Store a refused click with its reason, in a transaction of its own (the click's own
    was rolled back); its offerwall when the owid names one."""
    owid = _kept(click.owid)
    offerwall = sa.select(_offerwall.c.id).where(_offerwall.c.owid == (owid or ""))
    row = {
        "reason": reason.value,
        "kind": click.kind,
        "offer_id": _kept(click.offer_id) or "",
        "owid": owid,
        "offerwall_id": offerwall.scalar_subquery(),
        "uid": _kept(click.uid),
        "clickid": _kept(click.clickid),
        "sub1": _kept(click.subs[0]),
        "sub2": _kept(click.subs[1]),
        "sub3": _kept(click.subs[2]),
        "ip": click.ip[:64],
        "user_agent": _kept(click.user_agent, 1024) or "",
        "country": countries.country(click.ip),
        "os": detect_os(click.user_agent),
        "created_at": utcnow(),
    }
    with write_connection(engine) as db:
        db.execute(_refused_click.insert().values(**row))


def track_click(
    db: Connection,
    *,
    click: ClickIn,
    countries: CountryLookup,
    now: datetime,
    signals: Sequence[str] = (),
    policy: Policy = DEFAULT_POLICY,
) -> Tracked:
    """Validate a click, record it with its risk signals, start the player's progress,
    and say where to go. A signal the offerwall's rules, or the offer's own stricter ones,
    refuse refuses the click."""
    offer, missions = _offer(db, click, now)
    if offer.offerwall_id is None or offer.offerwall_status != OfferwallStatus.APPROVED:
        raise TrackingRefusal(
            Reason.UNKNOWN_OFFERWALL,
            404,
            N_("Offer not found"),
            N_("This offerwall link is not valid."),
        )
    offerwall_id = offer.offerwall_id
    uid, clickid = click.uid or None, click.clickid or None
    if uid is None and clickid is None:
        raise TrackingRefusal(
            Reason.INVALID_LINK,
            400,
            N_("Missing player"),
            N_("The link needs a uid or a clickid parameter."),
        )
    named = (("uid", uid), ("clickid", clickid), *zip(SUB_NAMES, click.subs, strict=True))
    for name, value in named:
        if value is not None and len(value) > MAX_PARAM:
            raise TrackingRefusal(
                Reason.INVALID_LINK,
                400,
                N_("Invalid link"),
                N_("{name} must be at most {limit} characters."),
                name=name,
                limit=MAX_PARAM,
            )
    _check_available(offer, missions, now)
    live = live_ops.for_click(db, missions, offerwall_id, now)
    if click.kind == "mission":
        live.check_mission(offer.id, uid or "")
    elif not live.any_open(missions):
        raise live.capped_refusal()
    country = countries.country(click.ip)
    os_name = detect_os(click.user_agent)
    _check_targeting(offer, country, os_name)
    for signal in signals:
        if policy.action(signal, offer.fraud_actions, offer.mission_actions) == fraud.REFUSE:
            raise TrackingRefusal(Reason(signal), 403, fraud.REFUSAL_TITLE, fraud.REFUSAL_MESSAGE)

    player, new_player = _platform_user(db, offerwall_id, uid, now)
    click_id = _INSERT_CLICK.execute(
        db,
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
            "device": device_signature(click.user_agent, click.accept_language, click.platform),
            "started": new_player,
            "signals": to_db_json(db.dialect, list(signals)) if signals else None,
            "created_at": to_db_time(db.dialect, now),
            "test": uid == TEST_UID,
        },
    ).fetchone()[0]
    started = _start(db, offer, missions, click, player, offerwall_id, click_id, now, live)
    if started and not new_player:  # a known player starting another offer
        db.execute(_MARK_STARTED, {"click_id": click_id})
    return Tracked(with_platform_id(offer.destination_url, player), player, started)


def _tell_started(
    db: Connection,
    game_id: str,
    player: str,
    quest_id: str | None,
    started: list[tuple[str, str]],
    now: datetime,
) -> None:
    """`mission.started` for each mission a player started, when the game's endpoints
    take it (one read of them; the titles only then)."""
    if not webhooks.game_takes(db, game_id, "mission.started"):
        return
    titles = dict(
        db.execute(
            sa.select(_mission.c.id, _mission.c.title).where(
                _mission.c.id.in_([mission_id for mission_id, _ in started])
            )
        ).all()
    )
    items = [
        (
            "mission.started",
            {
                "userId": None,  # the game links its user after the click
                "platformUserId": player,
                "mission": {"id": mission_id, "title": titles.get(mission_id, "")},
                "questId": quest_id,
                "period": period or None,
            },
        )
        for mission_id, period in started
    ]
    webhooks.emit(db, game_id=game_id, player=player, items=items, now=now)


def with_platform_id(url: str, platform_user_id: str) -> str:
    """The destination with `platformid` added to its query, its own parameters kept."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "platformid"]
    query.append(("platformid", platform_user_id))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _offer(db: Connection, click: ClickIn, now: datetime) -> tuple[Offer, list[Any]]:
    """The offer (with its offerwall's id, status and rules joined in) and its missions,
    read with the statements a click runs anyway."""
    params = {"offer_id": click.offer_id, "owid": click.owid or ""}
    if click.kind == "mission":
        row = _FIND_MISSION.execute(db, params).fetchone()
        mission = Offer.from_driver(row) if row is not None else None
        # A mission inside a quest is offered only through the quest's link.
        if mission is None or mission.quest_id is not None:
            raise TrackingRefusal(
                Reason.UNKNOWN_OFFER, 404, N_("Offer not found"), N_("This offer does not exist.")
            )
        return mission, [mission]
    row = _FIND_QUEST.execute(db, params).fetchone()
    if row is None:
        raise TrackingRefusal(
            Reason.UNKNOWN_OFFER, 404, N_("Offer not found"), N_("This offer does not exist.")
        )
    quest = Offer.from_driver(row)
    missions = list(db.execute(_QUEST_MISSIONS, {"quest_id": quest.id, "now": now}))
    actions = fraud.strictest(m.fraud_actions for m in missions)
    return replace(quest, mission_actions=actions), missions


def _check_available(offer: Offer, missions: list[Any], now: datetime) -> None:
    if offer.start_date is not None and offer.start_date > now:
        raise TrackingRefusal(
            Reason.ENDED, 403, N_("Offer not started"), N_("This offer is not available yet.")
        )
    if not open_offers.running(offer, now):
        raise TrackingRefusal(
            Reason.ENDED, 410, N_("Offer ended"), N_("This offer is no longer available.")
        )
    if not any(open_offers.under_cap(m) for m in missions):
        raise TrackingRefusal(
            Reason.CAPPED, 410, N_("Offer ended"), N_("This offer has reached its limit.")
        )


def _check_targeting(offer: Offer, country: str | None, os_name: str | None) -> None:
    include, exclude = offer.countries_include, offer.countries_exclude
    if (include and country not in include) or (exclude and country in exclude):
        raise TrackingRefusal(
            Reason.COUNTRY,
            403,
            N_("Not available in your country"),
            N_("This offer is not available where you are."),
        )
    if offer.operating_systems and os_name not in offer.operating_systems:
        raise TrackingRefusal(
            Reason.DEVICE,
            403,
            N_("Not available on this device"),
            N_("This offer is not available on your device."),
        )


def _platform_user(
    db: Connection, offerwall_id: str, uid: str | None, now: datetime
) -> tuple[str, bool]:
    """The platform user for (offerwall, uid), created on first sight (then True); a
    click with only a clickid gets a platform user of its own."""
    values = {
        "id": new_uuid(),
        "offerwall_id": offerwall_id,
        "uid": uid,
        "created_at": to_db_time(db.dialect, now),
    }
    if uid is None:
        db.execute(_platform_users.insert(), {**values, "created_at": now})
        return str(values["id"]), True
    # One statement: insert, or (on conflict, a no-op update) return the existing id.
    player = _GET_OR_CREATE_PLAYER.execute(db, values).fetchone()[0]
    return str(player), player == values["id"]


def _start(
    db: Connection,
    offer: Offer,
    missions: list[Any],
    click: ClickIn,
    player: str,
    offerwall_id: str,
    click_id: int,
    now: datetime,
    live: live_ops.ClickLive,
) -> bool:
    """Start progress on each mission the player has not started (in this period, for a
    recurring or pooled one); the first click owns it. The game hears of each mission a
    player starts for the first time (`mission.started`)."""
    quest_id = offer.id if click.kind == "quest" else None
    started_any = first_start = False
    firsts: list[tuple[str, str]] = []
    for mission in missions:
        if not open_offers.under_cap(mission):
            continue
        limit = mission.time_limit_seconds
        key, started_at, resets_at, first = live.period_of(db, mission.id, player, now)
        row = _START_PROGRESS.execute(
            db,
            {
                "mission_id": mission.id,
                "platform_user_id": player,
                "quest_id": quest_id,
                "offerwall_id": offerwall_id,
                "click_id": click_id,
                "status": ProgressStatus.STARTED,
                "started_at": to_db_time(db.dialect, started_at),
                "expires_at": to_db_time(db.dialect, started_at + timedelta(seconds=limit))
                if limit
                else None,
                "period": key,
                "resets_at": to_db_time(db.dialect, resets_at) if resets_at else None,
                **EMPTY_TALLY,
                "updated_at": to_db_time(db.dialect, now),
            },
        ).fetchone()
        inserted = row is not None
        started_any = started_any or inserted
        # A recurring mission's later periods are the same player, not a new one.
        first_start = first_start or (inserted and first)
        if inserted and first:
            firsts.append((mission.id, key))
    if firsts:
        _tell_started(db, offer.game_id, player, quest_id, firsts, now)
    if first_start and quest_id is not None:
        # A new player of the quest: counted against its start cap, atomically.
        counted = db.execute(
            sa.update(_quest)
            .where(
                _quest.c.id == quest_id,
                open_offers.under_start_cap_sql(_quest),
            )
            .values(starts=_quest.c.starts + 1)
            .returning(_quest.c.starts, _quest.c.start_cap)
        ).first()
        if counted is None:
            raise TrackingRefusal(
                Reason.CAPPED,
                410,
                N_("Offer ended"),
                N_("This quest has reached its limit of players."),
            )
        if counted.start_cap is not None and counted.starts >= counted.start_cap:
            bump(db)  # full now: offer listings drop it
    return started_any
