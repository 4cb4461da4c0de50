"""The wall's cards in progress are rendered once per look and get each player's own link
(`api.wall.page.card_html`)."""

from __future__ import annotations

from api.listing import STARTED, MissionState, OfferState
from api.listing.offers import Pricing
from api.publishers import Theme
from api.wall import page
from api.wall.i18n import Language


def _card(current: int, link: str) -> page.Card:
    goal = page._SAMPLE_GOALS[0]
    state = OfferState("mission", STARTED, (MissionState(goal, STARTED, current),))
    pricing, english = Pricing(1.0, 2, ""), Language("en")
    return page._card(
        "mission", goal.mission_id, goal.title, (goal,), state, pricing, english, link=link
    )


def test_each_player_gets_their_own_link_escaped_and_their_own_progress() -> None:
    theme, english = Theme("Wall"), Language("en")
    first = page.card_html(_card(3, "/missions/m?owid=w&uid=a"), theme, english)
    second = page.card_html(_card(3, '/missions/m?owid=w&uid=b"<x>'), theme, english)
    further = page.card_html(_card(7, "/missions/m?owid=w&uid=a"), theme, english)

    assert 'href="/missions/m?owid=w&amp;uid=a"' in first
    assert 'href="/missions/m?owid=w&amp;uid=b&#34;&lt;x&gt;"' in second
    assert "<x>" not in second
    # The same point of the same offer: the same card but for the link.
    assert first.replace("uid=a", "") == second.replace("uid=b&#34;&lt;x&gt;", "")
    assert "3 / 10" in first and "7 / 10" in further
    assert page._LINK not in first + second + further


def test_a_card_without_a_link_has_no_button() -> None:
    html = page.card_html(_card(3, ""), Theme("Wall"), Language("en"))
    assert 'class="go"' not in html and page._LINK not in html
