"""Every page of the portal, as each role opens it, at a laptop's and a phone's width: it
opens as itself (not the sign-in page, not another role's), passes axe-core's WCAG 2.2 AA
rules (no violation of impact serious or critical), fits the screen without sideways
scrolling, and every count on it agrees with its number ("1 mission", never "1 missions").
Each page is opened once and looked at in both widths (`make screenshots` saves each as
test-artifacts/screenshots/page-<role>-<page>-<width>.png for a person to look at). The
hosted wall's page is read for its counts too. A keyboard alone signs in, approves a
publisher and edits a mission's rule, with the focus visible at every stop; a dialog keeps
the focus inside and hands it back to its opener.

The pages come from the portal's page table (portal/portal.py `PAGES`): a page registered
there and checked here for no role fails `test_every_registered_page_is_checked`."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.economics import PromotionIn, payout_rules, promotions
from api.publishers import offerwalls, signup_publisher
from api.studios import create_game, studios
from api.tickets import report
from api.webhooks import add_endpoint
from models import Click, Conversion, Mission, Offerwall, OfferwallStatus
from models.types import utcnow
from portal import routes
from tests.e2e.conftest import LAPTOP, PHONE, screenshot
from tests.e2e.steps import convert, import_offers, sign_in
from tests.live import ROOT

pytestmark = pytest.mark.e2e

AXE = ROOT / ".tools" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
PASSWORD = "accessible-2026"
DESIGNER = "designer@a11y.example"
PUBLISHER = "publisher@a11y.example"
APPLICANT = "applicant@a11y.example"
CLOSED_PORT = "http://127.0.0.1:9"  # nothing listens: postbacks and webhooks fail, and show


# --- what each role opens -----------------------------------------------------------


def _game_pages(ids: dict[str, str]) -> dict[str, str]:
    game = ids["game"]
    return {
        "games": routes.GAMES,
        "game": routes.game(game),
        "missions": routes.missions(game),
        "mission": routes.mission(game, ids["mission"]),
        "new-mission": routes.with_game(routes.MISSION, game),
        "quest": routes.quest(game, ids["quest"]),
        "new-quest": routes.with_game(routes.QUEST, game),
        "tester": routes.tester(game, ids["mission"]),
        "events": routes.with_game(routes.EVENTS, game),
        "webhooks": routes.with_game(routes.WEBHOOKS, game),
        "webhook": routes.webhook(game, ids["endpoint"]),
        "history": routes.with_game(routes.GAME_HISTORY, game),
        "mission-history": routes.mission_history(game, ids["mission"]),
    }


def _signed_out(_ids: dict[str, str]) -> dict[str, str]:
    return {
        "home": routes.HOME,
        "login": routes.LOGIN,
        "login-code": routes.LOGIN_CODE,
        "signup": routes.SIGNUP,
        "forgot": routes.FORGOT_PAGE,
        "reset": routes.RESET_PAGE + "#token=qw_r_not-a-real-link",
    }


def _applicant(_ids: dict[str, str]) -> dict[str, str]:
    return {"application": routes.APPLICATION}


def _publisher(_ids: dict[str, str]) -> dict[str, str]:
    return {
        "offerwall": routes.PUBLISHER,
        "offers": routes.PUBLISHER_OFFERS,
        "wall": routes.PUBLISHER_WALL,
        "promotions": routes.PUBLISHER_PROMOTIONS,
        "postback": routes.PUBLISHER_POSTBACK,
        "deliveries": routes.PUBLISHER_DELIVERIES,
        "tickets": routes.TICKETS,
        "reports": routes.REPORTS,
        "account": routes.ACCOUNT,
        "sessions": routes.ACCOUNT_SESSIONS,
        "history-offerwall": routes.PUBLISHER_HISTORY,
        "security": routes.PUBLISHER_SECURITY,
    }


def _designer(ids: dict[str, str]) -> dict[str, str]:
    return {
        **_game_pages(ids),
        "reports": routes.REPORTS,
        "conversions": routes.CONVERSIONS,
        "fraud": routes.FRAUD,
        "account": routes.ACCOUNT,
        "security": routes.STUDIO_SECURITY,
    }


def _staff(ids: dict[str, str]) -> dict[str, str]:
    wall = routes.offerwall_query(ids["offerwall"])
    return {
        "dashboard": routes.STAFF,
        "publishers": routes.STAFF_PUBLISHERS,
        "payout-rules": routes.staff_offerwall(ids["offerwall"]),
        "publisher-offerwall": routes.publisher(ids["offerwall"]),
        "publisher-postback": routes.PUBLISHER_POSTBACK + wall,
        "publisher-deliveries": routes.deliveries(ids["offerwall"]),
        "publisher-wall": routes.PUBLISHER_WALL + wall,
        "publisher-promotions": routes.PUBLISHER_PROMOTIONS + wall,
        "publisher-offers": routes.PUBLISHER_OFFERS + wall,
        "publisher-history": routes.PUBLISHER_HISTORY + wall,
        "publisher-security": routes.PUBLISHER_SECURITY + wall,
        "studios": routes.STAFF_STUDIOS,
        "studio-security": routes.studio_security(ids["studio"]),
        **_game_pages(ids),
        "reports": routes.REPORTS,
        "margin": routes.REPORTS_MARGIN,
        "conversions": routes.CONVERSIONS,
        "fraud": routes.FRAUD,
        "tickets": routes.TICKETS,
        "users": routes.STAFF_USERS,
        "mail": routes.STAFF_MAIL,
        "system": routes.STAFF_SYSTEM,
        "audit-log": routes.STAFF_AUDIT,
        "account": routes.ACCOUNT,
    }


# role: (its pages, its email; "" signs nobody in)
ROLES: dict[str, tuple[Callable[[dict[str, str]], dict[str, str]], str]] = {
    "signed-out": (_signed_out, ""),
    "applicant": (_applicant, APPLICANT),
    "publisher": (_publisher, PUBLISHER),
    "designer": (_designer, DESIGNER),
    "staff": (_staff, "staff"),
}
# Page names only: the ids in a path are known once the rows are made.
PLACEHOLDER_IDS = dict.fromkeys(
    ("game", "mission", "quest", "endpoint", "offerwall", "studio"), "x"
)
CHECKED = [(role, name) for role, (pages, _) in ROLES.items() for name in pages(PLACEHOLDER_IDS)]


def registered_routes() -> set[str]:
    """The route of every page portal/portal.py registers (its `PAGES` table), read from
    the source: importing it would start the portal's app in the test's process."""
    tree = ast.parse((ROOT / "portal" / "portal.py").read_text())
    [table] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "PAGES" for t in node.targets)
    ]
    assert isinstance(table, ast.List)
    found = set()
    for row in table.elts:
        assert isinstance(row, ast.Tuple)
        route = row.elts[1]
        assert isinstance(route, ast.Attribute), ast.dump(route)
        found.add(getattr(routes, route.attr))
    return found


def test_every_registered_page_is_checked():
    checked = {
        re.split(r"[?#]", path)[0]
        for pages, _ in ROLES.values()
        for path in pages(PLACEHOLDER_IDS).values()
    }
    registered = registered_routes()
    assert len(registered) > 30
    assert registered - checked == set(), "pages no role's accessibility check opens"


# --- the rows the pages show ----------------------------------------------------------


@pytest.fixture(scope="module")
def arranged(portal) -> dict[str, str]:
    """A studio with its designer and a game (missions, two quests, one of them of a single
    mission, a webhook endpoint); an
    approved publisher with a postback URL, a payout rule, a promotion, a conversion and
    its player's ticket; a publisher still waiting for approval."""
    now = utcnow()
    with portal.setting_up() as (session, box):
        studio = studios.create_studio(session=session, name="Axe Studio")
        studios.add_designer(
            session=session, studio_id=studio.id, email=DESIGNER, password=PASSWORD
        )
        game = create_game(session=session, box=box, name="Axe Arena", studio_id=studio.id)
        publisher = signup_publisher(
            session=session,
            company="Axe Rewards",
            website="https://rewards.axe.example",
            contact="Ada Lovelace",
            email=PUBLISHER,
            password=PASSWORD,
        )
        wall = offerwalls.get_offerwall(session=session, ref=publisher.offerwall_id or "")
        owid = offerwalls.approve(session=session, box=box, offerwall=wall).owid
        offerwalls.set_postback_url(
            session=session, offerwall=wall, url=CLOSED_PORT + "/postback?uid={uid}"
        )
        payout_rules.set_share(session, wall.id, "65", by="staff")
        promotions.add(
            session,
            wall.id,
            PromotionIn(
                name="Double Gems Weekend",
                multiplier="2",
                start=now - timedelta(hours=1),
                end=now + timedelta(days=2),
            ),
            by=PUBLISHER,
        )
        signup_publisher(
            session=session,
            company="Axe Applicant",
            website="https://applicant.axe.example",
            contact="Grace Hopper",
            email=APPLICANT,
            password=PASSWORD,
        )
        endpoint = add_endpoint(
            session=session,
            box=box,
            game_id=game.game_id,
            url=CLOSED_PORT + "/hooks",
            allow_private=True,
        ).endpoint.id
        ids = {
            "game": game.game_id,
            "offerwall": wall.id,
            "endpoint": endpoint,
            "studio": studio.id,
        }
        ids["owid"] = owid or ""
    credential = {
        "gameId": game.game_id,
        "clientId": game.client_id,
        "clientSecret": game.client_secret,
    }
    step = {"payout": 1, "destinationUrl": "https://axe.example/quest"}
    made = import_offers(
        portal,
        {
            "gameId": game.game_id,
            "missions": [
                {
                    "title": "Win 3 matches in a row",
                    "payout": 1.5,
                    "revenue": 2.4,
                    "destinationUrl": "https://axe.example/play",
                    "rule": {
                        "event": "MATCH_END",
                        "conditions": [{"field": "value", "op": ">=", "value": 1000}],
                        "completion": {"kind": "consecutive", "threshold": 3},
                    },
                }
            ],
            "quests": [
                {
                    "name": "Season opener",
                    "destinationUrl": "https://axe.example/quest",
                    "missions": [
                        {**step, "title": "Start", "rule": {"event": "START_GAME"}},
                        {**step, "title": "Level up", "rule": {"event": "LEVEL_UP"}},
                    ],
                },
                # A quest of one mission: its count is "1 mission" wherever it shows.
                {
                    "name": "Short quest",
                    "destinationUrl": "https://axe.example/short",
                    "missions": [{**step, "title": "Only step", "rule": {"event": "START_GAME"}}],
                },
            ],
        },
    )
    ids["mission"] = made["missions"][0]["id"]
    ids["quest"] = made["quests"][0]["id"]
    assert owid is not None
    convert(portal, owid, "axe-player", game=credential)
    # Completed sooner than its mission allows: held for staff's review.
    convert(portal, owid, "axe-held", game=credential, minCompletionSeconds=600)
    with Session(portal.engine()) as db:
        converted = db.exec(
            select(Conversion.mission_id)
            .join(Click, Click.id == Conversion.click_id)  # type: ignore[arg-type]
            .where(Click.uid == "axe-player")
        ).one()
    with portal.setting_up() as (session, _box):
        report.open_ticket(
            session,
            offerwall_id=owid,
            uid="axe-player",
            offer_id=converted,
            message="I won three matches but no gems came.",
        )
    return ids


# --- axe -------------------------------------------------------------------------------

# Every change to the page's DOM stamps the time: a page is settled once nothing changed
# for a while (its rows came over the websocket, its animations ended).
MUTATIONS = """
window.__lastChange = performance.now();
new MutationObserver(() => { window.__lastChange = performance.now(); })
  .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""
SETTLED = (
    "() => performance.now() - window.__lastChange > 300"
    " && document.getAnimations().every(a => a.playState !== 'running')"
)
RUN_AXE = r"""
async (tags) => {
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
      html: v.nodes[0].html.slice(0, 160),
      why: (v.nodes[0].failureSummary || '').replace(/\s+/g, ' ').slice(0, 300),
    }));
}
"""


def settle(page: Page) -> None:
    page.wait_for_load_state("load")
    page.wait_for_function(SETTLED)


def violations(page: Page) -> list[str]:
    """axe-core's WCAG 2.2 AA violations of impact serious or critical on the open page:
    rule, impact, what to do, the elements (selectors), and the first one's HTML and what
    is wrong with it."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = page.evaluate(RUN_AXE, WCAG_22_AA)
    return [
        f"{v['id']} ({v['impact']}): {v['help']}; at {', '.join(v['targets'][:5])}"
        + (f" and {len(v['targets']) - 5} more" if len(v["targets"]) > 5 else "")
        + f" (first: {v['html']}: {v['why']})"
        for v in found
    ]


def checkable(browser) -> Page:
    """A page in a browser context of its own, at a laptop's width, that axe can be put in
    (the portal's Content-Security-Policy allows no script of a test's)."""
    context = browser.new_context(
        viewport={"width": LAPTOP[0], "height": LAPTOP[1]}, bypass_csp=True
    )
    context.add_init_script(MUTATIONS)
    return context.new_page()


@pytest.fixture(scope="module")
def visitor(portal, browser, arranged) -> Iterator[Callable[[str], Page]]:
    """One browser context per role, signed in once, its pages opened in turn."""
    opened: dict[str, Page] = {}

    def open_as(role: str) -> Page:
        if role not in opened:
            page = checkable(browser)
            email = ROLES[role][1]
            if email:
                sign_in(page, portal.url, *(portal.staff if role == "staff" else (email, PASSWORD)))
                expect(page).not_to_have_url(re.compile("/login"))
            opened[role] = page
        return opened[role]

    yield open_as
    for page in opened.values():
        page.context.close()


# "1" before a word ending in s: a count whose noun disagrees with it ("1 missions"),
# but for the words that end in s in the singular.
ONE_PLURAL = re.compile(r"\b1 ([a-z]+s)\b")
SINGULAR = {"is", "was", "has", "this", "ms", "status", "access", "address", "progress"}


def disagreeing(text: str) -> list[str]:
    return [m.group(0) for m in ONE_PLURAL.finditer(text) if m.group(1) not in SINGULAR]


@pytest.mark.parametrize(("role", "name"), CHECKED)
def test_a_page_opens_fits_both_widths_counts_right_and_has_no_serious_violation(
    portal, arranged, visitor, role, name
):
    page = visitor(role)
    path = ROLES[role][0](arranged)[name]
    page.set_viewport_size({"width": LAPTOP[0], "height": LAPTOP[1]})
    page.goto(portal.url + path)
    expect(page).to_have_url(re.compile(re.escape(re.split(r"[?#]", path)[0]) + r"/?([?#]|$)"))
    expect(page.locator("h1")).to_be_visible()
    found, too_wide = {}, []
    for width, height in (LAPTOP, PHONE):
        page.set_viewport_size({"width": width, "height": height})
        settle(page)
        screenshot(page, f"page-{role}-{name}-{width}")
        if page.evaluate("document.documentElement.scrollWidth") > width:
            too_wide.append(width)
        if problems := violations(page):
            found[width] = problems
    assert too_wide == [], f"{role} {name} is wider than the screen at {too_wide} px"
    assert disagreeing(page.locator("body").inner_text()) == []
    assert found == {}, f"{role} {name}: " + "; ".join(
        f"at {width} px: " + " | ".join(problems) for width, problems in found.items()
    )


def test_the_hosted_walls_counts_agree_with_their_numbers(portal, arranged):
    wall = httpx.get(f"{portal.url}/wall", params={"owid": arranged["owid"], "uid": "walker"})
    assert wall.status_code == 200, wall.text
    assert "Short quest" in wall.text
    assert disagreeing(re.sub(r"<[^>]+>", " ", wall.text)) == []


# --- the keyboard alone ----------------------------------------------------------------

# What has the focus, and whether it shows: an outline on it, its ::before (Radix's
# checkboxes and switches draw their ring there) or a close ancestor (a text field's root),
# a toast's shadow, or a date input's calendar button.
FOCUSED = """
() => {
  const el = document.activeElement;
  if (!el || el === document.body) return {name: '', ring: false, tag: 'body', dialog: false};
  const drawn = (s) => s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0
    && s.outlineColor !== 'rgba(0, 0, 0, 0)';
  let ring = drawn(getComputedStyle(el, '::before'));
  for (let node = el, up = 0; node && up < 3 && !ring; node = node.parentElement, up++) {
    ring = drawn(getComputedStyle(node));
  }
  if (!ring && el.matches('[data-sonner-toast]')) {  // a toast's ring is a shadow
    ring = getComputedStyle(el).boxShadow !== 'none';
  }
  // A date input's last stop is its calendar button, which Radix rings
  // (::-webkit-calendar-picker-indicator:focus-visible) where no script can read it.
  if (!ring && el.matches('input[type^="date"]:not(:focus)')) ring = true;
  const name = el.getAttribute('aria-label') || el.innerText || el.value || el.name || '';
  return {
    name: name.trim().replace(/\\s+/g, ' ').slice(0, 80),
    ring,
    tag: el.outerHTML.slice(0, 200),
    dialog: !!el.closest('[role="dialog"], [role="alertdialog"]'),
  };
}
"""


class Keyboard:
    """Tab, Shift+Tab, typing and Enter, no pointer; every stop's focus must show."""

    def __init__(self, page: Page):
        self.page = page
        self.unseen: list[str] = []  # stops whose focus did not show

    def focused(self) -> dict[str, Any]:
        return self.page.evaluate(FOCUSED)

    def tab_to(self, name: str | re.Pattern[str], *, limit: int = 80, back: bool = False) -> None:
        """Tab (or Shift+Tab) until the focused element's name is `name`."""
        for _ in range(limit):
            self.page.keyboard.press("Shift+Tab" if back else "Tab")
            now = self.focused()
            # The body: past the page's last stop (or before its first), in the browser's
            # own controls, which draw their own focus.
            if not now["ring"] and now["tag"] != "body":
                self.unseen.append(f"{now['name']} ({now['tag']})")
            if (
                now["name"] == name
                if isinstance(name, str)
                else name.fullmatch(now["name"]) is not None
            ):
                return
        raise AssertionError(f"{limit} tabs never reached {name!r}")

    def type_over(self, text: str) -> None:
        self.page.keyboard.press("ControlOrMeta+a")
        self.page.keyboard.type(text)


@pytest.fixture
def pending_company(portal) -> str:
    company = "Keyboard Rewards"
    with portal.setting_up() as (session, _box):
        signup_publisher(
            session=session,
            company=company,
            website="https://keyboard.example",
            contact="Alan Turing",
            email="keyboard@a11y.example",
            password=PASSWORD,
        )
    return company


@pytest.fixture
def keyboard_page(browser) -> Iterator[Page]:
    page = checkable(browser)
    yield page
    page.context.close()


def test_a_keyboard_alone_signs_in_approves_a_publisher_and_edits_a_rule(
    portal, arranged, keyboard_page, pending_company
):
    [mission] = import_offers(
        portal,
        {
            "gameId": arranged["game"],
            "missions": [
                {
                    "title": "Keyboard mission",
                    "payout": 1,
                    "destinationUrl": "https://axe.example/keys",
                    "rule": {"event": "MATCH_END", "completion": {"kind": "count", "threshold": 1}},
                }
            ],
        },
    )["missions"]
    page = keyboard_page
    keys = Keyboard(page)

    # Sign in: the email field has the focus as the page opens.
    page.goto(portal.url + routes.LOGIN)
    expect(page.get_by_label("Email")).to_be_focused()
    page.keyboard.type(portal.staff[0])
    page.keyboard.press("Tab")
    expect(page.get_by_label("Password")).to_be_focused()
    page.keyboard.type(portal.staff[1])
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()

    # The Publishers page, from the navigation; the application, found and approved.
    keys.tab_to("Publishers")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Publishers")).to_be_visible()
    keys.tab_to("Search publishers")
    page.keyboard.type(pending_company)
    page.keyboard.press("Enter")
    row = page.get_by_test_id("publisher-row").filter(has_text=pending_company)
    expect(row).to_have_count(1)
    expect(page.get_by_test_id("publisher-row")).to_have_count(1)
    keys.tab_to("Approve")
    page.keyboard.press("Enter")
    expect(page.get_by_text(f"{pending_company} is approved")).to_be_visible()
    settle(page)
    assert violations(page) == [], "the page with its toast"
    with Session(portal.engine()) as db:
        status = db.exec(select(Offerwall.status).where(Offerwall.name == pending_company)).one()
    assert status == OfferwallStatus.APPROVED

    # The game's missions, from the navigation; the mission's rule, edited and saved.
    keys.tab_to("Games", back=True)
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name="Axe Arena")).to_be_visible()
    keys.tab_to("Axe Arena")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("game-tabs")).to_be_visible()
    keys.tab_to("Missions")
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name="Keyboard mission")).to_be_visible()
    keys.tab_to("Keyboard mission")
    page.keyboard.press("Enter")
    expect(page.get_by_label("Title")).to_have_value("Keyboard mission")
    # The rule's event name: 81 stops past the staff's navigation (System made it one more).
    keys.tab_to("MATCH_END", limit=120)
    keys.type_over("ROUND_WON")
    keys.tab_to("Completion threshold")
    keys.type_over("3")
    keys.tab_to("Save mission")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Mission “Keyboard mission” saved.")).to_be_visible()
    with Session(portal.engine()) as db:
        saved = db.get(Mission, mission["id"])
        assert saved is not None
        assert (saved.rule_event, saved.rule_threshold) == ("ROUND_WON", 3)
    assert keys.unseen == [], f"stops whose focus did not show: {keys.unseen}"


def test_a_dialog_keeps_the_focus_and_hands_it_back_to_its_opener(portal, new_page):
    """Reject (a dialog the page's state opens) and Suspend (a confirmation with its own
    trigger) on staff's Publishers page, opened, tabbed through and closed by keyboard."""
    with portal.setting_up() as (session, box):
        for company in ("Dialog Pending", "Dialog Approved"):
            user = signup_publisher(
                session=session,
                company=company,
                website="https://dialog.example",
                contact="Ada Lovelace",
                email=f"{company.split()[1].lower()}@dialog.example",
                password=PASSWORD,
            )
        wall = offerwalls.get_offerwall(session=session, ref=user.offerwall_id or "")
        offerwalls.approve(session=session, box=box, offerwall=wall)
    page = new_page(*LAPTOP)
    keys = Keyboard(page)
    sign_in(page, portal.url, *portal.staff)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    for status, company, button, role in (
        ("pending", "Dialog Pending", "Reject", "dialog"),
        ("approved", "Dialog Approved", "Suspend", "alertdialog"),
    ):
        page.goto(portal.url + routes.publishers_with_status(status))
        opener = page.get_by_test_id("publisher-row").filter(has_text=company)
        opener = opener.get_by_role("button", name=button)
        opener.focus()
        page.keyboard.press("Enter")
        dialog = page.get_by_role(role)
        expect(dialog).to_be_visible()
        for press in ["Tab"] * 6 + ["Shift+Tab"] * 6:
            page.keyboard.press(press)
            now = keys.focused()
            assert now["dialog"], f"{press} left the {button} dialog for {now['tag']}"
            if not now["ring"]:
                keys.unseen.append(now["tag"])
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        expect(opener).to_be_focused()
    assert keys.unseen == [], f"stops whose focus did not show: {keys.unseen}"
