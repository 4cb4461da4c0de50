"""The workspace's Promotions page in the real portal, and the hosted wall's banner in
Chromium: a publisher previews a promotion as they type it, has a refused input shown
beside it, adds a one-off and a weekly one (a double click adds one), ends one after
confirming; the wall then shows the banner with a running countdown and each payout
struck beside the boosted one. Staff manage a publisher's promotions from the workspace;
another publisher's hand-sent add or end is refused. Screenshots at 1366 px and 390 px
(test-artifacts/screenshots/promotions-*.png)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from api.core.catalog import bump
from api.publishers import offerwalls
from models import Promotion
from portal import routes
from tests.e2e.conftest import screenshot
from tests.e2e.postbacks.test_portal_endpoints import DESKTOP, PHONE, approved_publisher
from tests.e2e.socket_events import (
    REFUSED,
    SPY,
    expect_refusals,
    form,
    handler_name,
    send_event,
)
from tests.e2e.steps import import_offers, sign_in

pytestmark = pytest.mark.e2e


def stored(portal, offerwall_id: str) -> list[Promotion]:
    with Session(portal.engine()) as db:
        return list(
            db.exec(
                select(Promotion)
                .where(Promotion.offerwall_id == offerwall_id)
                .order_by(col(Promotion.created_at))
            )
        )


def local(moment: datetime) -> str:
    """A moment as a datetime-local input takes it (UTC, to the minute)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M")


def shots(page: Page, name: str) -> None:
    """The page at 1366 px and 390 px, neither scrolling sideways; each in a window as
    tall as the page (Chromium paints no sandboxed frame while it is off screen)."""
    size = page.viewport_size
    for width, height in (DESKTOP, PHONE):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"
        tall = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": width, "height": tall})
        page.wait_for_timeout(500)
        screenshot(page, f"promotions-{name}-{width}")
    if size:
        page.set_viewport_size(size)


def unlabeled(page: Page) -> list[str]:
    """The form's inputs that have no accessible name."""
    return page.evaluate(
        """() => [...document.querySelectorAll('form input:not([type=hidden]):not([aria-hidden=true]), form select')]
            .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                          && !el.getAttribute('aria-labelledby'))
            .map(el => el.name || el.outerHTML.slice(0, 80))"""
    )


def test_a_publisher_previews_adds_and_ends_promotions_and_the_wall_shows_them(
    portal, new_page, browser
):
    publisher, wall = approved_publisher(portal, new_page, "Promo Wall")
    with portal.setting_up() as (session, _):
        found = offerwalls.get_offerwall(session=session, ref=wall.id)
        offerwalls.set_currency(
            session=session, offerwall=found, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )
    publisher.get_by_role("navigation", name="Main").get_by_role(
        "link", name="Promotions", exact=True
    ).click()
    expect(publisher).to_have_url(re.compile("/publisher/promotions"))
    expect(publisher.get_by_text("No promotions yet")).to_be_visible()
    assert unlabeled(publisher) == []

    # The preview follows what is typed: the banner's name and the multiplier.
    preview = publisher.get_by_test_id("promotion-preview")
    expect(preview).to_have_attribute("sandbox", "")
    expect(preview).to_have_attribute("srcdoc", re.compile("Double Gems Weekend"))
    publisher.get_by_label("Name").fill("Spring Sale")
    publisher.get_by_label("Multiplier").fill("3")
    expect(preview).to_have_attribute("srcdoc", re.compile(r"Spring Sale"))
    expect(preview).to_have_attribute("srcdoc", re.compile(r"×3<"))
    now = datetime.now(UTC)

    # An end before the start: refused beside the end, nothing saved.
    publisher.get_by_label("Start", exact=True).fill(local(now - timedelta(hours=1)))
    end = publisher.get_by_label("End", exact=True)
    end.fill(local(now - timedelta(hours=2)))
    publisher.get_by_role("button", name="Add promotion").click()
    expect(publisher.locator("#end-error")).to_have_text("The end must be after the start.")
    expect(end).to_have_attribute("aria-invalid", "true")
    expect(publisher.get_by_text("Fix the fields marked in red.")).to_be_visible()
    assert stored(portal, wall.id) == []
    shots(publisher, "refused")

    # Fixed: added once, however many clicks.
    end.fill(local(now + timedelta(days=2, hours=4)))
    publisher.get_by_role("button", name="Add promotion").dblclick()
    expect(publisher.get_by_text("Promotion “Spring Sale” added.")).to_be_visible()
    row = publisher.get_by_test_id("promotion")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-state", "running")
    expect(row).to_contain_text("3×")
    expect(row).to_contain_text("(UTC)")
    (saved,) = stored(portal, wall.id)
    assert (saved.name, saved.multiplier, saved.weekly) == ("Spring Sale", 300, False)
    expect(publisher.get_by_label("Name")).to_have_value("")  # the form is empty again

    # A weekly one in Berlin, for two countries, first conversions only.
    publisher.get_by_label("Name").fill("Weekend Boost")
    publisher.get_by_label("Multiplier").fill("1.5")
    publisher.get_by_role("switch", name="Repeat every week").click()
    publisher.get_by_label("First start").fill("2030-01-04T18:00")  # a Friday
    publisher.get_by_label("First end").fill("2030-01-06T23:00")
    publisher.get_by_label("Time zone").fill("Europe/Berlin")
    publisher.get_by_label("Countries", exact=True).fill("US, Canada")
    publisher.get_by_text("A player's first conversion only").click()
    publisher.get_by_role("button", name="Add promotion").click()
    expect(publisher.get_by_text("Promotion “Weekend Boost” added.")).to_be_visible()
    weekly = row.filter(has_text="Weekend Boost")
    expect(weekly).to_have_attribute("data-state", "scheduled")
    expect(weekly).to_contain_text("Every Friday 18:00–Sunday 23:00 (Europe/Berlin)")
    expect(weekly).to_contain_text("Only CA, US")
    expect(weekly).to_contain_text("first conversion only")
    shots(publisher, "list")

    # The wall: the running one's banner, and each payout boosted beside the usual one.
    made = import_offers(
        portal,
        {
            "gameId": portal.game["gameId"],
            "missions": [
                {
                    "title": "Win a match",
                    "payout": 1,
                    "destinationUrl": "https://game.example/play",
                    "rule": {"event": "MATCH_WON"},
                }
            ],
        },
    )
    mission_id = made["missions"][0]["id"]
    wall_url = f"{portal.url}/wall?{urlencode({'owid': wall.owid, 'uid': 'promo-player'})}"
    for width, height in (PHONE, DESKTOP):
        context = browser.new_context(viewport={"width": width, "height": height})
        player = context.new_page()
        player.goto(wall_url)
        banner = player.locator("#promotion")
        expect(banner).to_contain_text("Spring Sale")
        expect(banner).to_contain_text("3× Gems on every offer")
        countdown = player.get_by_role("timer")
        expect(countdown).to_have_text(re.compile(r"^2d [34]h$"))  # the script: days, hours
        card = player.locator(f"#offer-{mission_id}")
        expect(card.locator("s.was")).to_have_text("was 100")
        expect(card.locator(".pay")).to_contain_text("300 Gems")
        assert player.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(player, f"promotions-wall-{width}")
        context.close()

    # The countdown runs: near its end it shows minutes and seconds, ticking.
    with portal.setting_up() as (session, _):
        row_db = session.get(Promotion, saved.id)
        assert row_db is not None
        row_db.ends_at = datetime.now(UTC) + timedelta(minutes=3)
        session.add(row_db)
        session.flush()  # the test's own change (not the service's: tests/audit_guard.py)
        bump(session)  # as every change of a promotion does: listings read it again
    context = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    player = context.new_page()
    player.goto(wall_url)
    countdown = player.get_by_role("timer")
    expect(countdown).to_have_text(re.compile(r"^[23]m \d{1,2}s$"))
    first = countdown.inner_text()
    expect(countdown).not_to_have_text(first, timeout=3_000)
    screenshot(player, "promotions-wall-countdown-390", full_page=False)
    context.close()
    # Without scripts the page still says when it ends.
    plain = httpx.get(wall_url)
    shown = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", plain.text))
    assert re.search(r"Ends in \d+m \d+s \(\d{1,2} \w{3}, \d\d:\d\d UTC\)", shown), shown

    # End now, after confirming: ended, and the wall shows the usual amounts.
    running = row.filter(has_text="Spring Sale")
    running.get_by_role("button", name="End now: Spring Sale").click()
    publisher.get_by_role("alertdialog").get_by_role("button", name="End now").click()
    expect(publisher.get_by_text("Promotion “Spring Sale” ended.")).to_be_visible()
    expect(running).to_have_attribute("data-state", "ended")
    expect(running.get_by_role("button", name="End now: Spring Sale")).to_have_count(0)
    assert 'id="promotion"' not in httpx.get(wall_url).text


def test_staff_manage_a_publishers_promotions_and_another_publisher_cannot(portal, new_page):
    from portal.economics.promotions_state import PromotionsState

    owner, wall = approved_publisher(portal, new_page, "Staffed Promo Wall")
    other, _ = approved_publisher(portal, new_page, "Peeking Promo Wall")
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff, then=routes.publisher(wall.id))
    staff.get_by_role("link", name="Promotions", exact=True).click()
    expect(staff).to_have_url(re.compile(f"/publisher/promotions\\?offerwall={wall.id}"))
    expect(staff.get_by_text("No promotions yet")).to_be_visible()
    now = datetime.now(UTC)
    staff.get_by_label("Name").fill("Staff Sale")
    staff.get_by_label("Multiplier").fill("2")
    staff.get_by_label("Start", exact=True).fill(local(now + timedelta(days=1)))
    staff.get_by_label("End", exact=True).fill(local(now + timedelta(days=2)))
    staff.get_by_role("button", name="Add promotion").click()
    expect(staff.get_by_text("Promotion “Staff Sale” added.")).to_be_visible()
    (saved,) = stored(portal, wall.id)
    assert saved.created_by == portal.staff[0]
    owner.goto(portal.url + routes.PUBLISHER_PROMOTIONS)
    expect(owner.get_by_test_id("promotion")).to_contain_text("Staff Sale")

    # Another publisher, sending the page's own events by hand for that offerwall.
    other.add_init_script(SPY)
    other.goto(portal.url + routes.PUBLISHER_PROMOTIONS)
    expect(other.get_by_role("heading", name="Peeking Promo Wall")).to_be_visible()
    path = f"{routes.PUBLISHER_PROMOTIONS}?offerwall={wall.id}"
    send_event(
        other,
        handler_name(PromotionsState, "add"),
        form(
            name="Taken over",
            multiplier="10",
            start=local(now),
            end=local(now + timedelta(days=1)),
            timeZone="UTC",
        ),
        path,
    )
    send_event(
        other,
        handler_name(PromotionsState, "end"),
        {"promotion_id": saved.id},
        path,
    )
    expect_refusals(other, 2)
    expect(other.get_by_text(REFUSED)).to_be_visible()
    (after,) = stored(portal, wall.id)
    assert (after.name, after.ended_at) == ("Staff Sale", None)
