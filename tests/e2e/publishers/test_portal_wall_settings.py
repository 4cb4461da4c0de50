"""The workspace's Wall page in the real portal: the preview follows the theme as it is
typed (before any save), its sandboxed frame draws the wall in its own styles, a reload in the middle of
editing brings back what is saved, a bad origin is refused beside its input, and what is
saved is what GET /wall then answers with. Staff edit a publisher's wall from the
workspace; a publisher's hand-sent save for another offerwall is refused."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session

from api.core.db import write_session
from models import Offerwall
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
from tests.e2e.steps import sign_in

pytestmark = pytest.mark.e2e


def stored(portal, offerwall_id: str) -> Offerwall:
    with Session(portal.engine()) as db:
        wall = db.get(Offerwall, offerwall_id)
        assert wall is not None
        return wall


def preview(page: Page):
    return page.get_by_test_id("wall-preview")


def expect_drawn(page: Page, title: str, rgb: str) -> None:
    """The preview's sandboxed frame shows the wall: its title, and the accent on the line
    under its header (the wall's own stylesheet applies inside the frame). Checked after a
    page load, without reloading; the edits themselves are checked through the srcdoc the
    portal hands the frame."""
    frame = page.frame_locator("[data-testid=wall-preview]")
    # Chromium may leave a frame it has not drawn yet (below the fold) without a document.
    preview(page).scroll_into_view_if_needed()
    expect(frame.get_by_role("heading", level=1)).to_have_text(title, timeout=10_000)
    expect(frame.locator("header")).to_have_css("border-bottom-color", rgb, timeout=10_000)


def shots(page: Page, name: str) -> None:
    """The page at 1366 px and 390 px (test-artifacts/screenshots/wall-<name>-<width>.png),
    neither scrolling sideways, and on the phone the preview as it comes into view.

    Each is taken in a window as tall as the page: Chromium paints no frame of another
    origin (the sandboxed preview) while it is off screen."""
    size = page.viewport_size
    for width, height in (DESKTOP, PHONE):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"
        tall = page.evaluate("document.documentElement.scrollHeight")
        page.set_viewport_size({"width": width, "height": tall})
        page.wait_for_timeout(500)
        screenshot(page, f"wall-{name}-{width}")
    page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    preview(page).scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    screenshot(page, f"wall-{name}-preview-390", full_page=False)
    if size:
        page.set_viewport_size(size)


def test_the_preview_follows_the_theme_before_it_is_saved_and_the_wall_uses_it(portal, new_page):
    publisher, wall = approved_publisher(portal, new_page, "Themed Wall")
    publisher.get_by_role("navigation", name="Main").get_by_role(
        "link", name="Wall", exact=True
    ).click()
    expect(publisher).to_have_url(re.compile("/publisher/wall"))
    link = publisher.get_by_test_id("wall-link")
    expect(link).to_have_text(f"{portal.url}/wall?owid={wall.owid}&uid={{uid}}")
    expect(publisher.get_by_test_id("iframe-snippet")).to_contain_text(
        f'<iframe src="{portal.url}/wall?owid={wall.owid}&uid={{uid}}"'
    )
    frame = preview(publisher)
    expect(frame).to_have_attribute("sandbox", "")
    expect(frame).to_have_attribute("srcdoc", re.compile("<h1>Themed Wall</h1>"))
    expect_drawn(publisher, "Themed Wall", "rgb(79, 70, 229)")  # #4f46e5
    expect(publisher.get_by_test_id("unsaved")).to_have_count(0)

    # Typed, not saved: the preview changes, the database does not.
    publisher.get_by_label("Title").fill("Quest Hub")
    expect(frame).to_have_attribute("srcdoc", re.compile("<h1>Quest Hub</h1>"))
    publisher.get_by_label("Colour picker").fill("#e11d48")
    expect(publisher.get_by_label("Accent colour", exact=True)).to_have_value("#e11d48")
    expect(frame).to_have_attribute("srcdoc", re.compile("--accent:#e11d48"))
    expect(publisher.get_by_test_id("unsaved")).to_be_visible()
    assert (stored(portal, wall.id).wall_title, stored(portal, wall.id).wall_accent) == (
        "",
        "#4f46e5",
    )
    shots(publisher, "editing")

    # A reload in the middle asks first, then shows what is saved.
    publisher.once("dialog", lambda dialog: dialog.accept())
    publisher.reload()
    expect(publisher.get_by_label("Title")).to_have_value("")
    expect(publisher.get_by_label("Accent colour", exact=True)).to_have_value("#4f46e5")
    expect(frame).to_have_attribute("srcdoc", re.compile("<h1>Themed Wall</h1>"))
    expect(publisher.get_by_test_id("unsaved")).to_have_count(0)

    # Typed again with a bad origin: refused beside its input, nothing saved.
    publisher.get_by_label("Title").fill("Quest Hub")
    publisher.get_by_label("Accent colour", exact=True).fill("#E11D48")
    expect(frame).to_have_attribute("srcdoc", re.compile("--accent:#e11d48"))
    origins = publisher.get_by_label("Sites that may frame the wall")
    origins.fill("https://games.example.com/play")
    publisher.get_by_role("button", name="Save").click()
    error = publisher.locator("#origins-error")
    expect(error).to_contain_text('"https://games.example.com/play" is not an origin')
    expect(origins).to_have_attribute("aria-invalid", "true")
    expect(publisher.get_by_text("Fix the fields marked in red.")).to_be_visible()
    assert stored(portal, wall.id).wall_title == ""
    shots(publisher, "origin-refused")

    # Fixed and saved: the values come back normalised, and stay after a reload.
    origins.fill("https://Games.Example.com/\nhttp://localhost:3000")
    expect(error).to_have_count(0)
    publisher.get_by_role("button", name="Save").click()
    expect(publisher.get_by_text("Wall settings saved.")).to_be_visible()
    expect(origins).to_have_value("https://games.example.com\nhttp://localhost:3000")
    publisher.reload()
    expect(publisher.get_by_label("Title")).to_have_value("Quest Hub")
    expect(publisher.get_by_label("Accent colour", exact=True)).to_have_value("#e11d48")
    expect(publisher.get_by_label("Colour picker")).to_have_value("#e11d48")
    expect(origins).to_have_value("https://games.example.com\nhttp://localhost:3000")
    expect(frame).to_have_attribute("srcdoc", re.compile("<h1>Quest Hub</h1>"))
    expect_drawn(publisher, "Quest Hub", "rgb(225, 29, 72)")  # #e11d48
    saved = stored(portal, wall.id)
    assert (saved.wall_title, saved.wall_accent) == ("Quest Hub", "#e11d48")
    assert saved.wall_origins == ["https://games.example.com", "http://localhost:3000"]

    # The wall itself: framed by those origins only, in the saved colour and title.
    page = httpx.get(f"{portal.url}/wall", params={"owid": wall.owid, "uid": "alice"})
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors https://games.example.com http://localhost:3000" in policy
    assert "--accent:#e11d48" in page.text and "<h1>Quest Hub</h1>" in page.text

    # Signed links: the link asks for sig, and an unsigned one is refused.
    publisher.get_by_text("Require signed links").click()
    publisher.get_by_role("button", name="Save").click()
    expect(link).to_have_text(f"{portal.url}/wall?owid={wall.owid}&uid={{uid}}&sig={{sig}}")
    assert stored(portal, wall.id).wall_require_signature
    unsigned = httpx.get(f"{portal.url}/wall", params={"owid": wall.owid, "uid": "alice"})
    assert unsigned.status_code == 403
    publisher.get_by_text("Signing links on your server").click()
    publisher.get_by_role("tab", name="PHP").click()
    expect(publisher.get_by_test_id("signing-php")).to_contain_text(f"$owid = '{wall.owid}';")
    shots(publisher, "saved")


def test_staff_edit_a_publishers_wall_and_another_publisher_cannot(portal, new_page):
    owner, wall = approved_publisher(portal, new_page, "Staffed Wall")
    other, _ = approved_publisher(portal, new_page, "Peeking Wall")
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff, then=routes.publisher(wall.id))
    staff.get_by_role("link", name="Wall", exact=True).click()
    expect(staff).to_have_url(re.compile(f"/publisher/wall\\?offerwall={wall.id}"))
    staff.get_by_label("Title").fill("Chosen by staff")
    expect(preview(staff)).to_have_attribute("srcdoc", re.compile("<h1>Chosen by staff</h1>"))
    staff.get_by_role("button", name="Save").click()
    expect(staff.get_by_text("Wall settings saved.")).to_be_visible()
    assert stored(portal, wall.id).wall_title == "Chosen by staff"
    owner.goto(portal.url + routes.PUBLISHER_WALL)
    expect(owner.get_by_label("Title")).to_have_value("Chosen by staff")

    # Another publisher, sending the page's own save by hand with that offerwall's id.
    from portal.publishers.wall_state import WallState

    other.add_init_script(SPY)
    other.goto(portal.url + routes.PUBLISHER_WALL)
    expect(other.get_by_role("heading", name="Peeking Wall")).to_be_visible()
    send_event(
        other,
        handler_name(WallState, "save"),
        form(title="Taken over", origins="https://attacker.example"),
        f"{routes.PUBLISHER_WALL}?offerwall={wall.id}",
    )
    expect_refusals(other, 1)
    expect(other.get_by_text(REFUSED)).to_be_visible()
    after = stored(portal, wall.id)
    assert (after.wall_title, after.wall_origins) == ("Chosen by staff", [])


def test_the_test_player_opens_the_wall_in_a_new_tab_signed(portal, new_page):
    """The Wall page's "Open my wall as a test player" opens the hosted wall for the test
    uid in a new tab, signed (the offerwall requires signed links), marked as a test; the
    switch beside it decides whether test conversions send postbacks."""
    from models.tracking import TEST_UID

    publisher, wall = approved_publisher(portal, new_page, "Test Player Wall")
    with write_session(portal.engine()) as db:
        found = db.get(Offerwall, wall.id)
        assert found is not None
        found.wall_require_signature = True
        db.add(found)
    publisher.goto(f"{portal.url}{routes.PUBLISHER_WALL}")
    button = publisher.get_by_role("link", name="Open my wall as a test player")
    for width, height in (DESKTOP, PHONE):
        publisher.set_viewport_size({"width": width, "height": height})
        button.scroll_into_view_if_needed()
        expect(button).to_be_visible()
        overflow = publisher.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the Wall page scrolls sideways at {width}px"
        screenshot(publisher, f"wall-test-player-button-{width}", full_page=False)
        with publisher.context.expect_page() as opened:
            button.click()
        tab = opened.value
        tab.set_viewport_size({"width": width, "height": height})
        tab.wait_for_load_state()
        assert re.search(rf"/wall\?owid={wall.owid}&uid={TEST_UID}&sig=[0-9a-f]{{64}}$", tab.url)
        expect(tab.locator("#test-player")).to_contain_text("never paid")
        expect(tab.get_by_role("heading", name="Offers")).to_be_visible()
        screenshot(tab, f"wall-test-player-tab-{width}")
        tab.close()
    expect(publisher).to_have_url(re.compile(f"{routes.PUBLISHER_WALL}/?$"))  # still here

    assert not stored(portal, wall.id).test_postbacks
    publisher.get_by_text("Send postbacks for test conversions").click()
    expect(
        publisher.get_by_text("The test player's conversions now send postbacks.")
    ).to_be_visible()
    assert stored(portal, wall.id).test_postbacks
    publisher.reload()
    switch = publisher.get_by_role("switch", name="Send postbacks for test conversions")
    expect(switch).to_have_attribute("aria-checked", "true")
