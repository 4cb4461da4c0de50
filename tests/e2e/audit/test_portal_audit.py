"""The audit trail in the real portal: staff's Audit log (filters, each change before →
after, "Older" paging, the CSV export recorded), a game's and a mission's History tab for
its designer and a publisher's History and Security log, at a laptop's and a phone's
width; and the log refused to others, by the page and by its handlers."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect

from api import audit
from api.ops import request_context
from api.publishers import offerwalls
from api.studios import create_game, studios
from models import PortalSession, User
from portal import routes
from tests.e2e.conftest import STAFF_EMAIL, looked_at
from tests.e2e.socket_events import SPY, expect_refusals, handler_name, send_event
from tests.e2e.steps import approved_publisher_signed_in, sign_in, studio_with_designer
from tests.factories import make_mission

pytestmark = pytest.mark.e2e

STAFF = audit.account_actor("staff-e2e", STAFF_EMAIL, "staff", ip="2001:db8:4:5:6:7:8:9")
# A request id as long as the table allows: it wraps in its cell, never widens the page.
LONG_REQUEST = "req-" + "9f86d081884c7d659a2feaa0c55ad015" * 2


def _urls_changed(portal, name: str, times: int) -> str:
    """An offerwall approved, then its postback URL changed `times` times, by staff."""
    with portal.setting_up() as (session, box), audit.acting_as(STAFF):
        wall = offerwalls.create_offerwall(session=session, name=name)
        with request_context(LONG_REQUEST):
            offerwalls.approve(session=session, box=box, offerwall=wall)
        for n in range(times):
            offerwalls.set_postback_url(
                session=session,
                offerwall=wall,
                url=f"https://{name.lower().replace(' ', '-')}.example/postbacks/"
                f"a-very-long-path-that-must-wrap/{n}?tx={{transaction_id}}",
            )
        return wall.id


TABLE_FITS = """() => [...document.querySelectorAll(
  '[data-testid=audit-events] .rt-ScrollAreaViewport')].every(
  (e) => e.scrollWidth <= e.clientWidth + 1)"""


def _fits(page) -> None:
    """At both widths, the page and the events' table: neither scrolls sideways."""
    for width, height in ((1366, 768), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        assert page.evaluate(TABLE_FITS), f"the events' table scrolls sideways at {width} px"


def _eleven_minutes_ago():
    from datetime import timedelta

    from models.types import utcnow

    return utcnow() - timedelta(minutes=11)


def test_staff_filter_page_and_export_the_audit_log(portal, page):
    wall_id = _urls_changed(portal, "Audit Log Wall", 30)
    sign_in(page, portal.url, *portal.staff, then=routes.STAFF_AUDIT)
    expect(page.get_by_role("heading", name="Audit log", exact=True)).to_be_visible()
    rows = page.get_by_test_id("audit-event")
    expect(rows).to_have_count(25)

    page.get_by_label("Target").fill(f"offerwall:{wall_id}")
    page.get_by_label("Action").fill("offerwall.approved")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    approved = rows.first
    expect(approved).to_contain_text("offerwall.approved")
    expect(approved).to_contain_text("Audit Log Wall")
    expect(approved).to_contain_text(STAFF_EMAIL)
    expect(approved).to_contain_text("staff · 2001:db8:4:5:6:7:8:9")
    expect(approved.get_by_test_id("audit-change")).to_have_text("status: pending → approved")
    expect(approved).to_contain_text(LONG_REQUEST)
    looked_at(page, "audit-log-filtered")
    _fits(page)

    page.get_by_label("Action").fill("offerwall.")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(25)
    expect(rows.first.get_by_test_id("audit-change")).to_contain_text("/29?tx=")
    page.get_by_role("button", name="Older").click()
    expect(rows).to_have_count(7)  # the creation, the approval and 30 URLs: 25, then 7
    expect(rows.last).to_contain_text("offerwall.created")
    expect(page.get_by_role("button", name="Older")).to_be_disabled()
    looked_at(page, "audit-log-older")
    _fits(page)

    # The password was entered at sign-in, minutes ago: the export needs nothing more.
    with page.expect_download() as download:
        page.get_by_role("button", name="CSV").click()
    assert re.fullmatch(r"questwall-audit-\d+\.csv", download.value.suggested_filename)
    table = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text("utf-8"))))
    assert len(table) == 32 and {r["target_id"] for r in table} == {wall_id}
    assert [r["action"] for r in table[:2]] == ["offerwall.created", "offerwall.approved"]

    page.get_by_role("button", name="Clear").click()
    expect(page.get_by_label("Action")).to_have_value("")  # the form drawn again, empty
    page.get_by_label("Action").fill("audit.exported")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(STAFF_EMAIL)
    expect(rows.first.get_by_test_id("audit-change").filter(has_text="rows")).to_have_text(
        "rows: — → 32"
    )

    # Eleven minutes later, the export asks for the password again first.
    with portal.engine().begin() as db:
        db.execute(sa.update(PortalSession).values(password_confirmed_at=_eleven_minutes_ago()))
    page.get_by_role("button", name="JSON Lines").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Enter your password")
    dialog.get_by_label("Your password").fill(portal.staff[1])
    with page.expect_download() as download:
        dialog.get_by_role("button", name="Continue").click()
    assert download.value.suggested_filename.endswith(".jsonl")
    expect(dialog).to_have_count(0)

    page.get_by_label("Since").fill("last week")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("alert")).to_contain_text("since must be an ISO date or time")


def test_a_designer_reads_the_history_of_a_game_and_a_mission(portal, page):
    studio = studio_with_designer(
        portal, "History Studio", "designer-history@example.com", "designer-2026"
    )
    with portal.setting_up() as (session, box):
        game = create_game(session=session, box=box, name="History Game", studio_id=studio)
    engine = portal.engine()
    try:
        mission_id = make_mission(engine, game.game_id, title="Reach level 10").id
    finally:
        engine.dispose()
    with portal.setting_up() as (session, box):
        designer_id = session.execute(
            sa.select(User.id).where(User.email == "designer-history@example.com")
        ).scalar_one()
        designer = audit.account_actor(designer_id, "designer-history@example.com", "designer")
        with audit.acting_as(designer):
            audit.record(
                session,
                "mission.changed",
                target_type="mission",
                target_id=mission_id,
                target_name="Reach level 10",
                scope=("studio", studio),
                changes={"payout_micros": [1_000_000, 1_500_000]},
            )
            audit.record(
                session,
                "game.renamed",
                target_type="game",
                target_id=game.game_id,
                target_name="History Game",
                scope=("studio", studio),
                changes={"name": ["History Gam", "History Game"]},
            )
            audit.record(
                session,
                "account.password_changed",
                target_type="account",
                target_id=designer_id,
                target_name="designer-history@example.com",
                scope=("studio", studio),
            )
        elsewhere = studios.create_studio(session=session, name="Elsewhere Studio").id
    sign_in(
        page,
        portal.url,
        "designer-history@example.com",
        "designer-2026",
        then=routes.game(game.game_id),
    )
    expect(page.get_by_role("heading", name="History Game")).to_be_visible()
    page.get_by_test_id("game-tabs").get_by_role("button", name="History").click()
    rows = page.get_by_test_id("audit-event")
    expect(rows).to_have_count(3)  # created with its first credential, then renamed
    expect(rows.first).to_contain_text("game.renamed")
    expect(rows.last).to_contain_text("game.created")
    expect(rows.first.get_by_test_id("audit-change")).to_have_text(
        "name: History Gam → History Game"
    )
    looked_at(page, "game-history")

    page.goto(portal.url + routes.mission(game.game_id, mission_id))
    page.get_by_role("link", name="This mission's history").click()
    expect(page.get_by_role("heading", name="History of Reach level 10")).to_be_visible()
    expect(rows).to_have_count(2)  # created, then its payout changed
    expect(rows.last).to_contain_text("mission.created")
    expect(rows.first.get_by_test_id("audit-change")).to_have_text(
        "payout_micros: 1000000 → 1500000"
    )
    looked_at(page, "mission-history")

    # The studio's security log: what happened to its accounts, and what they did.
    page.get_by_role("link", name="Games").first.click()
    page.get_by_role("link", name="Your studio's security log").click()
    expect(page.get_by_role("heading", name="History Studio")).to_be_visible()
    for action in ("account.created", "account.password_changed", "account.signed_in"):
        expect(rows.filter(has_text=action)).not_to_have_count(0)
    expect(rows.filter(has_text="game.renamed")).to_have_count(1)
    looked_at(page, "studio-security")
    page.goto(portal.url + routes.studio_security(elsewhere))
    expect(page.get_by_text("Your account may not do this.")).to_be_visible()
    expect(page.get_by_test_id("audit-event")).to_have_count(0)

    # Another studio's game: refused, the same answer as a game that does not exist.
    with portal.setting_up() as (session, box):
        other = create_game(session=session, box=box, name="Not Theirs")
    page.goto(portal.url + routes.with_game(routes.GAME_HISTORY, other.game_id))
    expect(page.get_by_text("No such game.")).to_be_visible()


def test_a_publisher_reads_their_history_and_security_log_without_others_details(portal, page):
    wall = approved_publisher_signed_in(portal, page, "History Wall")
    designer = audit.account_actor(
        "d-elsewhere", "reviewer@studio.example", "designer", ip="198.51.100.99"
    )
    with portal.setting_up() as (session, _box):
        with audit.acting_as(STAFF):
            audit.record(
                session,
                "offerwall.reversal_url_changed",
                target_type="offerwall",
                target_id=wall.id,
                target_name=wall.name,
                scope=("offerwall", wall.id),
                changes={"reversal_url": [None, "https://history.example/reversal"]},
            )
        with audit.acting_as(designer):  # a studio deciding on this publisher's conversion
            audit.record(
                session,
                "conversion.rejected",
                target_type="conversion",
                target_id="tx-history-1",
                scope=("offerwall", wall.id),
                changes={"status": ["pending", "rejected"]},
            )
    page.get_by_test_id("workspace-records").get_by_role("link", name="History").click()
    expect(page.get_by_role("heading", name="History", exact=True)).to_be_visible()
    rows = page.get_by_test_id("audit-event")
    expect(rows.filter(has_text="publisher.signed_up")).to_have_count(1)
    expect(rows.filter(has_text="offerwall.approved")).to_contain_text("History Wall")
    expect(rows.filter(has_text="offerwall.reversal_url_changed")).to_contain_text(
        "Questwall staff"
    )
    expect(rows.filter(has_text="conversion.rejected")).to_contain_text("A game studio")
    events = page.get_by_test_id("audit-events")
    for private in (STAFF_EMAIL, "2001:db8:4:5", "reviewer@studio.example", "198.51.100.99"):
        expect(events).not_to_contain_text(private)
    looked_at(page, "publisher-history")

    page.goto(portal.url + routes.PUBLISHER_SECURITY)
    expect(page.get_by_role("heading", name="Security log")).to_be_visible()
    page.goto(portal.url + routes.PUBLISHER_HISTORY + routes.offerwall_query("someone-else"))
    expect(page.get_by_text("Your account may not do this.")).to_be_visible()


def test_others_cannot_open_the_audit_log_nor_send_its_events(portal, new_page):
    from portal.audit.audit_log_state import AuditLogState

    designer = new_page()
    studio_with_designer(portal, "Audit Studio", "designer-audit@example.com", "designer-2026")
    designer.add_init_script(SPY)
    sign_in(designer, portal.url, "designer-audit@example.com", "designer-2026")
    designer.goto(portal.url + routes.STAFF_AUDIT)
    expect(designer.get_by_text("Your account cannot open that page.")).to_be_visible()
    expect(designer).not_to_have_url(re.compile(routes.STAFF_AUDIT))
    send_event(designer, handler_name(AuditLogState, "older_page"), {}, routes.STAFF_AUDIT)
    expect_refusals(designer, 1)
    answer = designer.evaluate("async () => (await fetch('/staff/audit/export?format=csv')).status")
    assert answer == 403
