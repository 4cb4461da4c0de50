"""The hosted wall while a promotion runs (docs/publisher-integration.md#promotions): the
banner with its name, multiplier and countdown (the end's time without a script), every
payout boosted beside the amount without it (struck, with words for screen readers), in
English and German; and what GET /wall shows for a stored promotion: only while it
applies to the player, its countdown's script allowed by the page's policy only then."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

from markupsafe import Markup

from api.core.db import write_session
from api.economics import Applied, PromotionIn, Sale
from api.economics import promotions as sales
from api.listing import COMPLETED, STARTED, Goal, MissionState, OfferState
from api.listing.offers import Pricing
from api.publishers import Theme
from api.wall.i18n import Language
from api.wall.page import (
    Visit,
    WallView,
    _card,
    preview_html,
    promotion_banner,
    render,
    render_wall,
)
from models.types import utcnow
from tests.api.listing.test_wall import DE, US, wall_page
from tests.factories import make_mission

NOW = datetime(2026, 12, 4, 19, 0, tzinfo=UTC)
RECORD = {
    "name": "Double Gems Weekend",
    "multiplier": 2.0,
    "endsAt": "2026-12-06T23:05:00Z",
    "firstConversionOnly": False,
}
GEMS = Theme(title="GemWall", currency_name="GEM")
LADDER = Goal(
    "m-ladder",
    "Climb",
    "LEVEL_UP",
    "count",
    3,
    False,
    1_500_000,
    stages=((1.0, 500_000), (3.0, 1_000_000)),
)
SINGLE = Goal("m-1", "Reach level 20", "LEVEL_UP", "count", 20, False, 1_000_000)
TUTORIAL = Goal("m-2", "Finish the tutorial", "TUTORIAL_DONE", "count", 1, False, 250_000)


class Text(HTMLParser):
    """A page's text as a screen reader reads it (hidden helper text included), and the
    text a sighted player sees struck through."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.struck: list[str] = []
        self._in_s = 0
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag == "s":
            self._in_s += 1
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "s":
            self._in_s -= 1
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if self._skip:
            return
        self.parts.append(data)
        if self._in_s:
            self.struck.append(data)

    @property
    def text(self) -> str:
        return re.sub(r"\s+", " ", "".join(self.parts))


def read(html: str) -> Text:
    parsed = Text()
    parsed.feed(html)
    return parsed


def _view(language: str = "en", record: dict | None = RECORD) -> str:
    lang = Language(language)
    banner = promotion_banner(record, lang, NOW) if record else None
    applied = None
    if banner is not None:
        ends = datetime.fromisoformat(banner.ends_at.replace("Z", "+00:00"))
        applied = Applied(Sale("s", banner.name, banner.hundredths, NOW, ends), ends)
    wall = Pricing(100.0, 0, "GEM", applied=applied)
    new = OfferState("mission", "new", (MissionState(SINGLE, "new"),))
    climbing = OfferState("mission", STARTED, (MissionState(LADDER, STARTED, 1, 1),))
    quest = OfferState(
        "quest",
        STARTED,
        (MissionState(TUTORIAL, COMPLETED, 1, 1), MissionState(SINGLE, STARTED, 5)),
    )
    fresh = _card("mission", "m-1", "Reach level 20", (SINGLE,), new, wall, lang)
    view = WallView(
        theme=GEMS,
        language=lang,
        visit=Visit("ow", "alice"),
        continuing=[
            _card("mission", "m-ladder", "Climb", (LADDER,), climbing, wall, lang),
            _card("quest", "q", "Season", (TUTORIAL, SINGLE), quest, wall, lang),
        ],
        new_cards=Markup(render("card.html", language=lang, nonce="", theme=GEMS, c=fresh)),
        new_count=1,
        finished=[],
        page=1,
        pages=1,
        total=3,
        promotion=banner,
    )
    return render_wall(view, nonce="n0nce")


def test_the_banner_names_the_promotion_its_multiplier_and_its_end():
    html = _view()
    page = read(html)
    assert 'id="promotion"' in html
    assert "Double Gems Weekend" in page.text
    assert "2× GEM on every offer" in page.text
    # Without a script: the time left as the page was sent, and the end's moment.
    assert "Ends in 2d 4h (6 Dec, 23:05 UTC)" in page.text
    assert 'datetime="2026-12-06T23:05:00Z"' in html
    assert 'data-ends="2026-12-06T23:05:00Z"' in html
    assert 'data-days="{d}d {h}h"' in html
    assert '<script nonce="n0nce">' in html
    assert "first completed offer" not in page.text


def test_every_payout_is_boosted_beside_the_struck_amount_without_it():
    html = _view()
    page = read(html)
    # A single mission: 100 GEM becomes 200 GEM; a screen reader hears "was 100 now 200".
    assert "was 100 now 200 GEM" in page.text
    # A ladder's stages and a quest's missions are boosted too.
    assert "Reach 1 · reachedwas 50 now 100 GEM" in page.text
    assert "Reach 3was 100 now 200 GEM" in page.text
    assert "Completed was 25 now 50" in page.text
    assert "was 150 now 300 GEM" in page.text  # the ladder's card: its stages together
    assert {s.strip() for s in page.struck if s.strip() and s.strip() != "was"} == {
        "100",
        "50",
        "25",
        "150",
        "125",
    }


def test_without_a_promotion_nothing_changes():
    html = _view(record=None)
    page = read(html)
    assert 'id="promotion"' not in html and "<script" not in html
    assert "<s " not in html and "was " not in page.text
    assert "100 GEM" in page.text


def test_a_first_conversion_sale_and_a_fractional_multiplier_in_german():
    record = RECORD | {"multiplier": 1.5, "firstConversionOnly": True}
    html = _view("de", record)
    page = read(html)
    assert "1,5× GEM für jedes Angebot · für dein erstes abgeschlossenes Angebot" in page.text
    assert "Endet in 2 T. 4 Std." in page.text
    assert "vorher 100 jetzt 150 GEM" in page.text
    assert 'data-hours="{h} Std. {m} Min."' in html
    assert "Diese Aktion ist vorbei" in html  # what the countdown says at its end


def test_the_workspace_preview_shows_the_banner_and_boosted_samples():
    ends = (datetime.now(UTC) + timedelta(days=2, hours=4, minutes=30)).isoformat()
    html = preview_html(GEMS, exchange_rate=100, decimals=0, promotion=RECORD | {"endsAt": ends})
    page = read(html)
    assert "Double Gems Weekend" in page.text and "Ends in 2d 4h" in page.text
    assert "was 300 now 600 GEM" in page.text
    assert 'id="promotion"' not in preview_html(GEMS, exchange_rate=100, decimals=0)


# --- GET /wall -------------------------------------------------------------------------------


def _promote(engine, offerwall_id, **changes):
    now = utcnow()
    data = {
        "name": "Double Gems Weekend",
        "multiplier": "2",
        "start": now - timedelta(hours=1),
        "end": now + timedelta(days=2, hours=4, minutes=30),
    } | changes
    with write_session(engine) as session:
        return sales.add(session, offerwall_id, PromotionIn.model_validate(data), by="t").id


def test_the_wall_shows_a_stored_promotion_while_it_applies_to_the_player(
    client, engine, game, wall
):
    owall, _ = wall
    make_mission(engine, game.game_id, title="Win once", payout="1.50")
    answer = wall_page(client, owall.owid, "alice")
    assert 'id="promotion"' not in answer.text
    assert "script-src" not in answer.headers["content-security-policy"]

    _promote(engine, owall.id, countries=["US"])
    answer = wall_page(client, owall.owid, "alice", ip=US)
    page = read(answer.text)
    assert "Double Gems Weekend" in page.text and "Ends in 2d 4h" in page.text
    assert "was 1.50 now 3.00" in page.text
    csp = answer.headers["content-security-policy"]
    nonce = re.search(r"script-src 'nonce-([^']+)'", csp)
    assert nonce is not None and f'<script nonce="{nonce.group(1)}">' in answer.text
    # Not for a player in another country.
    answer = wall_page(client, owall.owid, "bob", ip=DE)
    assert 'id="promotion"' not in answer.text and "was " not in read(answer.text).text
    assert "script-src" not in answer.headers["content-security-policy"]


def test_the_larger_multiplier_wins_and_an_ended_one_is_gone(client, engine, game, wall):
    owall, _ = wall
    make_mission(engine, game.game_id, title="Win once", payout="1.00")
    _promote(engine, owall.id, name="Small", multiplier="1.5")
    big = _promote(engine, owall.id, name="Big", multiplier="3")
    page = read(wall_page(client, owall.owid, "alice").text)
    assert "Big" in page.text and "Small" not in page.text
    assert "was 1.00 now 3.00" in page.text
    with write_session(engine) as session:
        sales.end(session, big)
    page = read(wall_page(client, owall.owid, "alice").text)
    assert "Small" in page.text and "was 1.00 now 1.50" in page.text
