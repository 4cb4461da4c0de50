"""GET /offerwall/offers (docs/contract.md#offers-listing): what an approved offerwall may list.

Standalone missions and quests, newest first, in one combined list that pages cut across.
Only active, unexpired, uncapped offers; missions inside a quest appear only inside it.
Payouts are in the offerwall's currency; tracking links carry its owid.

Why one module of this size: the listing's SQL, its in-memory cache of the rendered offers
and the rendering are one hot path (`GET /offerwall/offers`), read together.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy import Connection
from sqlmodel import Session

from api.core.errors import ApiError
from api.core.money import in_currency
from api.core.periods import Period, period_picks
from api.economics import (
    NO_RULES,
    Applied,
    Sale,
    Terms,
    WallRules,
    best,
    budgets,
    payout_rules,
    resolve,
)
from api.economics.promotions import live_sales
from api.economics.terms import stage_payouts
from api.missions import index, open_offers
from api.missions.index import MissionSpec
from api.missions.rules import Rule
from models import Mission, Quest
from models.offer_schemas import mission_in, quest_fields
from models.tables import cap_count as _cap_count
from models.tables import mission as _mission
from models.tables import mission_pool as _mission_pool
from models.tables import quest as _quest
from models.types import utcnow

MAX_LIMIT = 100
DEFAULT_LIMIT = 20
# The largest offset taken (the largest 32-bit integer): far beyond any real listing and
# within every database's integers, so a larger one is a 400, never an overflow.
MAX_OFFSET = 2**31 - 1


@dataclass(frozen=True)
class OfferPage:
    limit: int
    offset: int


def invalid_parameter(name: str, raw: str, rule: str) -> ApiError:
    """400 `invalid_parameter`: "<name> must be <rule>.", naming the parameter."""
    return ApiError(
        400, "invalid_parameter", f"{name} must be {rule}.", [{"path": name, "value": raw[:50]}]
    )


def whole_number(name: str, raw: str | None, default: int) -> int:
    """A query parameter as a whole number of at least 0. A number of over 10 significant
    digits is past every bound here, so it is not converted (int() refuses over 4,300
    digits, and a database integer overflows far sooner)."""
    if raw is None or raw == "":
        return default
    if not raw.isascii() or not raw.isdigit():
        raise invalid_parameter(name, raw, "a whole number of at least 0")
    digits = raw.lstrip("0") or "0"
    return int(digits) if len(digits) <= 10 else MAX_OFFSET + 1


def parse_page(limit: str | None, offset: str | None) -> OfferPage:
    """limit (default 20, clamped to 100) and offset (default 0, at most MAX_OFFSET);
    400 when not a whole number of at least 0, or an offset over the maximum."""
    page_size = min(whole_number("limit", limit, DEFAULT_LIMIT), MAX_LIMIT)
    skip = whole_number("offset", offset, 0)
    if skip > MAX_OFFSET:
        raise invalid_parameter("offset", offset or "", f"at most {MAX_OFFSET}")
    return OfferPage(limit=page_size, offset=skip)


@dataclass(frozen=True)
class ListingOfferwall:
    """What a listing needs of the calling offerwall (and the catalog version, read with it)."""

    owid: str
    exchange_rate: float
    currency_decimals: int
    catalog_version: int
    id: str = ""  # the offerwall's row id (its progress and clicks refer to it)
    currency_code: str = "USD"  # each mission record's `currency`: what `payout` is in

    @classmethod
    def of(cls, row: Any) -> ListingOfferwall:
        """From a row of the offerwall table with the catalog version (`version`)."""
        return cls(
            row.owid,
            row.exchange_rate,
            row.currency_decimals,
            int(row.version or 0),
            row.id,
            row.currency_code,
        )


@dataclass(frozen=True)
class Goal:
    """What one mission of an offer asks of a player: its rule's (first) event, how
    completion is counted (count, consecutive, sum, max, min, distinct, days, streak or
    steps) and up to what (a sequence: its number of steps), and whether it pays again;
    a ladder's stages as (threshold, payout micros), and the period a recurring or pooled
    mission turns over with."""

    mission_id: str
    title: str
    event: str
    completion: str
    threshold: float
    repeatable: bool
    payout_micros: int
    stages: tuple[tuple[float, int], ...] = ()
    period: Period | None = None
    every_period: bool = False  # a recurring mission (a pooled one needs a click each period)
    # What it pays per country and with revenue (docs/economics.md); None: its payout only.
    terms: Terms | None = field(default=None, compare=False)
    # A ladder's stages (numbered from 0) its budget cannot pay now: a player whose next
    # stage is one of them waits (docs/economics.md#budgets).
    short_stages: frozenset[int] = field(default=frozenset(), compare=False)


@dataclass(frozen=True)
class Pool:
    """A rotating pool as the listing shows it: the missions a player's picks are drawn
    from, each with when it joined the draw (`open_offers.pool_members`)."""

    game_id: str
    name: str
    size: int
    period: Period
    members: tuple[tuple[str, datetime | None], ...]

    def picks(self, offerwall_id: str, uid: str, now: datetime) -> frozenset[str]:
        return period_picks(
            self.members,
            self.size,
            self.period,
            pool=self.name,
            offerwall_id=offerwall_id,
            uid=uid,
            now=now,
        )


@dataclass(frozen=True)
class Listed:
    """One offer of the combined list, its document in USD micros (rendered per offerwall),
    with what the filters and a player's progress need beside it."""

    kind: str  # "mission" or "quest"
    id: str
    doc: dict[str, Any]
    created_at: datetime | None = None
    goals: tuple[Goal, ...] = ()
    pool: Pool | None = None
    # The offerwalls at this mission's cap for them (`capPerOfferwall`): not listed there.
    closed_for: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return str(self.doc["name"] if self.kind == "quest" else self.doc["title"])

    @property
    def countries_include(self) -> list[str]:
        return self.doc["geotargeting"]["countriesInclude"]

    @property
    def countries_exclude(self) -> list[str]:
        return self.doc["geotargeting"]["countriesExclude"]

    @property
    def operating_systems(self) -> list[str]:
        return self.doc["operatingSystem"]

    @property
    def tags(self) -> list[str]:
        return self.doc["tags"]


def goal_of(
    mission_id: str,
    title: str,
    repeatable: bool,
    payout_micros: int,
    rule: Rule,
    live: MissionSpec | None = None,
) -> Goal:
    """A mission's goal; `live`: its spec, for the ladder and the period."""
    return Goal(
        mission_id,
        title,
        rule.event,
        rule.completion,
        rule.threshold,
        repeatable,
        payout_micros,
        live.stages if live else (),
        live.period if live else None,
        live.every_period if live else False,
    )


def mission_goal(m: Mission, pools: dict[tuple[str, str], Period] | None = None) -> Goal:
    """A stored mission's goal (`pools`: each pool's period; a pooled mission's is a day
    without them)."""
    return _goal(m, pools or {})


def _goal(m: Mission, pools: dict[tuple[str, str], Period]) -> Goal:
    spec = index.spec_of(m, pools)
    goal = goal_of(
        m.id, m.title, bool(m.allow_multiple_conversions), int(m.payout_micros), spec.rule, spec
    )
    return replace(goal, terms=spec.terms)


def build_listing(session: Session, now: datetime) -> tuple[list[Listed], datetime]:
    """Every open offer, newest first (standalone missions, and quests with their open
    missions), and the moment the listing must be built again: when the first of them
    expires, a scheduled one starts, a recurring one's period turns (its `resetsAt`) or
    one full for its period opens again."""
    open_mission = open_offers.mission_open_sql(_mission, now)
    inner = _mission.alias("inner")
    quest_has_open_mission = sa.exists().where(
        inner.c.quest_id == _quest.c.id, open_offers.mission_open_sql(inner, now)
    )
    missions = session.scalars(
        sa.select(Mission).where(_mission.c.quest_id.is_(None), open_mission)
    ).all()
    quests = session.scalars(
        sa.select(Quest).where(open_offers.quest_open_sql(_quest, now), quest_has_open_mission)
    ).all()
    inside: dict[str, list[Mission]] = {q.id: [] for q in quests}
    if quests:
        query = (
            sa.select(Mission)
            .where(_mission.c.quest_id.in_(list(inside)), open_mission)
            .order_by(_mission.c.quest_position)
        )
        for m in session.scalars(query):
            inside[str(m.quest_id)].append(m)
    moments = [o.expiration_date for o in [*missions, *quests] if o.expiration_date]
    moments += [m.expiration_date for ms in inside.values() for m in ms if m.expiration_date]
    moments += _next_starts(session, now)
    # Full for the period: out until it turns; full at an offerwall: out there only.
    every = [*missions, *(m for ms in inside.values() for m in ms)]
    capped = [m for m in every if open_offers.limited(m)]
    closed = open_offers.closed_missions(session.connection(), capped, None, now) if capped else {}
    moments += [moment for moment in closed.values() if moment is not None]
    closed_for = _closed_for(session, capped, now)
    # A ladder open to new players may not pay some players' next stage: judged per player.
    ladders = [m for m in capped if m.stages and m.revenue_micros and m.id not in closed]
    short = budgets.short_stages(session.connection(), ladders, now) if ladders else {}
    moments += [moment for stages in short.values() for moment in stages.values() if moment]
    missions = [m for m in missions if m.id not in closed]
    for quest_id in inside:
        inside[quest_id] = [m for m in inside[quest_id] if m.id not in closed]
    quests = [q for q in quests if inside[q.id]]
    pools = index.pool_periods(session)
    pool_of = _pools(session, pools, now)
    goals = {m.id: _goal(m, pools) for m in every}
    for mission_id, stages in short.items():
        goals[mission_id] = replace(goals[mission_id], short_stages=frozenset(stages))
    moments += [
        g.period.ends(now) for g in goals.values() if g.period is not None
    ]  # each period turning renews its `resetsAt`
    listed = [
        (
            m.created_at,
            m.id,
            Listed(
                "mission",
                m.id,
                mission_doc(m, goals[m.id], now),
                m.created_at,
                (goals[m.id],),
                pool_of.get((m.game_id, m.pool)) if m.pool else None,
                closed_for.get(m.id, frozenset()),
            ),
        )
        for m in missions
    ]
    listed += [
        (
            q.created_at,
            q.id,
            Listed(
                "quest",
                q.id,
                quest_doc(q, inside[q.id], goals, now),
                q.created_at,
                tuple(goals[m.id] for m in inside[q.id]),
            ),
        )
        for q in quests
    ]
    listed.sort(key=lambda item: (item[0], item[1]), reverse=True)
    valid_until = min(moments, default=datetime.max.replace(tzinfo=UTC))
    return [item[2] for item in listed], valid_until


def _next_starts(session: Session, now: datetime) -> list[datetime]:
    """When the next scheduled mission and quest start."""
    found = []
    for table in (_mission, _quest):
        moment = session.execute(
            sa.select(sa.func.min(table.c.start_date)).where(
                table.c.is_active, table.c.start_date > now
            )
        ).scalar()
        if moment is not None:
            found.append(moment)
    return found


def _closed_for(
    session: Session, capped: list[Mission], now: datetime
) -> dict[str, frozenset[str]]:
    """The offerwalls each mission with a cap per offerwall is full at."""
    per_wall = [m for m in capped if m.cap_per_offerwall]
    if not per_wall:
        return {}
    limits = {m.id: int(m.cap_per_offerwall or 0) for m in per_wall}
    rows = session.execute(
        sa.select(_cap_count.c.mission_id, _cap_count.c.scope, _cap_count.c.count).where(
            _cap_count.c.mission_id.in_(sorted(limits)),
            _cap_count.c.period == "total",
            _cap_count.c.scope != "",
        )
    )
    closed: dict[str, set[str]] = {}
    for mission_id, scope, count in rows:
        if count >= limits[mission_id]:
            closed.setdefault(mission_id, set()).add(scope)
    return {m: frozenset(walls) for m, walls in closed.items()}


def _pools(
    session: Session, periods: dict[tuple[str, str], Period], now: datetime
) -> dict[tuple[str, str], Pool]:
    members = open_offers.pool_members(session.connection(), now)
    sizes = dict(
        ((game, name), size)
        for game, name, size in session.execute(
            sa.select(_mission_pool.c.game_id, _mission_pool.c.name, _mission_pool.c.size)
        )
    )
    return {
        key: Pool(key[0], key[1], sizes[key], periods[key], tuple(ids))
        for key, ids in members.items()
        if key in sizes
    }


class ListingCache:
    """The combined list, one per database engine, rebuilt when the catalog version moves
    (any process changed a mission or quest, or one reached its cap) or when an offer in it
    expires."""

    def __init__(self) -> None:
        self._by_engine: weakref.WeakKeyDictionary[Any, tuple[int, datetime, list[Listed]]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def peek(self, engine: Any, version: int) -> list[Listed] | None:
        """The listing of `version` if it is built and current, without the database."""
        cached = self._by_engine.get(engine)
        if cached and cached[0] == version and utcnow() < cached[1]:
            return cached[2]
        return None

    def get(self, conn: Connection, version: int) -> list[Listed]:
        engine = conn.engine
        now = utcnow()
        if (cached := self.peek(engine, version)) is not None:
            return cached
        with self._lock:
            with Session(bind=conn) as session:
                listing, valid_until = build_listing(session, now)
            self._by_engine[engine] = (version, valid_until, listing)
            return listing


LISTINGS = ListingCache()


def list_offers(
    *, conn: Connection, offerwall: ListingOfferwall, page: OfferPage, base_url: str
) -> bytes:
    """The offers envelope of the original spec for one page, in the offerwall's currency,
    serialized. Pages are kept (per listing, offerwall, promotion and page) until the
    listing changes."""
    current = LISTINGS.get(conn, offerwall.catalog_version)
    listing = for_offerwall(current, offerwall.id)
    pricing = pricing_for(conn, offerwall, country=None, first=None, now=utcnow())
    key = _page_key(pricing, offerwall, page, base_url)
    pages = _PAGES.get(id(current))
    if pages is None or pages[0] is not current:
        pages = (current, {})
        _PAGES.clear()
        _PAGES[id(current)] = pages
    body = pages[1].get(key)
    if body is None:
        body = orjson.dumps(render_page(listing, offerwall, page, base_url, pricing))
        if len(pages[1]) < MAX_CACHED_PAGES:
            pages[1][key] = body
    return body


def kept_page(
    engine: Any, offerwall: ListingOfferwall, page: OfferPage, base_url: str
) -> bytes | None:
    """The page `list_offers` rendered already for the current listing, from memory only
    (None: call `list_offers`)."""
    current = LISTINGS.peek(engine, offerwall.catalog_version)
    economics = ECONOMICS.peek(engine, offerwall.catalog_version, offerwall.id)
    pages = _PAGES.get(id(current))
    if current is None or economics is None or pages is None or pages[0] is not current:
        return None
    pricing = _pricing(offerwall, *economics, country=None, first=None, now=utcnow())
    return pages[1].get(_page_key(pricing, offerwall, page, base_url))


def _page_key(
    pricing: Pricing, offerwall: ListingOfferwall, page: OfferPage, base_url: str
) -> tuple[Any, ...]:
    return (
        pricing.sale_key,
        offerwall.owid,
        offerwall.exchange_rate,
        offerwall.currency_decimals,
        offerwall.currency_code,
        base_url,
        page.offset,
        page.limit,
    )


def for_offerwall(listing: list[Listed], offerwall_id: str) -> list[Listed]:
    """The listing without the missions at their cap for this offerwall (the same list
    when none is), kept while the listing is the current one."""
    kept = _WALL_LISTS.get(id(listing))
    if kept is None or kept[0] is not listing:
        closed = any(offer.closed_for for offer in listing)
        kept = (listing, closed, {})
        _WALL_LISTS.clear()  # one listing is current at a time
        _WALL_LISTS[id(listing)] = kept
    if not kept[1]:
        return listing
    found = kept[2].get(offerwall_id)
    if found is None:
        found = [offer for offer in listing if offerwall_id not in offer.closed_for]
        if len(kept[2]) < MAX_CACHED_PAGES:
            kept[2][offerwall_id] = found
    return found


# Rendered pages of the current listing: {id(listing): (listing, {page key: bytes})}; a
# page key names the offerwall, so a listing narrowed for one is kept apart.
_PAGES: dict[int, tuple[list[Listed], dict[tuple[Any, ...], bytes]]] = {}
MAX_CACHED_PAGES = 1024
# The current listing, whether an offer in it is full at some offerwall, and the listing
# without those per offerwall: {id(listing): (listing, any full, {offerwall id: list})}.
_WALL_LISTS: dict[int, tuple[list[Listed], bool, dict[str, list[Listed]]]] = {}


def render_page(
    listing: list[Listed],
    offerwall: ListingOfferwall,
    page: OfferPage,
    base_url: str,
    pricing: Pricing | None = None,
) -> dict[str, Any]:
    chosen = listing[page.offset : page.offset + page.limit] if page.limit else []
    money = _Money(pricing or Pricing.plain(offerwall), chosen)
    owid = offerwall.owid
    return {
        "statusCode": 200,
        "message": "OK",
        "total": len(listing),
        "offset": page.offset,
        "limit": page.limit,
        "data": {
            "missions": [
                _render_mission(o.doc, money, f"{base_url}/missions/{o.id}?owid={owid}")
                for o in chosen
                if o.kind == "mission"
            ],
            "quests": [
                _render_quest(o.doc, money, f"{base_url}/quests/{o.id}?owid={owid}")
                for o in chosen
                if o.kind == "quest"
            ],
        },
    }


def render_offer(
    kind: str, offer_id: str, doc: dict[str, Any], offerwall: ListingOfferwall, base_url: str
) -> dict[str, Any]:
    """One offer's record as a page of the listing shows it to `offerwall` (the editors'
    preview; `render_page` does the same for a whole page)."""
    link = f"{base_url}/{kind}s/{offer_id}?owid={offerwall.owid}"
    render = _render_mission if kind == "mission" else _render_quest
    return render(doc, _Money(Pricing.plain(offerwall), []), link)


def _render_mission(doc: dict[str, Any], money: _Money, link: str) -> dict[str, Any]:
    return {**_with_stages(doc, money), "trackingLink": link, **money.payout(doc)}


def _render_quest(doc: dict[str, Any], money: _Money, link: str) -> dict[str, Any]:
    missions = [{**_with_stages(m, money), **money.payout(m)} for m in doc["missions"]]
    return {**doc, "trackingLink": link, "missions": missions}


def _whole(number: float) -> float | int:
    return int(number) if float(number).is_integer() else number


def _with_stages(doc: dict[str, Any], money: _Money) -> dict[str, Any]:
    """A ladder's stages with each payout in the offerwall's currency."""
    if not doc.get("stages"):
        return doc
    payouts = money.stages(doc)
    stages = [
        {"stage": n, "threshold": _whole(s["threshold"]), "payout": float(payout)}
        for n, (s, payout) in enumerate(zip(doc["stages"], payouts, strict=True), start=1)
    ]
    return {**doc, "stages": stages}


@dataclass(frozen=True)
class Pricing:
    """How one offerwall's payouts read for one player (docs/economics.md): its rules
    resolved for the player's country by `economics.resolve`, in its currency, with the
    promotion that applies (`applied`) boosting what the player gets."""

    exchange_rate: float
    decimals: int
    code: str
    rules: WallRules = NO_RULES
    country: str | None = None
    applied: Applied | None = None
    offerwall_id: str = ""

    @classmethod
    def plain(cls, offerwall: ListingOfferwall) -> Pricing:
        """Without rules or promotions (the editors' preview)."""
        return cls(offerwall.exchange_rate, offerwall.currency_decimals, offerwall.currency_code)

    @property
    def rules_key(self) -> str | None:
        """What tells apart what offerwalls with rules of their own are shown (those without
        any price alike)."""
        return None if self.rules is NO_RULES else self.offerwall_id

    @property
    def sale_key(self) -> tuple[str, datetime] | None:
        """What tells apart pages rendered under another promotion (or none)."""
        return None if self.applied is None else (self.applied.sale.id, self.applied.ends_at)

    def usd(self, mission_id: str, payout_micros: int, terms: Terms | None) -> int:
        """The network's payout of one conversion (USD micros), by the one precedence."""
        found = terms or Terms(mission_id, payout_micros)
        return resolve(found, self.rules, self.country).payout_micros

    def stage_usd(self, total_micros: int, terms: Terms | None, stages: list[int]) -> list[int]:
        if terms is not None and terms.stages:
            return stage_payouts(total_micros, terms)
        return stages

    def amount(self, payout_micros: int, *, boosted: bool = True) -> Decimal:
        """In the offerwall's currency, with the promotion unless `boosted` is False."""
        multiplier = self.applied.multiplier if boosted and self.applied else 100
        return in_currency(
            payout_micros,
            exchange_rate=self.exchange_rate,
            decimals=self.decimals,
            multiplier=multiplier,
        )

    def goal_amount(self, goal: Goal, *, boosted: bool = True) -> Decimal:
        return self.amount(
            self.usd(goal.mission_id, goal.payout_micros, goal.terms), boosted=boosted
        )


def pricing_for(
    conn: Connection,
    offerwall: ListingOfferwall,
    *,
    country: str | None,
    first: bool | None,
    now: datetime,
) -> Pricing:
    """The offerwall's pricing for a player in `country` whose next conversion is (or is
    not, or may be: None) their first there."""
    rules, sales = ECONOMICS.get(conn, offerwall.catalog_version, offerwall.id)
    return _pricing(offerwall, rules, sales, country=country, first=first, now=now)


def _pricing(
    offerwall: ListingOfferwall,
    rules: WallRules,
    sales: list[Sale],
    *,
    country: str | None,
    first: bool | None,
    now: datetime,
) -> Pricing:
    applied = best(sales, now, country=country, first=first) if sales else None
    return Pricing(
        offerwall.exchange_rate,
        offerwall.currency_decimals,
        offerwall.currency_code,
        rules,
        country,
        applied,
        offerwall.id,
    )


class EconomicsCache:
    """Every offerwall's payout rules and promotions not over, one copy per database
    engine, read again when the catalog version moves (a rule or promotion changed)."""

    def __init__(self) -> None:
        self._by_engine: weakref.WeakKeyDictionary[
            Any, tuple[int, dict[str, WallRules], dict[str, list[Sale]]]
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def peek(
        self, engine: Any, version: int, offerwall_id: str
    ) -> tuple[WallRules, list[Sale]] | None:
        """The offerwall's rules and sales if read for `version`, without the database."""
        cached = self._by_engine.get(engine)
        if cached is None or cached[0] != version:
            return None
        return cached[1].get(offerwall_id, NO_RULES), cached[2].get(offerwall_id, [])

    def get(
        self, conn: Connection, version: int, offerwall_id: str
    ) -> tuple[WallRules, list[Sale]]:
        cached = self._by_engine.get(conn.engine)
        if cached is None or cached[0] != version:
            with self._lock:
                cached = (version, payout_rules.load(conn), live_sales(conn, None, utcnow()))
                self._by_engine[conn.engine] = cached
        return cached[1].get(offerwall_id, NO_RULES), cached[2].get(offerwall_id, [])


ECONOMICS = EconomicsCache()


class _Money:
    """USD micros → the offerwall's currency, as the JSON numbers the API shows, by its
    pricing; each mission's terms from the listing's goals."""

    def __init__(self, pricing: Pricing, offers: list[Listed]):
        self.pricing = pricing
        self.terms = {g.mission_id: g.terms for o in offers for g in o.goals}

    def _usd(self, doc: dict[str, Any]) -> int:
        return self.pricing.usd(doc["id"], doc["payout"], self.terms.get(doc["id"]))

    def payout(self, doc: dict[str, Any]) -> dict[str, Any]:
        """A record's `payout`, the code of its currency (`currency`) and, under a
        promotion, `basePayout` and `promotion`."""
        usd_micros = self._usd(doc)
        pricing = self.pricing
        found: dict[str, Any] = {
            "payout": float(pricing.amount(usd_micros)),
            "currency": pricing.code,
        }
        if pricing.applied is not None:
            found["basePayout"] = float(pricing.amount(usd_micros, boosted=False))
            found["promotion"] = pricing.applied.as_json()
        return found

    def stages(self, doc: dict[str, Any]) -> list[Decimal]:
        """A ladder's stage payouts, in the currency, boosted as the mission's payout."""
        usd_micros = self._usd(doc)
        listed = [int(s["payout"]) for s in doc["stages"]]
        parts = self.pricing.stage_usd(usd_micros, self.terms.get(doc["id"]), listed)
        return [self.pricing.amount(part) for part in parts]


def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# What a listing leaves out of a definition: where the link goes (the tracking link stands
# for it), a mission's time limit and rule, and its fraud screening (a limit known is a
# limit a cheater stays under), and its economics. Every other field is listed as defined.
_UNLISTED = {
    "destinationUrl",
    "timeLimitSeconds",
    "rule",
    "missions",
    "minCompletionSeconds",
    "maxEventValue",
    "maxTraitField",
    "maxTraitValue",
    "maxEventsPerMinute",
    "fraudActions",
    # The economics: what the game pays and its budget are the network's business, and
    # `payout` is already the one that applies to the asking offerwall and player.
    "revenue",
    "payouts",
    "budget",
}
# A mission inside a quest shows what differs from mission to mission; the rest is the quest's.
_QUEST_LEVEL = {"thumbnail", "expirationDate", "startDate", "previewUrl", "trackingLink"}
_QUEST_LEVEL |= {"isActive"}
_QUEST_LEVEL |= {"operatingSystem", "geotargeting", "tags"}


# Listed only when set, so an offer without live operations is listed as it always was.
_LIVE_FIELDS = ("startDate", "recurrence", "stages", "periodCaps", "capPerOfferwall", "pool")


def _without_unset(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if not (k in _LIVE_FIELDS and v is None)}


def mission_doc(
    m: Mission, goal: Goal | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """The original spec's mission record: its definition (`mission_in`) as listed;
    payout in USD micros (a ladder's stages' too), trackingLink per offerwall; a recurring
    or pooled mission's `resetsAt` as of `now`."""
    doc = _without_unset(mission_in(m).model_dump(mode="json", exclude=_UNLISTED))
    doc |= {
        "expirationDate": iso(m.expiration_date),
        "trackingLink": None,
        "payout": m.payout_micros,
    }
    if m.start_date is not None:
        doc["startDate"] = iso(m.start_date)
    if goal is not None and goal.stages:
        doc["stages"] = [{"threshold": t, "payout": p} for t, p in goal.stages]
    if goal is not None and goal.period is not None:
        doc["resetsAt"] = iso(goal.period.ends(now or utcnow()))
    return doc


def quest_doc(
    q: Quest,
    missions: list[Mission],
    goals: dict[str, Goal] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    doc = _without_unset(quest_fields(q).model_dump(mode="json", exclude=_UNLISTED))
    if q.start_date is not None:
        doc["startDate"] = iso(q.start_date)
    inside = [
        {
            k: v
            for k, v in mission_doc(m, (goals or {}).get(m.id), now).items()
            if k not in _QUEST_LEVEL
        }
        for m in missions
    ]
    return doc | {
        "expirationDate": iso(q.expiration_date),
        "trackingLink": None,
        "missions": inside,
    }
