"""The production portal under its Content-Security-Policy: every page, as every role,
renders and works in Chromium without a single policy violation, and its answers carry
the security headers."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import screenshot
from tests.e2e.steps import sign_in, sign_up, staff_approve
from tests.e2e.studios.test_portal_studios import (
    DESIGNER_PASSWORD,
    create_game,
    create_studio_with_designer,
)

pytestmark = pytest.mark.e2e

# Records every violation the browser reports, from the first script of each document on.
LISTENER = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`);
});
"""


class Watched:
    """A page whose CSP violations, console errors and uncaught exceptions are recorded."""

    def __init__(self, page: Page, url: str):
        self.page = page
        self.url = url
        self.errors: list[str] = []
        page.add_init_script(LISTENER)
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _console(self, message) -> None:
        # Offer thumbnails name hosts that do not exist here (other tests' offers share
        # this portal): a failed image load, not a policy error, which is recorded apart.
        if message.type == "error" and "ERR_NAME_NOT_RESOLVED" not in message.text:
            self.errors.append(message.text)

    def visit(self, path: str, heading: str) -> None:
        """Open `path` fresh, wait for its heading, and check headers and violations."""
        response = self.page.goto(self.url + path)
        assert response is not None
        assert_headers(response.headers)
        self.settled(heading)

    def settled(self, heading: str) -> None:
        expect(self.page.get_by_role("heading", name=heading, exact=True).first).to_be_visible()
        self.page.wait_for_load_state("networkidle")
        assert self.page.evaluate("window.__violations") == [], self.page.url
        assert self.errors == [], self.page.url


def assert_headers(headers: dict[str, str]) -> None:
    policy = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy
    assert "'sha256-" in policy  # the build's inline scripts, by hash
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert "strict-transport-security" not in headers  # the test server's BASE_URL is http


def test_public_pages_and_assets_run_under_the_policy(portal, new_page):
    watched = Watched(new_page(), portal.url)
    assets: list[dict[str, str]] = []
    watched.page.on("response", lambda r: assets.append(r.headers) if "/assets/" in r.url else None)
    watched.visit("/", "Questwall")
    assert assets and all(a["x-content-type-options"] == "nosniff" for a in assets)
    assert all("frame-ancestors 'none'" in a["content-security-policy"] for a in assets)
    watched.visit("/login", "Sign in")
    watched.visit("/signup", "Become a publisher")
    screenshot(watched.page, "csp-signup")


def test_a_publisher_works_under_the_policy(portal, new_page):
    watched, staff = Watched(new_page(), portal.url), new_page()
    page = watched.page
    sign_up(page, portal.url, "Policy Wall")
    watched.settled("Your application")
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    staff_approve(staff, portal.url, "Policy Wall")
    watched.visit("/publisher", "Policy Wall")
    expect(page.get_by_role("heading", name="API key")).to_be_visible()
    watched.visit("/publisher/postback", "Policy Wall")
    expect(page.get_by_role("heading", name="Postback URL")).to_be_visible()
    page.get_by_label("URL", exact=True).fill("https://pub.example/pb?tx={transaction_id}")
    page.get_by_role("button", name="Save").click()
    # The toast comes from the server and runs through the client's eval().
    expect(page.get_by_text("Postback URL saved.")).to_be_visible()
    screenshot(page, "csp-publisher-postback")
    watched.visit("/publisher/deliveries", "Policy Wall")
    expect(page.get_by_role("heading", name="Delivery log")).to_be_visible()
    watched.visit("/publisher/offers", "Policy Wall")
    expect(page.get_by_role("heading", name="Offers", exact=True)).to_be_visible()
    watched.visit("/publisher/wall", "Policy Wall")
    # The preview's frame (srcdoc) runs under this policy too: the wall's own stylesheet
    # applies (the accent line under its header), and nothing was refused.
    header = page.frame_locator("[data-testid=wall-preview]").locator("header")
    expect(header).to_have_css("border-bottom-color", "rgb(79, 70, 229)", timeout=15_000)
    watched.settled("Policy Wall")
    watched.visit("/reports", "Reports")
    screenshot(page, "csp-publisher-reports")


def test_staff_work_under_the_policy(portal, new_page):
    watched = Watched(new_page(), portal.url)
    sign_in(watched.page, portal.url, *portal.staff)
    watched.settled("Dashboard")
    watched.visit("/staff/publishers", "Publishers")
    watched.visit("/staff/studios", "Studios")
    create_studio_with_designer(watched.page, portal.url, "Policy Studio", "pol@policy.example")
    watched.settled("Studios")
    watched.visit("/reports", "Reports")
    screenshot(watched.page, "csp-staff-reports")


def test_a_designer_works_under_the_policy(portal, new_page):
    staff, watched = new_page(), Watched(new_page(), portal.url)
    page = watched.page
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    create_studio_with_designer(staff, portal.url, "Header Studio", "hed@header.example")
    sign_in(page, portal.url, "hed@header.example", DESIGNER_PASSWORD)
    watched.settled("Games")
    game_id, _, _ = create_game(page, "Policy Quest")
    watched.settled("Policy Quest")
    screenshot(page, "csp-designer-game")
    watched.visit(f"/studio/game?game={game_id}", "Policy Quest")
    watched.visit(f"/studio/missions?game={game_id}", "Policy Quest")
    expect(page.get_by_role("heading", name="Missions and quests")).to_be_visible()
    watched.visit(f"/studio/mission?game={game_id}", "New mission")
    page.get_by_label("Title").fill("Win once")
    page.get_by_label("Payout (USD)").fill("-3")
    page.get_by_label("Destination URL").fill("https://policy.example/play")
    page.get_by_label("Event name").fill("WIN")
    page.get_by_role("button", name="Save mission").click()
    expect(page.get_by_text("Some fields need attention.")).to_be_visible()  # a server toast
    screenshot(page, "csp-designer-mission")
    watched.visit(f"/studio/quest?game={game_id}", "New quest")
    watched.visit(f"/studio/tester?game={game_id}", "Rule tester")
    watched.visit(f"/studio/events?game={game_id}", "Live events")
    watched.visit("/studio/games", "Games")
    watched.visit("/reports", "Reports")
    # The CSV export is a download the server sends as a data: URL.
    with page.expect_download() as download:
        page.get_by_role("button", name="Export CSV").click()
    assert download.value.suggested_filename.endswith(".csv")
    watched.settled("Reports")


def test_a_tracking_refusal_page_renders_under_the_policy(portal, new_page):
    watched = Watched(new_page(), portal.url)
    response = watched.page.goto(portal.url + "/missions/no-such-mission?owid=nobody&uid=u")
    assert response is not None and response.status == 404
    headers = response.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    expect(watched.page.locator("h1")).to_be_visible()
    assert watched.page.evaluate("window.__violations") == []


def test_the_api_reference_renders_offline_under_its_policy(portal, new_page):
    watched = Watched(new_page(), portal.url)
    page = watched.page
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    response = page.goto(portal.url + "/v2/docs")
    assert response is not None
    assert "cdn." not in response.headers["content-security-policy"]
    assert response.headers["x-frame-options"] == "DENY"
    # Swagger UI's files come from this server: the reference renders with no internet,
    # listing the API's operations.
    expect(page.get_by_text("/v2/custom-events").first).to_be_visible()
    assert page.evaluate("window.__violations") == []
    assert all(url.startswith(portal.url) for url in requested), requested


def test_api_answers_of_the_all_in_one_server_keep_their_headers_and_cors(portal):
    """API paths skip the portal's own layers (portal/portal.py): their answers still
    carry the security headers and answer CORS for the portal's origin alone."""
    own = httpx.get(portal.url + "/offerwall/offers", headers={"origin": portal.url})
    assert own.status_code == 401
    assert own.json()["code"] == "invalid_api_key"
    assert own.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in own.headers["content-security-policy"]
    assert own.headers["access-control-allow-origin"] == portal.url
    foreign = httpx.get(
        portal.url + "/offerwall/offers", headers={"origin": "https://evil.example"}
    )
    assert "access-control-allow-origin" not in foreign.headers
