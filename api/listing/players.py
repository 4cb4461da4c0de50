"""One player's side of the offers: the filters of `GET /offerwall/offers`, what a player
can still do, and how far along they are (docs/publisher-integration.md#players-and-progress).

The offers API with `uid`, `GET /offerwall/users/{uid}/progress` and the hosted wall all
read the same two things: the combined listing (`offers.LISTINGS`, in memory) and
the player's progress rows (one statement). So the wall shows exactly the offers the API
returns for that player.

A mission's state for a player:
- `new`: no progress yet (the player never opened its tracking link);
- `started`: counting (a repeatable mission stays `started` after each conversion,
  with `completions` telling how many times it paid);
- `completed`: converted and not repeatable;
- `expired`: its time limit ran out before it was done;
- `ended`: it reached its cap of conversions while the player was on it.

A player can still do a mission that is `new` or `started`; a quest while one of its
missions is. A quest's own state: `completed` when every mission is done, `expired` when
none is left to do and one expired, `new` before the first click, `started` otherwise.

Why one module of this size: the offers API with `uid`, the progress endpoint and the hosted
wall must agree to the letter, so the one player's view they share is written once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection

from api.core.periods import Period
from api.listing.offers import (
    ECONOMICS,
    LISTINGS,
    Goal,
    Listed,
    ListingOfferwall,
    OfferPage,
    Pool,
    Pricing,
    for_offerwall,
    goal_of,
    invalid_parameter,
    iso,
    pricing_for,
    render_page,
)
from api.missions import rule_of, standing
from models import ConversionStatus, ProgressStatus
from models.offer_schemas import OPERATING_SYSTEMS
from models.schemas import NUL
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import mission_pool as _mission_pool
from models.tables import platform_user as _platform_user
from models.tables import progress as _progress
from models.tables import quest as _quest
from models.tracking import status_at

SORTS = ("newest", "payout")
MAX_UID = 255
MAX_TAGS = 20
MAX_TAG = 64
# Far beyond any payout; a larger minPayout is refused rather than compared.
MAX_MIN_PAYOUT = Decimal(10) ** 12
_OS_BY_LOWER = {name.lower(): name for name in OPERATING_SYSTEMS}

NEW, STARTED, COMPLETED, EXPIRED, ENDED = "new", "started", "completed", "expired", "ended"
DOABLE = (NEW, STARTED)


@dataclass(frozen=True)
class OfferFilters:
    """What the offers API's query narrows the listing to; empty means everything."""

    country: str | None = None
    os: str | None = None
    tags: frozenset[str] = frozenset()
    min_payout: Decimal | None = None
    sort: str = "newest"

    @property
    def narrows(self) -> bool:
        return bool(self.country or self.os or self.tags or self.min_payout is not None)


def _text(name: str, raw: str | None, *, longest: int) -> str | None:
    if raw is None or raw.strip() == "":
        return None
    if NUL in raw:
        raise invalid_parameter(name, raw.replace(NUL, ""), "text without NUL characters")
    if len(raw) > longest:
        raise invalid_parameter(name, raw, f"at most {longest} characters")
    return raw.strip()


def parse_filters(
    *,
    country: str | None = None,
    os: str | None = None,
    tag: str | None = None,
    min_payout: str | None = None,
    sort: str | None = None,
) -> OfferFilters:
    """The query's filters, each checked: 400 `invalid_parameter` naming the parameter."""
    code = _text("country", country, longest=2)
    if code is not None and not (len(code) == 2 and code.isascii() and code.isalpha()):
        raise invalid_parameter("country", country or "", "a two-letter ISO 3166 country code")
    os_text = _text("os", os, longest=32)
    os_name = _OS_BY_LOWER.get(os_text.lower()) if os_text else None
    if os_text and os_name is None:
        raise invalid_parameter("os", os or "", f"one of {', '.join(OPERATING_SYSTEMS)}")
    tags_text = _text("tag", tag, longest=MAX_TAGS * (MAX_TAG + 1))
    tags = [t.strip().lower() for t in (tags_text or "").split(",") if t.strip()]
    if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG for t in tags):
        raise invalid_parameter(
            "tag", tag or "", f"at most {MAX_TAGS} tags of {MAX_TAG} characters"
        )
    minimum = _payout(min_payout)
    chosen = (_text("sort", sort, longest=16) or "newest").lower()
    if chosen not in SORTS:
        raise invalid_parameter("sort", sort or "", f"one of {', '.join(SORTS)}")
    return OfferFilters(
        country=code.upper() if code else None,
        os=os_name,
        tags=frozenset(tags),
        min_payout=minimum,
        sort=chosen,
    )


def _payout(raw: str | None) -> Decimal | None:
    text = _text("minPayout", raw, longest=32)
    if text is None:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value < 0 or value > MAX_MIN_PAYOUT:
        raise invalid_parameter("minPayout", raw or "", "a number from 0 to 1000000000000")
    return value


def parse_uid(raw: str | None) -> str | None:
    """A player's uid from a query or path: 400 when over 255 characters or with NUL."""
    if raw is None or raw == "":
        return None
    if NUL in raw:
        raise invalid_parameter("uid", raw.replace(NUL, ""), "text without NUL characters")
    if len(raw) > MAX_UID:
        raise invalid_parameter("uid", raw, f"at most {MAX_UID} characters")
    return raw


# --- targeting and filters ----------------------------------------------------------------


def targets(offer: Listed, *, country: str | None, os_name: str | None) -> bool:
    """Whether the offer's geotargeting and OS list let this country and OS in (the rule a
    tracking link enforces with 403): an unknown country or OS passes only an offer that
    does not target by it."""
    include, exclude = offer.countries_include, offer.countries_exclude
    if (include and country not in include) or (exclude and country in exclude):
        return False
    return not (offer.operating_systems and os_name not in offer.operating_systems)


def payout_in(offer: Listed, pricing: Pricing | ListingOfferwall) -> Decimal:
    """The offer's payout in the offerwall's currency as the player gets it (its rules and
    promotion), each mission's rounded as its postback carries it (a quest's is its open
    missions' together)."""
    if isinstance(pricing, ListingOfferwall):
        pricing = Pricing.plain(pricing)
    return sum((pricing.goal_amount(g) for g in offer.goals), Decimal(0))


def matches(offer: Listed, filters: OfferFilters, offerwall: Pricing | ListingOfferwall) -> bool:
    country = filters.country
    include, exclude = offer.countries_include, offer.countries_exclude
    if country and ((include and country not in include) or country in exclude):
        return False
    if filters.os and offer.operating_systems and filters.os not in offer.operating_systems:
        return False
    if filters.tags and not filters.tags & {t.lower() for t in offer.tags}:
        return False
    return filters.min_payout is None or payout_in(offer, offerwall) >= filters.min_payout


def select(
    listing: list[Listed],
    filters: OfferFilters,
    offerwall: Pricing | ListingOfferwall,
    progress: PlayerProgress | None = None,
) -> list[Listed]:
    """The listing narrowed by the filters and (given a player) to what they can still do,
    newest first or by payout (highest first, newest first among equals)."""
    chosen = [o for o in listing if matches(o, filters, offerwall)] if filters.narrows else listing
    if progress is not None:
        hidden = hidden_offers(index_of(listing), progress)
        if hidden:
            chosen = [o for o in chosen if o.id not in hidden]
    if filters.sort == "payout":
        # The listing is newest first and the sort is stable.
        return sorted(chosen, key=lambda o: payout_in(o, offerwall), reverse=True)
    return chosen


@dataclass(frozen=True)
class ListingIndex:
    """What judging a player needs of a listing, built once per listing (`index_of`): each
    offer's position, and the pools with their members' ids, by (game, pool): two games
    may each have a pool of the same name."""

    listing: list[Listed]
    position: dict[str, int]
    pools: dict[tuple[str, str], tuple[Pool, frozenset[str]]]

    @classmethod
    def of(cls, listing: list[Listed]) -> ListingIndex:
        members: dict[tuple[str, str], tuple[Pool, set[str]]] = {}
        for offer in listing:
            if offer.pool is not None:
                key = (offer.pool.game_id, offer.pool.name)
                members.setdefault(key, (offer.pool, set()))[1].add(offer.id)
        pools = {name: (pool, frozenset(ids)) for name, (pool, ids) in members.items()}
        return cls(listing, {offer.id: n for n, offer in enumerate(listing)}, pools)

    def positions(self, ids: set[str] | frozenset[str]) -> set[int]:
        """The positions of those of `ids` the listing holds."""
        return {self.position[i] for i in ids if i in self.position}

    def page_without(self, skipped: set[int], start: int, size: int) -> list[Listed]:
        """`size` offers of the listing without those at the `skipped` positions, from the
        `start`-th of them on: a page, in a few steps however long the listing."""
        at = start
        for position in sorted(skipped):  # where the start-th offer kept is in the listing
            if position > at:
                break
            at += 1
        page: list[Listed] = []
        while len(page) < size and at < len(self.listing):
            if at not in skipped:
                page.append(self.listing[at])
            at += 1
        return page


# {id(listing): index} for the listings in use (the current listing and its lists narrowed
# per offerwall); emptied when it grows past a bound (an index of 1,000 offers: 46 KiB).
_INDEXES: dict[int, ListingIndex] = {}
MAX_INDEXES = 256


def index_of(listing: list[Listed]) -> ListingIndex:
    kept = _INDEXES.get(id(listing))
    if kept is not None and kept.listing is listing:
        return kept
    index = ListingIndex.of(listing)
    if len(_INDEXES) >= MAX_INDEXES:
        _INDEXES.clear()
    _INDEXES[id(listing)] = index
    return index


def hidden_offers(index: ListingIndex, progress: PlayerProgress) -> set[str]:
    """The ids of the listing's offers the player cannot do now: a pooled mission outside
    their picks of the period, and an offer they opened that is no longer doable. Only the
    pools and the few offers they opened are judged, not the thousand others."""
    hidden: set[str] = set()
    for pool, ids in index.pools.values():
        hidden |= ids - pool.picks(progress.offerwall_id, progress.uid, progress.now)
    for offer_id in progress.opened:
        at = index.position.get(offer_id)
        if at is not None and not progress.offer(index.listing[at]).doable:
            hidden.add(offer_id)
    return hidden


# --- a player's progress ------------------------------------------------------------------

_PLAYER_PROGRESS = (
    sa.select(
        _progress.c.mission_id,
        _progress.c.quest_id,
        _progress.c.status,
        _progress.c.count,
        _progress.c.run,
        _progress.c.total,
        _progress.c.state,
        _progress.c.completions,
        _progress.c.started_at,
        _progress.c.expires_at,
        _mission.c.title,
        _mission.c.rule_event,
        _mission.c.rule_conditions,
        _mission.c.rule_completion,
        _mission.c.rule_threshold,
        _mission.c.rule_sum_field,
        _mission.c.rule_extra,
        _mission.c.allow_multiple_conversions,
        _mission.c.payout_micros,
        _quest.c.name.label("quest_name"),
        _progress.c.period,
        _progress.c.resets_at,
        _mission.c.recurrence,
        _mission.c.stages,
        _mission_pool.c.every.label("pool_every"),
        _mission_pool.c.time_zone.label("pool_zone"),
        _mission_pool.c.week_starts_on.label("pool_week"),
    )
    .select_from(
        _platform_user.join(_progress, _progress.c.platform_user_id == _platform_user.c.id)
        .join(_mission, _mission.c.id == _progress.c.mission_id)
        .outerjoin(_quest, _quest.c.id == _progress.c.quest_id)
        .outerjoin(
            _mission_pool,
            sa.and_(
                _mission_pool.c.game_id == _mission.c.game_id,
                _mission_pool.c.name == _mission.c.pool,
            ),
        )
    )
    .where(
        _platform_user.c.offerwall_id == sa.bindparam("offerwall_id"),
        _platform_user.c.uid == sa.bindparam("uid"),
    )
    .order_by(_progress.c.started_at, _progress.c.id)
)


@dataclass(frozen=True)
class MissionState:
    """One mission as the player stands on it."""

    goal: Goal
    status: str
    current: float = 0
    completions: int = 0
    started_at: datetime | None = None
    expires_at: datetime | None = None
    resets_at: datetime | None = None  # a recurring or pooled mission's period's end

    @property
    def stages_reached(self) -> int:
        """A ladder's stages reached in the current round (all of them once completed)."""
        count = len(self.goal.stages)
        if not count:
            return 0
        if self.status == COMPLETED:
            return count
        return self.completions % count

    @property
    def percent(self) -> int:
        if self.status == COMPLETED:
            return 100
        if self.goal.completion == "min":  # the lower the better: how close the best is
            return (
                0
                if self.current <= 0
                else min(100, math.floor(100 * self.goal.threshold / self.current))
            )
        if self.goal.threshold <= 0:
            return 0
        return min(100, math.floor(100 * self.current / self.goal.threshold))

    @property
    def done(self) -> bool:
        """Converted at least once."""
        return self.status == COMPLETED or self.completions > 0

    @property
    def waits(self) -> bool:
        """A ladder whose stage the player would be paid next its budget cannot pay now
        (docs/economics.md#budgets)."""
        count = len(self.goal.stages)
        return bool(count) and self.completions % count in self.goal.short_stages

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.goal.mission_id,
            "status": self.status,
            "current": _number(self.current),
            "target": _number(self.goal.threshold),
            "event": self.goal.event,
            "completion": self.goal.completion,
            "percent": self.percent,
            "completions": self.completions,
            "startedAt": iso(self.started_at),
            "expiresAt": iso(self.expires_at),
        } | self._live()

    def _live(self) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if self.goal.period is not None:
            extra["resetsAt"] = iso(self.resets_at)
        if self.goal.stages:
            extra["stagesReached"] = self.stages_reached
            extra["stagesTotal"] = len(self.goal.stages)
        return extra


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 6)


@dataclass(frozen=True)
class OfferState:
    """A mission or quest as the player stands on it (a mission's has one mission)."""

    kind: str
    status: str
    missions: tuple[MissionState, ...]

    @property
    def doable(self) -> bool:
        return any(m.status in DOABLE and not m.waits for m in self.missions)

    @property
    def missions_done(self) -> int:
        return sum(1 for m in self.missions if m.done)

    @property
    def percent(self) -> int:
        if self.kind == "mission":
            return self.missions[0].percent
        if not self.missions:
            return 0
        return math.floor(100 * self.missions_done / len(self.missions))

    def as_json(self) -> dict[str, Any]:
        if self.kind == "mission":
            mission = self.missions[0].as_json()
            del mission["id"]
            return mission
        return {
            "status": self.status,
            "percent": self.percent,
            "missionsCompleted": self.missions_done,
            "missionsTotal": len(self.missions),
            "missions": [m.as_json() for m in self.missions],
        }


@dataclass
class _Row:
    """A progress row with its mission's rule (and quest's name), as read."""

    goal: Goal
    quest_id: str | None
    quest_name: str | None
    status: str
    current: float
    completions: int
    started_at: datetime | None
    expires_at: datetime | None
    resets_at: datetime | None = None


@dataclass
class PlayerProgress:
    """A player's progress rows by mission, read once, judged at `now`: a recurring or
    pooled mission's row of the current period (a recurring one's player who took part
    before is on it from zero)."""

    now: datetime
    rows: dict[str, _Row] = field(default_factory=dict)
    offerwall_id: str = ""
    uid: str = ""

    def mission(self, goal: Goal) -> MissionState:
        row = self.rows.get(goal.mission_id)
        if row is None:
            resets = goal.period.ends(self.now) if goal.period is not None else None
            return MissionState(goal, NEW, resets_at=resets)
        status = {
            ProgressStatus.COMPLETED: COMPLETED,
            ProgressStatus.EXPIRED: EXPIRED,
            ProgressStatus.CAPPED: ENDED,
        }.get(status_at(row.status, row.expires_at, self.now), STARTED)
        return MissionState(
            goal,
            status,
            row.current,
            row.completions,
            row.started_at,
            row.expires_at,
            row.resets_at,
        )

    @cached_property
    def opened(self) -> frozenset[str]:
        """The ids of the offers the player opened: standalone missions and quests."""
        return frozenset(row.quest_id or mission for mission, row in self.rows.items())

    def touches(self, offer: Listed) -> bool:
        """Whether the player opened the offer (has progress on one of its missions)."""
        return offer.id in self.opened

    def offer(self, offer: Listed) -> OfferState:
        return self.of(offer.kind, offer.goals)

    def of(self, kind: str, goals: tuple[Goal, ...]) -> OfferState:
        missions = tuple(self.mission(g) for g in goals)
        return OfferState(kind, _overall(kind, missions), missions)

    def played(self) -> list[tuple[str, str, str, tuple[Goal, ...]]]:
        """Every offer the player opened, oldest first: (kind, id, name, goals), a quest's
        goals being the missions it started (a quest's link starts all of them)."""
        seen: dict[str, tuple[str, str, str, list[Goal]]] = {}
        for row in self.rows.values():
            if row.quest_id is None:
                seen[row.goal.mission_id] = ("mission", row.goal.mission_id, row.goal.title, [])
                seen[row.goal.mission_id][3].append(row.goal)
            else:
                entry = seen.setdefault(
                    row.quest_id, ("quest", row.quest_id, row.quest_name or "", [])
                )
                entry[3].append(row.goal)
        return [(k, i, n, tuple(g)) for k, i, n, g in seen.values()]


def _overall(kind: str, missions: tuple[MissionState, ...]) -> str:
    if kind == "mission":
        return missions[0].status
    statuses = {m.status for m in missions}
    if statuses <= {NEW}:
        return NEW
    if any(m.status in DOABLE for m in missions):
        return STARTED
    if all(m.done for m in missions):
        return COMPLETED
    return EXPIRED if EXPIRED in statuses else ENDED


def player_progress(
    conn: Connection, *, offerwall_id: str, uid: str, now: datetime
) -> PlayerProgress:
    """The player's progress on every mission they started, in one statement (an unknown
    uid has none: every offer is new to them)."""
    found = PlayerProgress(now, offerwall_id=offerwall_id, uid=uid)
    rows = conn.execute(_PLAYER_PROGRESS, {"offerwall_id": offerwall_id, "uid": uid})
    for r in rows:
        rule = rule_of(r)
        period = Period.of(r.recurrence)
        if r.pool_every is not None:
            period = Period(r.pool_every, r.pool_zone, r.pool_week)
        stages = tuple(
            (float(s["threshold"]), int(Decimal(str(s["payout"])) * 1_000_000))
            for s in r.stages or ()
        )
        goal = replace(
            goal_of(
                r.mission_id,
                r.title,
                bool(r.allow_multiple_conversions),
                int(r.payout_micros),
                rule,
            ),
            stages=stages,
            period=period,
            every_period=r.recurrence is not None,
        )
        if r.period and r.resets_at is not None and r.resets_at <= now:
            # A period that has turned: a recurring mission's player is on the new one
            # from zero; a pooled mission's needs a click again.
            if goal.every_period and period is not None:
                found.rows[r.mission_id] = _Row(
                    goal,
                    r.quest_id,
                    r.quest_name,
                    ProgressStatus.STARTED,
                    0.0,
                    0,
                    None,
                    None,
                    period.ends(now),
                )
            continue
        current, _ = standing(rule, r._mapping["count"], r.run, r.total, r.state, now)
        found.rows[r.mission_id] = _Row(
            goal,
            r.quest_id,
            r.quest_name,
            r.status,
            float(current or 0),
            int(r.completions or 0),
            r.started_at,
            r.expires_at,
            r.resets_at,
        )
    return found


# --- the offers API with filters or a player ----------------------------------------------


def list_for_player(
    *,
    conn: Connection,
    offerwall: ListingOfferwall,
    page: OfferPage,
    base_url: str,
    filters: OfferFilters,
    uid: str | None,
    now: datetime,
) -> bytes:
    """`GET /offerwall/offers` narrowed by filters and, with a uid, to what that player can
    still do, each offer with its `progress` and a tracking link that carries the uid."""
    listing = for_offerwall(LISTINGS.get(conn, offerwall.catalog_version), offerwall.id)
    progress = player_progress(conn, offerwall_id=offerwall.id, uid=uid, now=now) if uid else None
    country, first = filters.country, None
    if uid is not None:
        country, first = player_economics(conn, offerwall, uid, country, listing)
    pricing = pricing_for(conn, offerwall, country=country, first=first, now=now)
    chosen = select(listing, filters, pricing, progress)
    body = render_page(chosen, offerwall, page, base_url, pricing)
    if progress is not None and uid is not None:
        shown = chosen[page.offset : page.offset + page.limit] if page.limit else []
        rendered = {
            "mission": iter(body["data"]["missions"]),
            "quest": iter(body["data"]["quests"]),
        }
        suffix = "&" + urlencode({"uid": uid})
        for offer in shown:
            record = next(rendered[offer.kind])
            record["trackingLink"] += suffix
            state = progress.offer(offer)
            record["progress"] = state.as_json()
            _mark_stages(record, offer, state)
    return orjson.dumps(body)


def player_economics(
    conn: Connection,
    offerwall: ListingOfferwall,
    uid: str,
    country: str | None,
    listing: list[Listed],
) -> tuple[str | None, bool | None]:
    """What a player's pricing needs (docs/economics.md#payout-precedence): their country
    (`country` when given, else that of their latest click at the offerwall) and whether
    their next conversion would be their first there. Read only when it can change a
    price: the offerwall runs a promotion, or the country is unknown and some mission
    pays by country; otherwise (`country`, None) without a statement."""
    _, sales = ECONOMICS.get(conn, offerwall.catalog_version, offerwall.id)
    if not sales and (country is not None or not pays_by_country(listing)):
        return country, None
    row = conn.execute(_PLAYER_ECONOMICS, {"offerwall_id": offerwall.id, "uid": uid}).first()
    if row is None:
        return country, True
    return country or row.country, not row.converted


def pays_by_country(listing: list[Listed]) -> bool:
    """Whether a mission of the listing has payouts per country (kept per listing)."""
    kept = _BY_COUNTRY.get(id(listing))
    if kept is None or kept[0] is not listing:
        found = any(g.terms is not None and g.terms.by_country for o in listing for g in o.goals)
        kept = (listing, found)
        if len(_BY_COUNTRY) >= 64:
            _BY_COUNTRY.clear()
        _BY_COUNTRY[id(listing)] = kept
    return kept[1]


_BY_COUNTRY: dict[int, tuple[list[Listed], bool]] = {}


_PLAYER_ECONOMICS = sa.select(
    sa.select(_click.c.country)
    .where(_click.c.platform_user_id == _platform_user.c.id)
    .order_by(_click.c.id.desc())
    .limit(1)
    .scalar_subquery()
    .label("country"),
    sa.exists()
    .where(
        _conversion.c.platform_user_id == _platform_user.c.id,
        _conversion.c.status.in_([ConversionStatus.APPROVED, ConversionStatus.PENDING]),
        sa.not_(_conversion.c.test),
    )
    .label("converted"),
).where(
    _platform_user.c.offerwall_id == sa.bindparam("offerwall_id"),
    _platform_user.c.uid == sa.bindparam("uid"),
)


def _mark_stages(record: dict[str, Any], offer: Listed, state: OfferState) -> None:
    """Each stage of a ladder (a mission's, or a quest's mission's) with `reached`."""
    records = [record] if offer.kind == "mission" else record.get("missions", [])
    for rendered, mission in zip(records, state.missions, strict=False):
        for n, stage in enumerate(rendered.get("stages") or []):
            stage["reached"] = n < mission.stages_reached


def progress_document(
    *, conn: Connection, offerwall: ListingOfferwall, uid: str, now: datetime
) -> bytes:
    """`GET /offerwall/users/{uid}/progress`: every offer the player opened, oldest first,
    with its state and counts, and how many are in each state."""
    progress = player_progress(conn, offerwall_id=offerwall.id, uid=uid, now=now)
    listing = for_offerwall(LISTINGS.get(conn, offerwall.catalog_version), offerwall.id)
    listed = {o.id: o for o in listing}
    missions: list[dict[str, Any]] = []
    quests: list[dict[str, Any]] = []
    counts = dict.fromkeys((STARTED, COMPLETED, EXPIRED, ENDED), 0)
    for kind, offer_id, name, goals in progress.played():
        current = listed.get(offer_id)
        # A listed quest counts every open mission, also one added since the player began.
        state = progress.offer(current) if current else progress.of(kind, goals)
        counts[state.status] = counts.get(state.status, 0) + 1
        entry = {
            "id": offer_id,
            "title" if kind == "mission" else "name": name,
            "available": current is not None and state.doable,
            "progress": state.as_json(),
        }
        (missions if kind == "mission" else quests).append(entry)
    return orjson.dumps(
        {
            "statusCode": 200,
            "message": "OK",
            "uid": uid,
            "counts": counts,
            "data": {"missions": missions, "quests": quests},
        }
    )
