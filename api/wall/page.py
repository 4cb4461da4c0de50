"""The hosted wall's pages (docs/publisher-integration.md#the-hosted-wall): who is asking,
what they can do, and the HTML.

`open_wall` checks the link (the offerwall is approved, the uid is there, `sig` is right when
the offerwall requires it or the link carries one); `wall_view` chooses the offers the way
the offers API does for that player (`api.listing.players.select`), then narrows them by the
player's country and operating system as their tracking links would; `render` fills the
templates in the player's language. The page loads nothing from another host but the
images the offerwall and the offers' designers configured.

Why one module of this size: the link's checks, the player's view and its HTML are one
request on the wall's hot path, with the caches it keeps (the listing's index per
audience, the cards' HTML) beside the code that fills them, read and measured as one; the
publisher's preview draws with the same cards.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape
from sqlalchemy import Connection

from api.core.crypto import SecretBox, open_api_key
from api.core.refusals import N_
from api.economics import Applied, Sale
from api.listing import (
    COMPLETED,
    DOABLE,
    LISTINGS,
    NEW,
    STARTED,
    Goal,
    Listed,
    ListingIndex,
    ListingOfferwall,
    MissionState,
    OfferState,
    hidden_offers,
    player_progress,
    targets,
)
from api.listing.offers import Pricing, pricing_for
from api.listing.players import player_economics
from api.missions import index
from api.publishers import Theme, safe_image, signature
from api.wall.i18n import Language, translations
from models import OfferwallStatus
from models.schemas import NUL
from models.tables import offerwall as _offerwall
from models.tracking import TEST_UID

PAGE_SIZE = 20
MAX_PARAM = 255
MAX_PAGE = 10_000
# Offers the player has in progress, and finished ones, shown at most.
MAX_CONTINUING = 50
MAX_FINISHED = 20

_FIND_WALL = sa.select(
    _offerwall.c.id,
    _offerwall.c.owid,
    _offerwall.c.name,
    _offerwall.c.status,
    _offerwall.c.api_key_sealed,
    _offerwall.c.api_key_previous_sealed,
    _offerwall.c.api_key_previous_until,
    _offerwall.c.currency_name,
    _offerwall.c.currency_code,
    _offerwall.c.exchange_rate,
    _offerwall.c.currency_decimals,
    _offerwall.c.wall_title,
    _offerwall.c.wall_logo_url,
    _offerwall.c.wall_accent,
    _offerwall.c.wall_currency_icon,
    _offerwall.c.wall_origins,
    _offerwall.c.wall_require_signature,
    index.VERSION_SUBQUERY,
).where(_offerwall.c.owid == sa.bindparam("owid"))


class WallRefusal(Exception):
    """A wall link that is not served: the status and what to tell the player."""

    def __init__(self, status: int, title: str, message: str):
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


@dataclass(frozen=True)
class Wall:
    """The offerwall a wall link names, with what its pages need."""

    listing: ListingOfferwall
    name: str
    theme: Theme
    origins: tuple[str, ...]
    require_signature: bool
    api_key: str = field(repr=False)


@dataclass(frozen=True)
class Visit:
    """The player's part of a wall link, kept in every link the page makes."""

    owid: str
    uid: str
    sig: str = ""
    subs: tuple[str, str, str] = ("", "", "")
    lang: str = ""

    @property
    def is_test(self) -> bool:
        """The offerwall's test player (the publisher trying their wall)."""
        return self.uid == TEST_UID

    def query(self, **extra: str | int) -> str:
        params: dict[str, str | int] = {"owid": self.owid, "uid": self.uid}
        if self.sig:
            params["sig"] = self.sig
        for number, value in enumerate(self.subs, start=1):
            if value:
                params[f"sub{number}"] = value
        if self.lang:
            params["lang"] = self.lang
        params.update(extra)
        return urlencode(params)

    def tracking_query(self, language: str) -> str:
        """The query of this player's tracking links: owid, uid, the subs, and the wall's
        language (a refused click's page speaks it)."""
        params = {"owid": self.owid, "uid": self.uid}
        for number, value in enumerate(self.subs, start=1):
            if value:
                params[f"platform_sub{number}"] = value
        params["lang"] = language
        return urlencode(params)

    def tracking_link(self, kind: str, offer_id: str, language: str) -> str:
        return f"/{kind}s/{offer_id}?{self.tracking_query(language)}"


def read_visit(params: Mapping[str, str | None]) -> Visit:
    """The link's parameters, checked: 400 for a missing owid or uid, a value over 255
    characters or one with a NUL."""
    values = {name: params.get(name) or "" for name in ("owid", "uid", "sig", "lang")}
    values |= {f"sub{n}": params.get(f"sub{n}") or "" for n in (1, 2, 3)}
    for value in values.values():
        if NUL in value or len(value) > MAX_PARAM:
            raise WallRefusal(400, N_("Invalid link"), N_("This link is not valid."))
    if not values["owid"] or not values["uid"]:
        raise WallRefusal(400, N_("Invalid link"), N_("This link needs an owid and a uid."))
    return Visit(
        values["owid"],
        values["uid"],
        values["sig"],
        (values["sub1"], values["sub2"], values["sub3"]),
        values["lang"],
    )


def open_wall(conn: Connection, box: SecretBox, visit: Visit, *, now: datetime) -> Wall:
    """The approved offerwall of the link, its signature checked: 404 unknown or not
    approved; 403 a missing `sig` where one is required, or a wrong one anywhere. A `sig`
    made with the replaced API key counts until that key's grace period ends at `now`,
    as the key does for the offers API."""
    row = conn.execute(_FIND_WALL, {"owid": visit.owid}).first()
    if row is None or row.status != OfferwallStatus.APPROVED or not row.api_key_sealed:
        raise WallRefusal(404, N_("Offers not found"), N_("This offer wall does not exist."))
    api_key = open_api_key(box, row.api_key_sealed, owid=row.owid)
    if visit.sig or row.wall_require_signature:
        keys = [api_key]
        until = row.api_key_previous_until
        if row.api_key_previous_sealed and until is not None and until > now:
            keys.append(open_api_key(box, row.api_key_previous_sealed, owid=row.owid))
        given = visit.sig.lower()
        # Every key is compared, each in constant time, whichever matches.
        matches = [hmac.compare_digest(signature(k, visit.owid, visit.uid), given) for k in keys]
        if not any(matches):
            raise WallRefusal(
                403, N_("Invalid link"), N_("This link is not valid for this player.")
            )
    theme = Theme(
        title=row.wall_title or row.name,
        logo_url=row.wall_logo_url,
        accent=row.wall_accent,
        currency_icon=row.wall_currency_icon,
        currency_name=row.currency_name,
    )
    listing = ListingOfferwall.of(row)
    origins = tuple(str(o) for o in (row.wall_origins or []))
    return Wall(listing, row.name, theme, origins, bool(row.wall_require_signature), api_key)


# --- what the page shows --------------------------------------------------------------------


@dataclass(frozen=True)
class MissionLine:
    """A mission inside a quest card."""

    title: str
    payout: str
    state: MissionState
    base_payout: str = ""  # without the promotion, when one applies


@dataclass(frozen=True)
class StageLine:
    """One stage of a ladder on a card: its target, its payout, and whether it is reached."""

    target: str
    payout: str
    reached: bool
    base_payout: str = ""


@dataclass(frozen=True)
class Card:
    kind: str
    id: str
    name: str
    description: str
    thumbnail: str
    instructions: str
    requirements: str
    payout: str
    state: OfferState
    link: str = ""
    missions: tuple[MissionLine, ...] = ()
    stages: tuple[StageLine, ...] = ()  # a ladder's
    resets_at: str = ""  # when a recurring or pooled mission's period ends
    pooled: bool = False  # a pool's: offered until then (a recurring one starts over)
    base_payout: str = ""  # the payout without the promotion, when one applies


@dataclass(frozen=True)
class PromotionBanner:
    """The promotion at the top of the wall, from a record's `promotion`
    (`{"name", "multiplier", "endsAt", "firstConversionOnly"}`)."""

    name: str
    multiplier: str  # as the language writes it: "2", "1,5"
    ends_at: str  # ISO 8601 UTC, for the countdown's script
    ends_text: str  # "6 Dec, 22:00 UTC": what a page without scripts shows
    first_only: bool
    hundredths: int  # 250 for 2.5×: what the payouts are multiplied by
    seconds_left: int  # at `now`: the countdown as the page is sent (the script runs it on)


def promotion_banner(
    promotion: Mapping[str, Any], language: Language, now: datetime
) -> PromotionBanner:
    """A record's `promotion` as the wall's banner shows it at `now`."""
    ends = datetime.fromisoformat(str(promotion["endsAt"]).replace("Z", "+00:00"))
    multiplier = Decimal(str(promotion["multiplier"]))
    return PromotionBanner(
        name=str(promotion["name"]),
        multiplier=language.number(float(multiplier)),
        ends_at=ends.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        ends_text=language.moment(ends),
        first_only=bool(promotion.get("firstConversionOnly")),
        hundredths=int(multiplier * 100),
        seconds_left=max(0, int((ends - now).total_seconds())),
    )


@dataclass(frozen=True)
class WallView:
    theme: Theme
    language: Language
    visit: Visit
    continuing: list[Card]
    new_cards: Markup  # the page's new offers, rendered (`_FromListing.new_cards`)
    new_count: int
    finished: list[Card]
    page: int
    pages: int
    total: int
    promotion: PromotionBanner | None = None


def _card(
    kind: str,
    offer_id: str,
    name: str,
    goals: tuple[Goal, ...],
    state: OfferState,
    pricing: Pricing,
    language: Language,
    *,
    doc: dict[str, Any] | None = None,
    link: str = "",
) -> Card:
    """An offer's card; a finished one (no longer listed) has no document and no link.
    Its payouts are the offerwall's for the player (`pricing`: its rules, and its
    promotion, each boosted payout beside the amount without it)."""
    doc, places = doc or {}, pricing.decimals
    sale = pricing.applied is not None
    amounts = [pricing.goal_amount(g) for g in goals]
    bases = [pricing.goal_amount(g, boosted=False) for g in goals] if sale else []
    lines = tuple(
        MissionLine(
            g.title,
            language.amount(a, places),
            m,
            language.amount(bases[n], places) if bases else "",
        )
        for n, (g, a, m) in enumerate(zip(goals, amounts, state.missions, strict=True))
    )
    return Card(
        kind=kind,
        id=offer_id,
        name=name,
        description=doc.get("description") or "",
        thumbnail=safe_image(doc.get("thumbnail")),
        instructions=doc.get("instructions") or "",
        requirements=doc.get("requirements") or "",
        payout=language.amount(sum(amounts, Decimal(0)), places),
        base_payout=language.amount(sum(bases, Decimal(0)), places) if bases else "",
        state=state,
        link=link,
        missions=lines if kind == "quest" else (),
        **(_live(goals[0], state.missions[0], pricing, language) if kind == "mission" else {}),
    )


def _live(
    goal: Goal, mission: MissionState, pricing: Pricing, language: Language
) -> dict[str, Any]:
    """A mission card's ladder (each stage's part of the payout, boosted by a promotion
    beside the amount without it) and when its period ends."""
    places = pricing.decimals
    reached = mission.stages_reached
    usd = pricing.usd(goal.mission_id, goal.payout_micros, goal.terms)
    parts = pricing.stage_usd(usd, goal.terms, [p for _, p in goal.stages])
    sale = pricing.applied is not None
    stages = tuple(
        StageLine(
            language.number(threshold),
            language.amount(pricing.amount(part), places),
            n < reached,
            language.amount(pricing.amount(part, boosted=False), places) if sale else "",
        )
        for n, ((threshold, _), part) in enumerate(zip(goal.stages, parts, strict=True))
    )
    resets = language.moment(mission.resets_at) if mission.resets_at is not None else ""
    pooled = goal.period is not None and not goal.every_period
    return {"stages": stages, "resets_at": resets, "pooled": pooled}


def _listed_card(
    offer: Listed, state: OfferState, pricing: Pricing, language: Language, link: str
) -> Card:
    goals, doc = offer.goals, offer.doc
    return _card(
        offer.kind, offer.id, offer.name, goals, state, pricing, language, doc=doc, link=link
    )


class _FromListing:
    """What the wall makes of one listing, kept while the listing stays the same: the
    offers open to each (country, OS), and each new offer's card as HTML (a new offer
    looks the same to every player of an offerwall but for the query of its link)."""

    MAX_ENTRIES = 8192
    # An audience's index holds a position per offer (46 KiB for 1,000 offers): at most
    # this many are kept, about 23 MiB; a rarer audience's is built for its request.
    MAX_AUDIENCES = 512

    def __init__(self) -> None:
        self.listing: list[Listed] | None = None
        self.pooled = False
        self.closed_somewhere = False
        self.targeted: dict[tuple[str | None, str | None, str | None], ListingIndex] = {}
        self.cards: dict[tuple[Any, ...], str] = {}

    def of(self, listing: list[Listed]) -> _FromListing:
        if self.listing is not listing:
            self.targeted, self.cards = {}, {}
            self.listing = listing
            # A pool's missions are narrowed to each player's picks.
            self.pooled = any(offer.pool is not None for offer in listing)
            self.closed_somewhere = any(offer.closed_for for offer in listing)
        return self

    def open_to(self, country: str | None, os_name: str | None, offerwall_id: str) -> ListingIndex:
        """The offers open to players of this country and OS at this offerwall (a mission
        at its cap for the offerwall is not), indexed: the same index while the listing
        stays the same."""
        closed_here = offerwall_id if self.closed_somewhere else None
        key = (country, os_name, closed_here)
        found = self.targeted.get(key)
        if found is None:
            assert self.listing is not None
            found = ListingIndex.of(
                [
                    o
                    for o in self.listing
                    if targets(o, country=country, os_name=os_name)
                    and (closed_here is None or closed_here not in o.closed_for)
                ]
            )
            if len(self.targeted) < self.MAX_AUDIENCES:
                self.targeted[key] = found
        return found

    def new_cards(
        self,
        offers: list[Listed],
        pricing: Pricing,
        theme: Theme,
        language: Language,
        now: datetime,
    ) -> str:
        """The cards of offers new to the player, their links waiting for `_QUERY` (the
        listing is built again when a period turns, and its cards with it)."""
        parts = []
        for offer in offers:
            key = (
                offer.id,
                theme,
                language.code,
                pricing.exchange_rate,
                pricing.decimals,
                pricing.country,  # the mission's payouts by country
                pricing.rules_key,  # the offerwall's own payout rules
                pricing.sale_key,
            )
            html = self.cards.get(key)
            if html is None:
                state = OfferState(offer.kind, NEW, tuple(_new(g, now) for g in offer.goals))
                link = f"/{offer.kind}s/{offer.id}?{_QUERY}"
                card = _listed_card(offer, state, pricing, language, link)
                html = render("card.html", language=language, nonce="", theme=theme, c=card)
                if len(self.cards) < self.MAX_ENTRIES:
                    self.cards[key] = html
            parts.append(html)
        return "".join(parts)


def _new(goal: Goal, now: datetime) -> MissionState:
    resets = goal.period.ends(now) if goal.period is not None else None
    return MissionState(goal, NEW, resets_at=resets)


# Stands for the query of a new offer's link until the player's is put in (letters only:
# escaping leaves it as it is).
_QUERY = "qwplayerquery"
_FROM_LISTING = _FromListing()


def wall_view(
    conn: Connection,
    wall: Wall,
    visit: Visit,
    *,
    language: Language,
    country: str | None,
    os_name: str | None,
    page: int,
    now: datetime,
) -> WallView:
    listing = wall.listing
    progress = player_progress(conn, offerwall_id=listing.id, uid=visit.uid, now=now)
    # What the player can do here: the offers API's list for them (newest first,
    # `api.listing.players.select`), narrowed to what their country and device may open.
    derived = _FROM_LISTING.of(LISTINGS.get(conn, listing.catalog_version))
    index = derived.open_to(country, os_name, listing.id)
    targeted = index.listing
    # Priced as the offers API prices them for this player: their country's payout rules
    # and the promotion their next conversion would get.
    priced_for, first = player_economics(conn, listing, visit.uid, country, derived.listing or [])
    pricing = pricing_for(conn, listing, country=priced_for, first=first, now=now)
    # What the player can do: the listing without what `hidden_offers` hides from them
    # (`api.listing.players.select`). What they opened and can still do is in progress;
    # the rest is new to them. The listing holds a thousand offers: only the pools and the
    # few offers the player opened are looked at, through the listing's index.
    judged = progress.rows or derived.pooled
    hidden = hidden_offers(index, progress) if judged else set()
    opened = progress.opened
    left_out = index.positions(hidden | opened)
    continuing = [targeted[at] for at in sorted(index.positions(opened - hidden))]
    new_total = len(targeted) - len(left_out)
    pages = max(1, -(-new_total // PAGE_SIZE))
    page = min(max(page, 1), pages)
    shown = index.page_without(left_out, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    cards = derived.new_cards(shown, pricing, wall.theme, language, now)
    finished: list[Card] = []
    for kind, offer_id, name, goals in reversed(progress.played()):
        if offer_id in index.position and offer_id not in hidden:  # doable: listed above
            continue
        state = progress.of(kind, goals)
        if state.status in DOABLE:  # no longer offered here (ended, or not for this device)
            continue
        finished.append(_card(kind, offer_id, name, goals, state, pricing, language))
        if len(finished) >= MAX_FINISHED:
            break
    return WallView(
        theme=wall.theme,
        language=language,
        visit=visit,
        continuing=[
            _listed_card(
                o,
                progress.offer(o),
                pricing,
                language,
                visit.tracking_link(o.kind, o.id, language.code),
            )
            for o in continuing[:MAX_CONTINUING]
        ],
        # Template output (escaped when rendered) with the escaped query put in.
        new_cards=Markup(cards.replace(_QUERY, str(escape(visit.tracking_query(language.code))))),  # noqa: S704
        new_count=len(shown),
        finished=finished,
        page=page,
        pages=pages,
        total=new_total + len(continuing),
        promotion=None
        if pricing.applied is None
        else promotion_banner(pricing.applied.as_json(), language, now),
    )


# --- HTML -------------------------------------------------------------------------------


@cache
def environment(language: str) -> Environment:
    """A template environment per language (its gettext installed once, never swapped)."""
    env = Environment(
        loader=PackageLoader("api.wall", "templates"),
        autoescape=select_autoescape(default=True),
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # templates change with a release, never while serving
    )
    env.install_gettext_translations(translations(language), newstyle=True)  # type: ignore[attr-defined]
    env.globals["COMPLETED"] = COMPLETED
    return env


def render(template: str, *, language: Language, nonce: str, **context: Any) -> str:
    page = environment(language.code).get_template(template)
    return page.render(language=language, nonce=nonce, **context)


def render_wall(view: WallView, *, nonce: str) -> str:
    def cards(shown: list[Card]) -> Markup:
        # Template output, escaped when each card was rendered.
        return Markup("".join(card_html(c, view.theme, view.language) for c in shown))  # noqa: S704

    return render(
        "wall.html",
        language=view.language,
        nonce=nonce,
        theme=view.theme,
        view=view,
        continuing=cards(view.continuing),
        finished=cards(view.finished),
    )


# A card's HTML with its link waiting to be put in (letters and digits only: escaping
# leaves it as it is), by (card without its link, theme, language): cards of players at
# the same point of the same offer look alike but for their links. Emptied when full.
_LINK = "qwcardlink7f3a"
_CARD_HTML: dict[tuple[Card, Theme, str], str] = {}
MAX_CARD_HTML = 8192


def card_html(card: Card, theme: Theme, language: Language) -> str:
    """One card as HTML: rendered once per look (a card template costs about 80 µs, the
    wall shows up to 50 in progress), its link put in each time."""
    key = (replace(card, link=_LINK if card.link else ""), theme, language.code)
    try:
        html = _CARD_HTML.get(key)
    except TypeError:  # a value that cannot be a key: rendered as it is
        return render("card.html", language=language, nonce="", theme=theme, c=card)
    if html is None:
        html = render("card.html", language=language, nonce="", theme=theme, c=key[0])
        if len(_CARD_HTML) >= MAX_CARD_HTML:
            _CARD_HTML.clear()
        _CARD_HTML[key] = html
    return html.replace(_LINK, str(escape(card.link))) if card.link else html


# --- the publisher's preview ------------------------------------------------------------

_SAMPLE_GOALS = (
    Goal("sample-1", "Win 10 matches", "MATCH_WON", "count", 10, False, 1_500_000),
    Goal("sample-2", "Reach level 20", "LEVEL_UP", "count", 20, False, 3_000_000),
    Goal("sample-3", "Finish the tutorial", "TUTORIAL_DONE", "count", 1, False, 250_000),
    Goal("sample-4", "Score 5,000 points", "GAME_END", "sum", 5000, False, 750_000),
)


def preview_html(
    theme: Theme,
    *,
    exchange_rate: float = 1.0,
    decimals: int = 2,
    language: str = "en",
    promotion: Mapping[str, Any] | None = None,
) -> str:
    """The wall as a player would see it with `theme`, filled with sample offers: one in
    progress, one new, one quest half done. The workspace shows it while the publisher
    edits the theme (nothing is saved or read from the database), with the theme of the
    unsaved values (`wall_settings.preview_theme`); the Promotions page with a
    `promotion` (a record's, as `promotion_banner` reads it): its banner, and every
    payout boosted beside the amount without it."""
    lang = Language(language)
    now = datetime.now(UTC)
    banner = promotion_banner(promotion, lang, now) if promotion is not None else None
    applied = None
    if banner is not None:
        ends = datetime.fromisoformat(banner.ends_at.replace("Z", "+00:00"))
        sale = Sale("preview", banner.name, banner.hundredths, now, ends)
        applied = Applied(sale, ends)
    wall = Pricing(exchange_rate, decimals, "", applied=applied)
    win, level, tutorial, score = _SAMPLE_GOALS
    started = OfferState("mission", STARTED, (MissionState(win, STARTED, 3),))
    new = OfferState("mission", "new", (MissionState(level, "new"),))
    quest = OfferState(
        "quest",
        STARTED,
        (MissionState(tutorial, COMPLETED, 1, 1), MissionState(score, STARTED, 1800)),
    )
    sample = {"description": "A sample offer: your players see your real ones."}
    fresh = _card(
        "mission",
        level.mission_id,
        level.title,
        (level,),
        new,
        wall,
        lang,
        doc=sample,
        link="#",
    )
    view = WallView(
        theme=theme,
        language=lang,
        visit=Visit("preview", "player"),
        continuing=[
            _card(
                "mission",
                win.mission_id,
                win.title,
                (win,),
                started,
                wall,
                lang,
                doc=sample,
                link="#",
            ),
            _card(
                "quest",
                "sample-q",
                "Season opener",
                (tutorial, score),
                quest,
                wall,
                lang,
                link="#",
            ),
        ],
        new_cards=Markup(  # noqa: S704 (a template's output, escaped when rendered)
            render("card.html", language=lang, nonce="", theme=theme, c=fresh)
        ),
        new_count=1,
        finished=[],
        page=1,
        pages=1,
        total=3,
        promotion=banner,
    )
    page = render_wall(view, nonce="preview")
    # Shown in a sandboxed frame: a link there opens nothing (the frame allows no popups)
    # rather than loading a page into the frame.
    return page.replace("<head>", '<head>\n<base target="_blank">', 1)
