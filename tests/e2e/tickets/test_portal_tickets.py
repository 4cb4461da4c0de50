"""Support tickets in the real portal: a player's "Missing reward?" report, opened through
the service as the hosted wall opens it, reaches its publisher's Tickets page with what
Questwall knew; the publisher answers and closes it and the player reads the answer;
another publisher's ticket stays out of reach, also by hand; staff see every ticket."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.core.db import new_session, write_session
from api.tickets import report
from models import Click, Conversion, Offerwall, SupportTicket, User
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, handler_name, send_event
from tests.e2e.steps import (
    PUBLISHER_PASSWORD,
    approved_publisher_signed_in,
    approved_wall,
    convert,
    inside_the_window,
    sign_in,
)

pytestmark = pytest.mark.e2e

DESKTOP, PHONE = (1366, 900), (390, 844)
ANSWER = "The game reported your win late; the gems are on their way today."


def _open_ticket(portal, owid: str, uid: str, message: str) -> SupportTicket:
    """What the hosted wall does when the player sends the form: the offer they picked is
    the mission they converted (convert() made it)."""
    engine = portal.engine()
    try:
        with Session(engine) as db:
            mission_id = db.exec(
                select(Conversion.mission_id)
                .join(Click, Click.id == Conversion.click_id)  # type: ignore[arg-type]
                .where(Click.uid == uid)
            ).one()
        with write_session(engine) as session:
            return report.open_ticket(
                session, offerwall_id=owid, uid=uid, offer_id=mission_id, message=message
            )
    finally:
        engine.dispose()


def _player_reads(portal, owid: str, uid: str) -> list[tuple[str, str, str | None]]:
    engine = portal.engine()
    try:
        with new_session(engine) as session:
            found = report.player_tickets(session, offerwall_id=owid, uid=uid)
            return [(t.reference, t.status, t.answer) for t in found]
    finally:
        engine.dispose()


def _settled(page: Page) -> None:
    """Wait until the dialog's opening animation is over, so a screenshot shows it whole."""
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")


def _fits(page: Page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_a_publisher_answers_and_closes_their_players_ticket(portal, new_page):
    from portal.tickets.state import TicketsState

    publisher, staff = new_page(*DESKTOP), new_page(*DESKTOP)
    publisher.add_init_script(SPY)
    owid = approved_publisher_signed_in(portal, publisher, "Helpdesk Wall").owid
    assert owid is not None
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    # The player converts, yet says the reward never came.
    convert(portal, owid, "help-player")
    mine = _open_ticket(portal, owid, "help-player", "I won the match but got\nno gems at all.")
    # Another publisher's player, with a ticket of their own.
    other_owid = approved_wall(portal, "Elsewhere Wall")
    convert(portal, other_owid, "else-player")
    theirs = _open_ticket(portal, other_owid, "else-player", "Nothing arrived here either.")

    # The publisher's Tickets page lists their ticket alone, with the count waiting.
    publisher.reload()
    expect(publisher).to_have_url(re.compile(r"/publisher/?$"))
    publisher.get_by_role("navigation", name="Main").get_by_role("link", name="Tickets").click()
    expect(publisher.get_by_role("heading", name="Tickets")).to_be_visible()
    rows = publisher.get_by_test_id("ticket-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(mine.reference)
    expect(rows.first).to_contain_text("Win once (help-player)")
    expect(rows.first).to_contain_text("help-player")
    expect(publisher.get_by_test_id("open-tickets")).to_have_text("1")
    expect(publisher.get_by_text(theirs.reference)).to_have_count(0)

    # The ticket: the message, the player, and what Questwall knew.
    rows.first.get_by_role("button", name="Open").click()
    dialog = publisher.get_by_role("dialog")
    expect(dialog).to_contain_text(mine.reference)
    expect(dialog.get_by_test_id("ticket-message")).to_have_text(
        "I won the match but got\nno gems at all."
    )
    expect(dialog).to_contain_text("Opened once,")
    expect(dialog).to_contain_text("1 game account linked to the player.")
    mission = dialog.get_by_test_id("ticket-mission")
    expect(mission).to_contain_text("completed")
    expect(mission).to_contain_text("WIN, once")
    expect(mission).to_contain_text("1 WIN event since the start")
    conversion = dialog.get_by_test_id("ticket-conversion")
    expect(conversion).to_have_count(1)
    expect(conversion).to_contain_text("approved")
    expect(conversion).to_contain_text("2.00 USD")
    _settled(publisher)
    screenshot(publisher, "tickets-publisher-ticket-1366")

    # An empty answer is refused beside the box; then answered and closed in one go.
    dialog.get_by_role("button", name="Send answer").click()
    expect(dialog.get_by_text("Write the answer first.")).to_be_visible()
    expect(dialog.get_by_label("Answer", exact=True)).to_have_attribute("aria-invalid", "true")
    dialog.get_by_label("Answer", exact=True).fill(ANSWER)
    dialog.get_by_label("Close the ticket with this answer").check()
    dialog.get_by_role("button", name="Send answer").click()
    expect(
        publisher.get_by_text(f"Answer sent; ticket {mine.reference} is closed.")
    ).to_be_visible()
    expect(dialog.get_by_test_id("ticket-answer-given")).to_have_text(ANSWER)
    expect(dialog).to_contain_text("By " + publisher_email(portal, "Helpdesk Wall"))
    expect(dialog.get_by_role("button", name="Reopen")).to_be_visible()
    expect(dialog.get_by_role("button", name="Send answer")).to_have_count(0)
    _settled(publisher)
    screenshot(publisher, "tickets-publisher-answered-1366")
    # What the wall shows the player now.
    assert _player_reads(portal, owid, "help-player") == [(mine.reference, "closed", ANSWER)]

    dialog.get_by_role("button", name="Back to the list").click()
    expect(dialog).to_be_hidden()
    expect(publisher.get_by_test_id("open-tickets")).to_have_text("0")
    publisher.get_by_role("radio", name="Open").click()
    expect(rows).to_have_count(0)
    expect(publisher.get_by_text("No tickets here")).to_be_visible()
    publisher.get_by_role("radio", name="Closed").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("closed")
    screenshot(publisher, "tickets-publisher-list-1366")

    # By hand, over the websocket: the other publisher's ticket is not theirs to open,
    # answer or close.
    send_event(publisher, handler_name(TicketsState, "view"), {"ticket_id": theirs.id}, "/tickets")
    expect(publisher.get_by_text("No such ticket.")).to_be_visible()
    expect(dialog).to_have_count(0)
    assert _player_reads(portal, other_owid, "else-player") == [(theirs.reference, "open", None)]

    # On a phone: the ticket as a card, its dialog, nothing wider than the screen.
    phone = new_page(*PHONE)
    sign_in(
        phone,
        portal.url,
        publisher_email(portal, "Helpdesk Wall"),
        PUBLISHER_PASSWORD,
        then="/tickets",
    )
    card = phone.get_by_test_id("ticket-row").filter(has_text=mine.reference)
    expect(card).to_be_visible()
    phone.wait_for_load_state("networkidle")
    assert _fits(phone)
    screenshot(phone, "tickets-publisher-list-390")
    card.get_by_role("button", name="Open").click()
    expect(phone.get_by_role("dialog")).to_contain_text(ANSWER)
    _settled(phone)
    screenshot(phone, "tickets-publisher-ticket-390")
    phone.get_by_role("button", name="Back to the list").click()
    expect(phone.get_by_role("dialog")).to_be_hidden()

    # Staff see both publishers' tickets, and who answered; the dashboard counts the open one.
    staff.goto(portal.url + "/staff")
    expect(staff.get_by_test_id("card-tickets")).to_be_visible()
    staff.get_by_role("link", name="Answer tickets").click()
    expect(staff).to_have_url(re.compile(r"/tickets\?status=open"))
    staff_rows = staff.get_by_test_id("ticket-row")
    expect(staff_rows.filter(has_text=theirs.reference)).to_have_count(1)
    expect(staff_rows.filter(has_text="Elsewhere Wall")).to_have_count(1)
    expect(staff_rows.filter(has_text=mine.reference)).to_have_count(0)  # closed
    staff.get_by_role("radio", name="All").click()
    staff.get_by_label("Search tickets").fill(mine.reference.replace("-", "").lower())
    staff.get_by_role("button", name="Search").click()
    expect(staff_rows).to_have_count(1)
    expect(staff_rows.first).to_contain_text("Helpdesk Wall")
    expect(staff_rows.first).to_contain_text("By " + publisher_email(portal, "Helpdesk Wall"))
    screenshot(staff, "tickets-staff-1366")
    staff_phone = new_page(*PHONE)
    sign_in(staff_phone, portal.url, *portal.staff, then="/tickets")
    expect(staff_phone.get_by_test_id("ticket-row").first).to_be_visible()
    staff_phone.wait_for_load_state("networkidle")
    assert _fits(staff_phone)
    screenshot(staff_phone, "tickets-staff-390")


def publisher_email(portal, company: str) -> str:
    with Session(portal.engine()) as db:
        wall = db.exec(select(Offerwall).where(Offerwall.name == company)).one()
        return db.exec(select(User.email).where(User.offerwall_id == wall.id)).one()


def test_the_status_filter_fits_the_screen_and_is_a_select_on_a_phone(portal, new_page):
    """A desktop's filter is a row of radios and a phone's a select, whose choices are
    never squeezed or cut. The layout follows the width in CSS alone, so one page is used
    at each width by resizing it."""
    owid = approved_wall(portal, "Filtered Tickets")
    convert(portal, owid, "filter-player")
    ticket = _open_ticket(portal, owid, "filter-player", "No gems came.")
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff, then="/tickets")
    row = staff.get_by_test_id("ticket-row").filter(has_text=ticket.reference)
    expect(row).to_be_visible()
    radios = staff.get_by_role("radiogroup", name="Filter by status")
    select = staff.get_by_role("combobox", name="Filter by status")

    def fits(control, width: int) -> None:
        assert inside_the_window(control), (
            f"the status filter is cut or scrolls sideways at {width} px"
        )
        assert _fits(staff), f"the tickets page scrolls sideways at {width} px"
        screenshot(staff, f"tickets-filter-{width}")

    # A desktop: radios.
    expect(select).to_be_hidden()
    radios.get_by_role("radio", name="Closed").click()
    expect(row).to_have_count(0)
    radios.get_by_role("radio", name="Open").click()
    expect(row).to_be_visible()
    fits(radios, DESKTOP[0])

    # A phone: a select in the radios' place, which filters the same list.
    staff.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    expect(radios).to_be_hidden()
    expect(select.locator("option")).to_have_text(["All", "Open", "Answered", "Closed"])
    select.select_option("closed")
    expect(row).to_have_count(0)
    select.select_option("open")
    expect(row).to_be_visible()
    fits(select, PHONE[0])
