"""The fraud page in the real portal: staff approve, reject and flag conversions held for
review (each approval queues its postback once, a rejection none), add and remove a
blocklist entry and change an offerwall's rules; a designer of another studio sees none
of those conversions, no blocklist and no rules, and cannot decide them by hand."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from playwright.sync_api import expect
from sqlmodel import Session, select

from models import (
    BlockedEntry,
    Click,
    Conversion,
    ConversionStatus,
    Offerwall,
    Postback,
    PostbackKind,
)
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, form, handler_name, send_event
from tests.e2e.steps import approved_wall, convert, sign_in, studio_with_designer
from tests.e2e.studios.test_portal_studios import DESIGNER_PASSWORD

pytestmark = pytest.mark.e2e

REASON = "Completed in a second: a script, not a player."


def _held(portal, owid: str, uid: str) -> None:
    """A player of `owid` completes a new mission of the portal's game a second after
    the click, sooner than its minimum time: the conversion is held for review."""
    convert(portal, owid, uid, minCompletionSeconds=600)


def _refused_click(portal, owid: str, mission_id: str, uid: str) -> None:
    """Click until the blocklist, read again every few seconds, refuses the click."""
    deadline = time.monotonic() + 30
    while True:
        click = httpx.get(f"{portal.url}/missions/{mission_id}", params={"owid": owid, "uid": uid})
        if click.status_code == 403:
            return
        assert time.monotonic() < deadline, "the blocked uid's click was never refused"
        time.sleep(1)


def _conversion(portal, uid: str) -> Conversion:
    with Session(portal.engine()) as db:
        return db.exec(
            select(Conversion).join(Click, Click.id == Conversion.click_id).where(Click.uid == uid)
        ).one()


def _postbacks(portal, conversion_id: int, kind: str | None = None) -> int:
    with Session(portal.engine()) as db:
        query = select(Postback).where(Postback.conversion_id == conversion_id)
        if kind is not None:
            query = query.where(Postback.kind == kind)
        return len(db.exec(query).all())


def _blocked(portal, value: str) -> int:
    with Session(portal.engine()) as db:
        return len(db.exec(select(BlockedEntry).where(BlockedEntry.value == value)).all())


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_staff_review_held_conversions_and_set_the_rules(portal, new_page):
    from portal.fraud.state import FraudState

    staff = new_page(1366, 900)
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    studio_with_designer(portal, "Guard Rivals", "gus@guard-rivals.example", DESIGNER_PASSWORD)
    owid = approved_wall(portal, "Guard Wall")
    with Session(portal.engine()) as db:
        wall_id = db.exec(select(Offerwall.id).where(Offerwall.owid == owid)).one()
    uids = [f"fraud-p{n}" for n in range(1, 5)]
    for uid in uids:
        _held(portal, owid, uid)
    held = {uid: _conversion(portal, uid) for uid in uids}
    assert {c.status for c in held.values()} == {ConversionStatus.PENDING}
    tx = {uid: c.transaction_id for uid, c in held.items()}

    # The queue: each held conversion with its signal and when it is approved by itself.
    staff.get_by_role("link", name="Fraud").first.click()
    expect(staff.get_by_role("heading", name="Fraud", exact=True)).to_be_visible()
    staff.get_by_label("Search held conversions").fill("fraud-p")
    staff.get_by_role("button", name="Search").click()
    rows = staff.get_by_test_id("held-row")
    expect(rows).to_have_count(4)
    for uid in uids:
        row = rows.filter(has_text=tx[uid])
        expect(row).to_contain_text("fast_completion")
        expect(row).to_contain_text(f"Win once ({uid})")
    expect(staff.get_by_role("heading", name="Blocklist")).to_be_visible()
    staff.wait_for_load_state("networkidle")
    screenshot(staff, "fraud-staff-1366")
    assert _fits(staff)

    # Select all on the page, then none; then two of them, approved together.
    staff.get_by_text("Select all on this page").click()
    expect(staff.get_by_text("4 selected")).to_be_visible()
    staff.get_by_text("Select all on this page").click()
    expect(staff.get_by_text("0 selected")).to_be_visible()
    staff.get_by_label(f"Select {tx['fraud-p1']}").click()
    staff.get_by_label(f"Select {tx['fraud-p2']}").click()
    expect(staff.get_by_text("2 selected")).to_be_visible()
    staff.get_by_role("button", name="Approve selected").click()
    expect(staff.get_by_test_id("outcome")).to_have_text("2 approved.")
    expect(rows).to_have_count(2)
    for uid in ("fraud-p1", "fraud-p2"):
        assert _conversion(portal, uid).status == ConversionStatus.APPROVED
        assert _conversion(portal, uid).reviewed_by == portal.staff[0]
        assert _postbacks(portal, held[uid].id) == 1
        assert _postbacks(portal, held[uid].id, PostbackKind.CONVERSION) == 1

    # One rejected with a reason; a missing reason is refused under the field.
    rows.filter(has_text=tx["fraud-p3"]).get_by_role("button", name="Reject").click()
    dialog = staff.get_by_role("dialog")
    expect(dialog).to_contain_text("Reject 1 held conversion?")
    dialog.get_by_role("button", name="Reject").click()
    expect(dialog.get_by_text("Give a reason of 3 to 500 characters.")).to_be_visible()
    expect(dialog.get_by_label("Reason")).to_have_attribute("aria-invalid", "true")
    dialog.get_by_label("Reason").fill(REASON)
    screenshot(staff, "fraud-reject-dialog-1366")
    dialog.get_by_role("button", name="Reject").click()
    expect(dialog).to_be_hidden()
    expect(staff.get_by_test_id("outcome")).to_have_text("1 rejected.")
    expect(rows).to_have_count(1)
    rejected = _conversion(portal, "fraud-p3")
    assert rejected.status == ConversionStatus.REJECTED
    assert rejected.review_note == REASON
    assert _postbacks(portal, held["fraud-p3"].id, PostbackKind.CONVERSION) == 0

    # The last one is kept for a reviewer: no longer approved by itself.
    last = rows.filter(has_text=tx["fraud-p4"])
    last.get_by_role("button", name="Flag").click()
    expect(staff.get_by_test_id("outcome")).to_have_text("1 kept for a reviewer.")
    expect(last).to_contain_text("Waits for a reviewer")
    flagged = _conversion(portal, "fraud-p4")
    assert flagged.status == ConversionStatus.PENDING and flagged.review_due_at is None

    # The blocklist: a malformed address is refused under the field; an entry comes and goes.
    blocklist = staff.get_by_test_id("blocklist")
    blocklist.get_by_label("Kind").select_option("ip")
    blocklist.get_by_label("Value").fill("not-an-ip")
    blocklist.get_by_role("button", name="Block").click()
    expect(blocklist.get_by_text("Not-an-ip is not an IP address.")).to_be_visible()
    expect(blocklist.get_by_label("Value")).to_have_attribute("aria-invalid", "true")
    blocklist.get_by_label("Value").fill("203.0.113.9")
    blocklist.get_by_label("Note").fill("A click farm")
    blocklist.get_by_role("button", name="Block").click()
    expect(staff.get_by_text("203.0.113.9 is blocked.")).to_be_visible()
    entry = staff.get_by_test_id("block-row").filter(has_text="203.0.113.9")
    expect(entry).to_contain_text("A click farm")
    assert _blocked(portal, "203.0.113.9") == 1
    entry.get_by_role("button", name="Remove").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Remove").click()
    expect(entry).to_have_count(0)
    assert _blocked(portal, "203.0.113.9") == 0
    # A player's uid stays blocked: their clicks are refused once every process read it.
    blocklist.get_by_label("Kind").select_option("uid")
    blocklist.get_by_label("Value").fill("fraud-cheater")
    blocklist.get_by_role("button", name="Block").click()
    expect(staff.get_by_text("fraud-cheater is blocked.")).to_be_visible()
    _refused_click(portal, owid, held["fraud-p1"].mission_id, "fraud-cheater")

    # An offerwall's rules, saved and shown again after a reload.
    rules = staff.get_by_test_id("offerwall-rules").filter(has_text="Guard Wall")
    expect(rules.locator("select[name=hosting_network]")).to_have_value("hold")
    expect(rules.locator("select[name=fast_completion] option")).to_have_count(2)
    rules.locator("select[name=hosting_network]").select_option("refuse")
    rules.locator("select[name=fast_completion]").select_option("allow")
    rules.get_by_label("Send pending and rejected postbacks").check()
    rules.get_by_role("button", name="Save rules").click()
    expect(staff.get_by_text("Guard Wall's rules are saved.")).to_be_visible()
    with Session(portal.engine()) as db:
        stored = db.get(Offerwall, wall_id)
        assert stored.fraud_actions == {"hosting_network": "refuse", "fast_completion": "allow"}
        assert stored.review_postbacks is True
    staff.reload()
    rules = staff.get_by_test_id("offerwall-rules").filter(has_text="Guard Wall")
    expect(rules.locator("select[name=hosting_network]")).to_have_value("refuse")
    expect(rules.locator("select[name=fast_completion]")).to_have_value("allow")
    expect(rules.get_by_label("Send pending and rejected postbacks")).to_be_checked()
    # The overview, read again: the refused click by its reason, day and uid.
    expect(staff.get_by_test_id("refused-count")).not_to_have_text("0")
    expect(staff.get_by_test_id("refused-reasons")).to_contain_text("blocked")
    expect(staff.get_by_test_id("refused-day").first).to_contain_text("blocked")
    expect(staff.get_by_test_id("top-uid").filter(has_text="fraud-cheater")).to_have_count(1)
    staff.wait_for_load_state("networkidle")
    screenshot(staff, "fraud-staff-decided-1366")

    # On a phone: every card inside the screen, nothing wider.
    phone = new_page(390, 844)
    sign_in(phone, portal.url, *portal.staff, then="/fraud")
    phone.get_by_label("Search held conversions").fill("fraud-p")
    phone.get_by_role("button", name="Search").click()
    expect(phone.get_by_test_id("held-row")).to_have_count(1)
    phone.wait_for_load_state("networkidle")
    approve = phone.get_by_test_id("held-row").first.get_by_role("button", name="Approve")
    assert _fits(phone)
    screenshot(phone, "fraud-staff-390")
    approve.scroll_into_view_if_needed()
    expect(approve).to_be_in_viewport()
    # The Conversions page finds decided and held ones by status, with why.
    phone.goto(portal.url + "/conversions?status=rejected")
    found = phone.get_by_test_id("conversion-row").filter(has_text=tx["fraud-p3"])
    expect(found).to_contain_text(REASON)
    expect(found).to_contain_text("By " + portal.staff[0])
    expect(phone.get_by_test_id("conversion-row").filter(has_text=tx["fraud-p4"])).to_have_count(0)
    phone.wait_for_load_state("networkidle")
    assert _fits(phone)
    screenshot(phone, "conversions-rejected-390")
    # On a phone the filter is a select.
    phone.get_by_role("combobox", name="Filter by status").select_option("pending")
    waiting = phone.get_by_test_id("conversion-row").filter(has_text=tx["fraud-p4"])
    expect(waiting).to_contain_text("fast_completion")
    waiting.get_by_role("link", name="Decide on the Fraud page").click()
    expect(phone).to_have_url(re.compile("/fraud$"))

    # A designer of another studio: none of these conversions, no blocklist, no rules,
    # and the events sent by hand change nothing.
    rival = new_page(390, 844)
    rival.add_init_script(SPY)
    sign_in(rival, portal.url, "gus@guard-rivals.example", DESIGNER_PASSWORD, then="/fraud")
    expect(rival.get_by_role("heading", name="Fraud", exact=True)).to_be_visible()
    expect(rival.get_by_text("Nothing held")).to_be_visible()
    expect(rival.get_by_test_id("held-count")).to_have_text("0")
    expect(rival.get_by_role("heading", name="Blocklist")).to_have_count(0)
    expect(rival.get_by_test_id("offerwall-rules")).to_have_count(0)
    rival.wait_for_load_state("networkidle")
    assert _fits(rival)
    screenshot(rival, "fraud-designer-390")
    send_event(
        rival, handler_name(FraudState, "approve"), {"transaction_ids": [tx["fraud-p4"]]}, "/fraud"
    )
    send_event(
        rival,
        handler_name(FraudState, "block"),
        form(kind="ip", value="198.51.100.7", note="by a designer"),
        "/fraud",
    )
    rival.wait_for_timeout(1000)
    assert _conversion(portal, "fraud-p4").status == ConversionStatus.PENDING
    assert _blocked(portal, "198.51.100.7") == 0
    rival.wait_for_function(
        "() => window.__received.join('').includes('Your account may not do this.')"
    )
