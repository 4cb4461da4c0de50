"""Reports, the staff dashboard, the publisher's offer catalog, the delivery log's search,
and what a publisher not approved may open, in the real portal."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import httpx
import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.conversions import ledger as conversions
from api.core.db import write_session
from api.publishers import offerwalls
from api.studios import create_game
from models import Mission, Offerwall, OfferwallStatus
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, form, handler_name, send_event
from tests.e2e.steps import (
    applicant_signed_in,
    approved_publisher_signed_in,
    approved_wall,
    convert,
    import_offers,
    publisher_applied,
    sign_in,
    staff_approve,
)

pytestmark = pytest.mark.e2e

DESKTOP, PHONE = (1366, 900), (390, 844)


def in_gems(portal, wall_id: str) -> None:
    """The offerwall pays in Gems, 100 to the dollar (`questwall offerwall set-currency`)."""
    with portal.setting_up() as (session, _):
        wall = offerwalls.get_offerwall(session=session, ref=wall_id)
        offerwalls.set_currency(
            session=session, offerwall=wall, name="Gems", code="GEM", exchange_rate=100, decimals=0
        )


def shots(page: Page, name: str) -> None:
    """The page as a desktop and as a phone show it (test-artifacts/screenshots)."""
    size = page.viewport_size
    for suffix, (width, height) in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        screenshot(page, f"{name}-{suffix}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"
    if size:
        page.set_viewport_size(size)


def staff_signed_in(page: Page, portal) -> None:
    sign_in(page, portal.url, *portal.staff)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def wall_named(portal, company: str) -> Offerwall:
    with Session(portal.engine()) as db:
        return db.exec(select(Offerwall).where(Offerwall.name == company)).one()


def mission_titled(portal, title: str) -> Mission:
    with Session(portal.engine()) as db:
        return db.exec(select(Mission).where(Mission.title == title)).one()


def click(portal, offer_id: str, owid: str, uid: str) -> None:
    answer = httpx.get(f"{portal.url}/missions/{offer_id}", params={"owid": owid, "uid": uid})
    assert answer.status_code == 302, answer.text


def import_missions(portal, game_id: str, *missions: dict) -> None:
    import_offers(portal, {"gameId": game_id, "missions": list(missions)})


def reverse(portal, uid: str) -> None:
    """Staff reverse the player's conversion, through the service staff's pages use."""
    with write_session(portal.engine()) as session:
        [row] = conversions.search(session=session, studio_id=None, text=uid).rows
        conversions.reverse(
            session=session,
            transaction_id=row.transaction_id,
            reason="chargeback",
            actor="staff@example.com",
            studio_id=None,
        )


def figure(page: Page, test_id: str) -> Decimal:
    return Decimal(page.get_by_test_id(test_id).inner_text().lstrip("$").replace(",", ""))


def test_the_staff_dashboard_shows_todays_click_and_conversion(portal, new_page):
    staff = new_page(*DESKTOP)
    staff_signed_in(staff, portal)
    expect(staff).to_have_url(re.compile(r"/staff/?$"))  # staff's home after sign-in
    # Other tests share this portal: the count before comes from the database.
    with Session(portal.engine()) as db:
        waiting = select(Offerwall).where(Offerwall.status == OfferwallStatus.PENDING)
        pending = len(db.exec(waiting).all())
    expect(staff.get_by_test_id("pending-applications")).to_have_text(str(pending))
    publisher_applied(portal, "Dashboard Wall", approved=False)
    staff.reload()
    expect(staff.get_by_test_id("pending-applications")).to_have_text(str(pending + 1))
    figures = ("clicks", "conversions", "payout", "net-payout")
    before = {k: figure(staff, f"today-{k}") for k in figures}

    staff_approve(staff, portal.url, "Dashboard Wall")
    # A click and its conversion ($2); without a postback URL its postback fails at once.
    convert(portal, wall_named(portal, "Dashboard Wall").owid, "dash-player")
    failing = staff.get_by_test_id("failing-endpoint").filter(has_text="Dashboard Wall")
    deadline = time.monotonic() + 20
    while True:
        staff.goto(portal.url + "/staff")
        expect(staff.get_by_test_id("today-clicks")).to_be_visible()
        if failing.count() or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    expect(staff.get_by_test_id("today-clicks")).to_have_text(str(before["clicks"] + 1))
    expect(staff.get_by_test_id("today-conversions")).to_have_text(str(before["conversions"] + 1))
    expect(staff.get_by_test_id("today-payout")).to_have_text(f"${before['payout'] + 2:,.2f}")
    net = before["net-payout"] + 2
    expect(staff.get_by_test_id("today-net-payout")).to_have_text(f"${net:,.2f}")
    expect(failing).to_contain_text("0 retrying · 1 failed")
    shots(staff, "staff-dashboard")

    # Each card leads to the page that deals with it.
    failing.get_by_role("link", name="Delivery log").click()
    expect(staff).to_have_url(re.compile(r"/publisher/deliveries\?offerwall=[^&]+&status=failed"))
    expect(staff.get_by_role("combobox", name="Filter by status")).to_contain_text("Failed")
    expect(staff.get_by_role("row").filter(has_text="Win once (dash-player)")).to_contain_text(
        "failed"
    )
    staff.goto(portal.url + "/staff")
    staff.get_by_role("link", name="Open today's report").click()
    today = datetime.now(UTC).date().isoformat()
    expect(staff.get_by_label("From", exact=True)).to_have_value(today)
    expect(staff.get_by_test_id("report-total")).to_contain_text(f"{before['clicks'] + 1}")
    staff.goto(portal.url + "/staff")
    staff.get_by_role("link", name="Review applications").click()
    expect(staff).to_have_url(re.compile(r"/staff/publishers\?status=pending$"))
    expect(staff.get_by_role("radio", name=re.compile("^Pending"))).to_be_checked()


def test_reports_show_every_day_a_preset_a_game_filter_and_epc(portal, new_page):
    staff, publisher = new_page(*DESKTOP), new_page()
    staff_signed_in(staff, portal)
    wall = approved_publisher_signed_in(portal, publisher, "Report Wall")
    # Today: the E2E game's mission, 2 clicks and 2 conversions ($2 each), one of them
    # reversed; another game's, a click.
    convert(portal, wall.owid, "rep-1")
    convert(portal, wall.owid, "rep-9")
    reverse(portal, "rep-9")
    mission = mission_titled(portal, "Win once (rep-1)")
    click(portal, mission.id, wall.owid, "rep-2")
    with portal.setting_up() as (session, box):
        other = {"gameId": create_game(session=session, box=box, name="Other Game").game_id}
    import_missions(
        portal,
        other["gameId"],
        {
            "title": "Elsewhere mission",
            "payout": 1,
            "destinationUrl": "https://game.example/",
            "rule": {"event": "WIN"},
        },
    )
    click(portal, mission_titled(portal, "Elsewhere mission").id, wall.owid, "rep-3")

    staff.get_by_role("link", name="Reports").click()
    staff.get_by_role("button", name="Last 7 days").click()
    today = datetime.now(UTC).date()
    expect(staff.get_by_label("From", exact=True)).to_have_value(
        (today - timedelta(days=6)).isoformat()
    )
    rows = staff.get_by_test_id("report-row")
    expect(rows).to_have_count(7)  # every day, those without activity too
    quiet = (today - timedelta(days=3)).isoformat()
    expect(rows.filter(has_text=quiet).get_by_role("cell")).to_have_text(
        [quiet, "0", "0", "0", "–", "–", "$0.00", "0", "$0.00", "0", "$0.00"]
    )
    # The vertical axis's labels (anchored at their end, the horizontal one's in the middle).
    ticks = staff.locator('text.recharts-cartesian-axis-tick-value[text-anchor="end"]')
    expect(ticks.first).to_be_visible()
    assert all(re.fullmatch(r"\d+", t) for t in ticks.all_text_contents())  # no half clicks
    shots(staff, "reports-days")

    staff.get_by_label("Group").select_option("offer")
    elsewhere = rows.filter(has_text="Elsewhere mission")
    expect(elsewhere).to_be_visible()
    staff.get_by_role("combobox", name="Game", exact=True).select_option(label="E2E")
    expect(elsewhere).to_have_count(0)
    ours = rows.filter(has_text="Win once (rep-1)")
    # EPC beside the conversion rate: $2 over 2 clicks.
    expect(ours.get_by_role("cell")).to_have_text(
        ["Win once (rep-1)", "2", "2", "1", "50.0%", "$1.00", "$2.00", "0", "$2.00", "0", "$0.00"]
    )
    # A reversed conversion still counts, as reversed payout, and nets nothing.
    expect(rows.filter(has_text="Win once (rep-9)").get_by_role("cell")).to_have_text(
        [
            *("Win once (rep-9)", "1", "1", "1", "100.0%", "$2.00", "$2.00", "1 · $2.00"),
            *("$0.00", "0", "$0.00"),  # net payout, refused clicks, spend (no revenue)
        ]
    )
    offer = staff.get_by_role("combobox", name="Offer", exact=True)
    expect(offer).to_be_enabled()
    offer.select_option(label="Win once (rep-1)")
    expect(rows).to_have_count(1)
    expect(staff.get_by_test_id("report-total")).to_contain_text("$1.00")
    shots(staff, "reports-filtered")

    # The publisher sees their payouts in Gems as well as USD.
    in_gems(portal, wall.id)
    publisher.get_by_role("link", name="Reports").click()
    publisher.get_by_label("Group").select_option("offer")
    theirs = publisher.get_by_test_id("report-row").filter(has_text="Win once (rep-1)")
    gems = ["100.00 GEM", "200 GEM", "0", "200 GEM"]  # EPC, payout, reversed, net
    expect(theirs.get_by_role("cell")).to_have_text(
        # Then the currency given with and without promotions, and none under one.
        ["Win once (rep-1)", "2", "2", "1", "50.0%", *gems, "$2.00", "0", "200 GEM", "200 GEM", "0"]
    )
    expect(publisher.get_by_test_id("report-total").get_by_role("cell")).to_have_text(
        [
            *("4", "4", "2", "50.0%", "100.00 GEM", "400 GEM", "1 · 200 GEM", "200 GEM", "$4.00"),
            *("0", "400 GEM", "400 GEM", "0"),
        ]
    )
    expect(publisher.get_by_text("Payouts in Gems (GEM): 100 per USD")).to_be_visible()
    # A publisher groups as the reporting API does: per OS and sub value, not per offerwall
    # (their own, one row); every grouping counts the same traffic.
    group = publisher.get_by_label("Group")
    groupings = ["Per day", "Per offer", "Per country", "Per operating system"]
    expect(group.locator("option")).to_have_text([*groupings, "Per sub1", "Per sub2", "Per sub3"])
    for grouping in ("os", "sub1"):
        group.select_option(grouping)
        expect(publisher.get_by_test_id("report-total").get_by_role("cell")).to_have_text(
            [
                "4",
                "4",
                "2",
                "50.0%",
                "100.00 GEM",
                "400 GEM",
                "1 · 200 GEM",
                "200 GEM",
                "$4.00",
                "0",
                "400 GEM",
                "400 GEM",
                "0",
            ]
        )
    expect(staff.get_by_label("Group").locator("option", has_text="Per offerwall")).to_have_count(1)
    # A publisher has no game or offer filter.
    expect(publisher.get_by_role("combobox", name="Game", exact=True)).to_have_count(0)
    shots(publisher, "reports-publisher")


def test_a_publisher_copies_a_tracking_link_from_their_offer_catalog(portal, new_page):
    publisher = new_page(*DESKTOP)
    wall = approved_publisher_signed_in(portal, publisher, "Catalog Wall")
    in_gems(portal, wall.id)
    import_missions(
        portal,
        portal.game["gameId"],
        {
            "title": "Catalog duel",
            "payout": 1.25,
            "cap": 50,
            "tags": ["catalog-duels"],
            "thumbnail": portal.url + "/logo.svg",
            "operatingSystem": ["Android"],
            "destinationUrl": "https://game.example/",
            "rule": {"event": "DUEL_WON"},
        },
        {
            "title": "Catalog race",
            "payout": 0.5,
            "destinationUrl": "https://game.example/",
            "rule": {"event": "RACE_WON"},
        },
    )
    duel = mission_titled(portal, "Catalog duel")
    publisher.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=portal.url)
    publisher.get_by_role("link", name="Offers", exact=True).first.click()  # the navigation
    card = publisher.get_by_test_id("catalog-offer").filter(has_text="Catalog duel")
    expect(card.get_by_test_id("offer-payout")).to_have_text("125 GEM")
    expect(card).to_contain_text("50 of 50 conversions left")
    expect(card).to_contain_text("No end date")
    expect(card).to_contain_text("Android · Every country")
    link = f"{portal.url}/missions/{duel.id}?owid={wall.owid}&uid={{uid}}"
    expect(card.get_by_test_id("tracking-link")).to_have_text(link)
    card.get_by_role("button", name="Copy the tracking link of Catalog duel").click()
    expect(publisher.get_by_text("Copied.")).to_be_visible()
    assert publisher.evaluate("navigator.clipboard.readText()") == link
    shots(publisher, "publisher-catalog")

    publisher.get_by_label("Search offers").fill("CATALOG-DUELS")
    publisher.get_by_role("button", name="Search", exact=True).click()
    expect(publisher.get_by_test_id("catalog-offer")).to_have_count(1)
    publisher.get_by_label("Search offers").fill("")
    publisher.get_by_role("button", name="Search", exact=True).click()
    cards = publisher.get_by_test_id("catalog-offer")
    expect(cards.nth(1)).to_be_visible()
    # On a phone the offers stack: one column of cards.
    publisher.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    first, second = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert first and second and first["x"] == second["x"] and second["y"] > first["y"]


def test_the_delivery_log_finds_a_player_by_uid_or_click_id(portal, new_page):
    publisher = new_page(*DESKTOP)
    wall = approved_publisher_signed_in(portal, publisher, "Search Wall")
    convert(portal, wall.owid, "uid-alpha", clickid="click-111")
    convert(portal, wall.owid, "uid-beta", clickid="click-222")
    publisher.get_by_role("link", name="Deliveries", exact=True).first.click()
    rows = publisher.get_by_role("row").filter(has_text="Win once")
    expect(rows).to_have_count(2)
    search = publisher.get_by_label("Search by player uid, click id or transaction id")
    search.fill("UID-ALPHA")
    publisher.get_by_role("button", name="Search", exact=True).click()
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("uid-alpha")
    search.fill("click-222")
    publisher.get_by_role("button", name="Search", exact=True).click()
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("uid-beta")
    shots(publisher, "publisher-deliveries-search")


def test_a_pending_publisher_sees_their_application_only(portal, new_page):
    from portal.listing.state import CatalogState
    from portal.postbacks.state import DeliveryState, PostbackState
    from portal.publishers.publishers_state import StaffState
    from portal.reports.reports_state import ReportState
    from portal.state.workspace import WorkspaceState

    publisher = new_page(*DESKTOP)
    publisher.add_init_script(SPY)
    applicant_signed_in(portal, publisher, "Pending Wall")
    # The navigation offers the application only.
    expect(publisher.get_by_role("link", name="Application", exact=True)).to_be_visible()
    for name in ("Offerwall", "Offers", "Postback", "Deliveries", "Reports"):
        expect(publisher.get_by_role("link", name=name, exact=True)).to_have_count(0)
    shots(publisher, "publisher-pending")
    for path in ("/publisher", "/publisher/offers", "/publisher/deliveries", "/reports"):
        publisher.goto(portal.url + path)
        expect(publisher).to_have_url(re.compile(r"/account/application/?$"))
        expect(publisher.get_by_text("Our staff review applications")).to_be_visible()

    # By hand, over the websocket: every workspace handler sends them back, doing nothing.
    forged = [
        (
            WorkspaceState,
            "save_currency",
            form(currency_name="Coins", currency_code="CNS", exchange_rate="10", decimals="0"),
            "/publisher",
        ),
        (WorkspaceState, "rotate_key", {}, "/publisher"),
        (
            PostbackState,
            "save",
            form(postback_url="https://attacker.example/pb"),
            "/publisher/postback",
        ),
        (DeliveryState, "find", form(search="x"), "/publisher/deliveries"),
        (CatalogState, "find", form(search="x"), "/publisher/offers"),
        (ReportState, "apply", form(dimension="day", start="", end=""), "/reports"),
    ]
    for state, name, payload, path in forged:
        send_event(publisher, handler_name(state, name), payload, path)
    # Events of one browser are handled in order: once this refusal shows, so were those.
    wall = wall_named(portal, "Pending Wall")
    send_event(
        publisher,
        handler_name(StaffState, "approve"),
        {"offerwall_id": wall.id},
        "/staff/publishers",
    )
    expect(publisher.get_by_text("Your account may not do this.")).to_be_visible()
    expect(publisher).to_have_url(re.compile(r"/account/application/?$"))
    after = wall_named(portal, "Pending Wall")
    assert (after.status, after.currency_code, after.postback_url) == ("pending", "USD", None)


def test_a_month_of_days_is_a_table_of_lines_that_a_phone_scrolls_through(portal, new_page):
    """One report, looked at on a desktop and on a phone by resizing the page: its layout
    follows the width in CSS alone."""
    staff = new_page(*DESKTOP)
    staff_signed_in(staff, portal)
    staff.goto(portal.url + "/reports")
    expect(staff.get_by_label("Group")).to_have_value("day")
    staff.get_by_role("button", name="Last 30 days").click()
    rows = staff.get_by_test_id("report-row")
    expect(rows).to_have_count(30)
    today = datetime.now(UTC).date().isoformat()
    day = rows.filter(has_text=today)
    for width, height in (DESKTOP, PHONE):
        staff.set_viewport_size({"width": width, "height": height})
        staff.evaluate("window.scrollTo(0, 0)")
        expect(staff.get_by_role("application")).to_be_visible()  # the chart
        screenshot(staff, f"reports-month-{width}")
        tall = staff.evaluate("document.documentElement.scrollHeight")
        assert tall < 3000, f"a month of days is {tall} px high at {width} px"
        # Every figure of a day can still be reached: the last column's, beside its day.
        refused = day.get_by_role("cell").last
        refused.scroll_into_view_if_needed()
        expect(refused).to_be_in_viewport()
        expect(day.get_by_role("cell").first).to_be_in_viewport()
        assert staff.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(staff, f"reports-month-scrolled-{width}")


def test_a_report_of_many_sub_values_comes_a_page_at_a_time(portal, new_page):
    """120 sub1 values of one game: the report per sub1 shows 50 rows a page and the
    totals of all, and its pager goes from page to page. The pages are turned on a phone,
    and the first and last are looked at on a desktop too, by resizing the one page: the
    layout follows the width in CSS alone."""
    from api.studios import create_game
    from models.tables import click as _click

    name = "Many subs"
    with portal.setting_up() as (session, box):
        game_id = create_game(session=session, box=box, name=name).game_id
    mission = {"title": name, "payout": 1, "destinationUrl": "https://g.example/"}
    import_missions(portal, game_id, {**mission, "rule": {"event": "WIN"}})
    owid = approved_wall(portal, f"{name} wall")
    mission_id = mission_titled(portal, name).id
    click(portal, mission_id, owid, "subs-player")  # the player, with no sub1
    with portal.setting_up() as (session, _):
        first = (
            session.execute(sa.select(_click).where(_click.c.mission_id == mission_id))
            .one()
            ._asdict()
        )
        del first["id"]
        session.execute(_click.insert(), [{**first, "sub1": f"v{i:03d}"} for i in range(120)])

    def fits_both(shot: str = "") -> None:
        """Neither width scrolls sideways; the page is left at a phone's size."""
        for width, height in (DESKTOP, PHONE):
            staff.set_viewport_size({"width": width, "height": height})
            if shot:
                screenshot(staff, f"{shot}-{width}")
            assert staff.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
                f"the report scrolls sideways at {width} px"
            )

    staff = new_page(*DESKTOP)
    staff_signed_in(staff, portal)
    staff.goto(portal.url + "/reports")
    staff.get_by_label("Group").select_option("sub1")
    staff.get_by_role("combobox", name="Game", exact=True).select_option(label=name)
    rows = staff.get_by_test_id("report-row")
    pager = staff.get_by_test_id("report-pager")
    expect(pager).to_contain_text("121 in all")  # 120 values and "(none)"
    expect(pager).to_contain_text("Page 1 of 3")
    expect(rows).to_have_count(50)
    expect(staff.get_by_test_id("report-total").get_by_role("cell").first).to_have_text("121")
    fits_both()
    pager.get_by_role("button", name="Next").click()
    expect(pager).to_contain_text("Page 2 of 3")
    expect(rows.first).to_contain_text("v049")  # after "(none)" and v000 … v048
    pager.get_by_role("button", name="Next").click()
    expect(pager).to_contain_text("Page 3 of 3")
    expect(rows).to_have_count(21)
    expect(rows.last).to_contain_text("v119")
    expect(pager.get_by_role("button", name="Next")).to_be_disabled()
    expect(staff.get_by_test_id("report-total").get_by_role("cell").first).to_have_text("121")
    fits_both("reports-pages")
    pager.get_by_role("button", name="Previous").click()
    expect(pager).to_contain_text("Page 2 of 3")
    # Another grouping starts again at its first page.
    staff.get_by_label("Group").select_option("day")
    expect(pager).to_have_count(0)
    expect(rows).to_have_count(30)
