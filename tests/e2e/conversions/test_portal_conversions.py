"""Reversing a conversion in the real portal: a designer finds their studio's conversion by
its transaction id and reverses it with a reason through the dialog, once even on a
double click; its publisher's reversal postback is queued once; another studio's designer
neither sees it nor reverses it, even by sending the events by hand."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlmodel import Session, select

from models import Click, Conversion, ConversionStatus, Postback, PostbackKind
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, form, handler_name, send_event
from tests.e2e.steps import approved_wall, convert, sign_in, studio_with_designer
from tests.e2e.studios.test_portal_studios import (
    DESIGNER_PASSWORD,
    create_game,
)

pytestmark = pytest.mark.e2e

REASON = "The player's bank took the payment back."


def _conversion(portal, uid: str) -> Conversion:
    """The conversion of the player the publisher calls `uid`, as the server stored it."""
    with Session(portal.engine()) as db:
        return db.exec(
            select(Conversion).join(Click, Click.id == Conversion.click_id).where(Click.uid == uid)
        ).one()


def _reversal_postbacks(portal, conversion_id: int) -> int:
    with Session(portal.engine()) as db:
        found = db.exec(
            select(Postback).where(
                Postback.conversion_id == conversion_id, Postback.kind == PostbackKind.REVERSAL
            )
        ).all()
    return len(found)


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_a_designer_reverses_their_studios_conversion_once(portal, new_page):
    from portal.conversions.state import ConversionsState

    staff, designer, rival = new_page(), new_page(1366, 900), new_page()
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    studio_with_designer(portal, "Refund Studio", "rita@refund.example", DESIGNER_PASSWORD)
    studio_with_designer(portal, "Rival Refunds", "ron@rival-refunds.example", DESIGNER_PASSWORD)
    sign_in(designer, portal.url, "rita@refund.example", DESIGNER_PASSWORD)
    expect(designer.get_by_role("heading", name="Games")).to_be_visible()
    game_id, client_id, secret = create_game(designer, "Refund Arena")
    game = {"gameId": game_id, "clientId": client_id, "clientSecret": secret}
    owid = approved_wall(portal, "Refund Wall")
    convert(portal, owid, "refund-player-1", game=game)
    convert(portal, owid, "refund-player-2", game=game)  # stays approved
    first, second = _conversion(portal, "refund-player-1"), _conversion(portal, "refund-player-2")
    tx = first.transaction_id

    # The designer finds it by its transaction id.
    designer.get_by_role("link", name="Conversions").first.click()
    expect(designer.get_by_role("heading", name="Conversions")).to_be_visible()
    rows = designer.get_by_test_id("conversion-row")
    expect(rows).to_have_count(2)
    designer.get_by_label("Search conversions").fill(tx)
    designer.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(1)
    row = rows.filter(has_text=tx)
    expect(row).to_contain_text("Win once (refund-player-1)")
    expect(row).to_contain_text("Refund Wall")

    # The dialog asks for a reason and says what follows; a refusal stays beside it.
    row.get_by_role("button", name="Reverse").click()
    dialog = designer.get_by_role("dialog")
    expect(dialog).to_contain_text("Refund Wall receives a reversal postback")
    expect(dialog).to_contain_text(tx)
    dialog.get_by_role("button", name="Reverse conversion").click()
    expect(dialog.get_by_text("Give a reason of 3 to 500 characters.")).to_be_visible()
    expect(dialog.get_by_label("Reason")).to_have_attribute("aria-invalid", "true")
    dialog.get_by_label("Reason").fill(REASON)
    screenshot(designer, "conversions-reverse-dialog-1366")
    dialog.get_by_role("button", name="Reverse conversion").dblclick()
    expect(designer.get_by_text(f"Conversion {tx} is reversed")).to_be_visible()
    expect(dialog).to_be_hidden()
    expect(row).to_contain_text("reversed")
    expect(row).to_contain_text(REASON)
    expect(row).to_contain_text("By rita@refund.example")
    # A second reversal is not offered.
    expect(row.get_by_role("button", name="Reverse")).to_have_count(0)
    designer.wait_for_timeout(1000)  # room for a second event, had the double click sent one
    expect(designer.get_by_text("already reversed")).to_have_count(0)
    assert _reversal_postbacks(portal, first.id) == 1
    assert _conversion(portal, "refund-player-1").status == ConversionStatus.REVERSED
    screenshot(designer, "conversions-reversed-1366")

    # The status filter.
    designer.get_by_label("Search conversions").fill("")
    designer.get_by_role("button", name="Search").click()
    designer.get_by_role("radio", name="Approved").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(second.transaction_id)
    designer.get_by_role("radio", name="Reversed").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(tx)

    # On a phone: one card per conversion, the Reverse button inside it, nothing wider.
    phone = new_page(390, 844)
    sign_in(phone, portal.url, "rita@refund.example", DESIGNER_PASSWORD, then="/conversions")
    expect(phone.get_by_test_id("conversion-row")).to_have_count(2)
    phone.wait_for_load_state("networkidle")
    card = phone.get_by_test_id("conversion-row").filter(has_text=second.transaction_id)
    expect(card.get_by_role("button", name="Reverse")).to_be_in_viewport(ratio=0)
    assert _fits(phone)
    screenshot(phone, "conversions-designer-390")
    card.get_by_role("button", name="Reverse").click()
    expect(phone.get_by_role("dialog")).to_be_visible()
    screenshot(phone, "conversions-reverse-dialog-390")
    phone.get_by_role("button", name="Cancel").click()
    expect(phone.get_by_role("dialog")).to_be_hidden()

    # Staff see who reversed it.
    staff.goto(portal.url + "/conversions")
    expect(staff.get_by_role("heading", name="Conversions")).to_be_visible()
    staff.wait_for_load_state("networkidle")
    staff.get_by_label("Search conversions").fill(tx)
    staff.get_by_role("button", name="Search").click()
    found = staff.get_by_test_id("conversion-row")
    expect(found).to_have_count(1)
    expect(found).to_contain_text("By rita@refund.example")

    # Another studio's designer sees neither, and cannot reverse the approved one by hand.
    rival.add_init_script(SPY)
    sign_in(rival, portal.url, "ron@rival-refunds.example", DESIGNER_PASSWORD, then="/conversions")
    expect(rival.get_by_text("No conversions here")).to_be_visible()
    rival.get_by_label("Search conversions").fill(second.transaction_id)
    rival.get_by_role("button", name="Search").click()
    expect(rival.get_by_text("No matches")).to_be_visible()
    send_event(
        rival,
        handler_name(ConversionsState, "start_reverse"),
        {"transaction_id": second.transaction_id},
        "/conversions",
    )
    send_event(
        rival,
        handler_name(ConversionsState, "reverse"),
        form(reason="Reversed by someone else's studio."),
        "/conversions",
    )
    rival.wait_for_timeout(1000)
    expect(rival.get_by_role("dialog")).to_have_count(0)
    assert _conversion(portal, "refund-player-2").status == ConversionStatus.APPROVED
    assert _reversal_postbacks(portal, second.id) == 0


def test_the_test_players_conversions_are_marked_and_filtered(portal, new_page):
    """The test player's conversion says "Test" on the Conversions page and in the delivery
    log, and each list's filter shows real and test, real only or test only."""
    from models import Offerwall
    from models.tracking import TEST_UID
    from portal import routes
    from tests.e2e.conftest import LAPTOP, looked_at

    owid = approved_wall(portal, "Trial Wall")
    with portal.setting_up() as (session, _):  # its test player's conversions send postbacks
        wall = session.exec(select(Offerwall).where(Offerwall.owid == owid)).one()
        wall.test_postbacks = True
        session.add(wall)
        wall_id = wall.id
    convert(portal, owid, TEST_UID, title="Trial by the test player")
    convert(portal, owid, "trial-real", title="Trial by a real player")

    staff = new_page(*LAPTOP)
    sign_in(staff, portal.url, *portal.staff, then="/conversions")
    expect(staff.get_by_role("heading", name="Conversions")).to_be_visible()
    staff.get_by_label("Search conversions").fill("Trial by")
    staff.get_by_role("button", name="Search").click()
    rows = staff.get_by_test_id("conversion-row")
    expect(rows).to_have_count(2)  # real and test, the test one marked
    tried = rows.filter(has_text=TEST_UID)
    expect(tried.get_by_test_id("test-badge")).to_have_text("Test")
    expect(rows.filter(has_text="trial-real").get_by_test_id("test-badge")).to_have_count(0)
    players = staff.get_by_label("Filter by player: real or test")
    expect(players).to_have_value("all")
    players.select_option("test")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(TEST_UID)
    looked_at(staff, "conversions-test-only")
    players.select_option("real")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("trial-real")
    expect(rows.get_by_test_id("test-badge")).to_have_count(0)

    # The publisher's delivery log, as staff open it.
    staff.goto(portal.url + routes.deliveries(wall_id))
    expect(staff.get_by_role("heading", name="Delivery log")).to_be_visible()
    kinds = staff.get_by_test_id("delivery-kind")
    expect(kinds).to_have_count(2)
    expect(staff.get_by_test_id("test-badge")).to_have_count(1)
    log_players = staff.get_by_label("Filter by player: real or test")
    log_players.select_option("test")
    expect(kinds).to_have_count(1)
    expect(staff.get_by_test_id("test-badge")).to_have_count(1)
    expect(staff.get_by_text(TEST_UID, exact=True)).to_be_visible()
    looked_at(staff, "deliveries-test-only")
    log_players.select_option("real")
    expect(kinds).to_have_count(1)
    expect(staff.get_by_test_id("test-badge")).to_have_count(0)
