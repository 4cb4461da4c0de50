"""The portal's shell as a user meets it: the navigation says where you are, a phone gets
one header row and tables as cards, forms show every error at once, destructive actions
ask first, toasts stay off the titles and let clicks through to a list's row buttons under
them, and unsaved input is not lost by a stray click."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from tests.e2e.conftest import screenshot
from tests.e2e.steps import (
    approved_publisher_signed_in,
    expect_errors,
    fill_mission,
    publisher_applied,
    sign_in,
    staff_row,
)

pytestmark = pytest.mark.e2e

PHONE = (390, 844)
DESKTOP = (1366, 900)


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not on screen"
    return found


def inside(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
    )


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def approved_publisher(portal, new_page, company: str, size=DESKTOP) -> Page:
    publisher = new_page(*size)
    approved_publisher_signed_in(portal, publisher, company)
    expect(publisher).to_have_url(re.compile(r"/publisher/?$"))
    return publisher


def test_a_sign_up_shows_every_error_at_once_beside_its_field(portal, page):
    page.goto(portal.url + "/signup")
    page.get_by_label("Company").fill("A")
    page.get_by_label("Website").fill("acme.example")
    page.get_by_label("Email").fill("not an address")
    page.get_by_label("Password", exact=True).fill("short")
    page.get_by_label("Repeat the password").fill("other")
    page.get_by_role("button", name="Apply").click()
    expect_errors(
        page,
        {
            "Company": "Enter your company's name (2 to 200 characters).",
            "Website": "Enter your website as a full URL, e.g. https://example.com.",
            "Contact person": "Enter the name of a contact person.",
            "Email": "Enter an email address such as name@example.com.",
            "Password": "Use at least 10 characters.",
            "Repeat the password": "The two passwords differ.",
        },
    )
    screenshot(page, "layout-signup-errors")


def test_the_navigation_marks_the_current_page_and_has_one_level(portal, new_page):
    publisher = approved_publisher(portal, new_page, "Marked Wall")
    nav = publisher.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Offerwall")).to_have_attribute("aria-current", "page")
    nav.get_by_role("link", name="Postback").click()
    expect(publisher).to_have_url(re.compile("/publisher/postback"))
    expect(nav.get_by_role("link", name="Postback")).to_have_attribute("aria-current", "page")
    expect(nav.get_by_role("link", name="Offerwall")).not_to_have_attribute("aria-current", "page")
    # No row of tabs under the title repeats the navigation.
    expect(publisher.get_by_role("link", name="Postback")).to_have_count(1)


def test_a_phone_gets_one_header_row_with_a_menu(portal, new_page):
    publisher = approved_publisher(portal, new_page, "Pocket Wall", size=PHONE)
    header = publisher.locator("header")
    # The page may still be drawing it, or drawing it again after the sign-in's redirect.
    expect(header).to_be_in_viewport()
    publisher.wait_for_load_state("networkidle")
    assert box(header)["height"] <= 72
    expect(publisher.get_by_role("navigation", name="Main")).to_be_hidden()
    publisher.get_by_role("button", name="Menu").click()
    publisher.get_by_role("dialog").get_by_role("link", name="Deliveries").click()
    expect(publisher).to_have_url(re.compile("/publisher/deliveries"))
    screenshot(publisher, "layout-phone-deliveries")


def test_staff_publishers_table_keeps_its_actions_in_the_card(portal, new_page):
    long_name = "Extraordinarily Long Company Name Rewards International"
    publisher_applied(portal, long_name, approved=False)
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers")
    row = staff_row(staff, long_name)
    card = staff.locator(".rt-Card").filter(has=row)
    for width, height in (DESKTOP, PHONE):  # the layout follows the width in CSS alone
        staff.set_viewport_size({"width": width, "height": height})
        for action in ("Approve", "Reject"):
            button = row.get_by_role("button", name=action)
            expect(button).to_be_visible()
            assert inside(box(button), box(card)), f"{action} is outside the card at {width} px"
        assert staff.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(staff, f"layout-staff-publishers-{width}")


def test_suspending_a_publisher_asks_first(portal, new_page):
    approved_publisher(portal, new_page, "Asking Wall")
    staff = new_page()
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers?status=approved")
    staff.get_by_placeholder("Company, email, website or owid").fill("Asking Wall")
    staff.get_by_role("button", name="Search").click()
    staff.get_by_role("radio", name=re.compile("^Approved")).click()
    staff_row(staff, "Asking Wall").get_by_role("button", name="Suspend").click()
    question = staff.get_by_role("alertdialog")
    expect(question).to_contain_text("Suspend Asking Wall?")
    question.get_by_role("button", name="Cancel").click()
    expect(staff_row(staff, "Asking Wall")).to_contain_text("approved")
    staff_row(staff, "Asking Wall").get_by_role("button", name="Suspend").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Suspend").click()
    expect(staff.get_by_text("Asking Wall is suspended")).to_be_visible()


def test_a_toast_does_not_cover_the_buttons_it_answers(portal, new_page):
    publisher = approved_publisher(portal, new_page, "Toasty Wall")
    publisher.get_by_role("navigation", name="Main").get_by_role("link", name="Postback").click()
    publisher.get_by_label("URL", exact=True).fill("https://example.com/pb?uid={uid}")
    publisher.get_by_role("button", name="Save").click()
    toast = publisher.get_by_text("Postback URL saved.")
    expect(toast).to_be_visible()
    for name in ("Save", "Send test postback"):
        assert not overlap(box(toast), box(publisher.get_by_role("button", name=name)))


def test_leaving_a_form_with_unsaved_changes_asks_first(portal, new_page):
    publisher = approved_publisher(portal, new_page, "Unsaved Wall")
    nav = publisher.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Postback").click()
    publisher.get_by_label("URL", exact=True).fill("https://example.com/typed-not-saved")
    asked = []

    def answer(dialog, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    publisher.once("dialog", lambda d: answer(d, accept=False))
    nav.get_by_role("link", name="Deliveries").click()
    expect(publisher).to_have_url(re.compile("/publisher/postback"))
    expect(publisher.get_by_label("URL", exact=True)).to_have_value(
        "https://example.com/typed-not-saved"
    )
    publisher.once("dialog", lambda d: answer(d, accept=True))
    nav.get_by_role("link", name="Deliveries").click()
    expect(publisher).to_have_url(re.compile("/publisher/deliveries"))
    assert asked == ["You have unsaved changes. Leave this page and lose them?"] * 2
    # Once saved, leaving asks nothing.
    nav.get_by_role("link", name="Postback").click()
    publisher.get_by_label("URL", exact=True).fill("https://example.com/saved")
    publisher.get_by_role("button", name="Save", exact=True).click()
    expect(publisher.get_by_text("Postback URL saved.")).to_be_visible()
    nav.get_by_role("link", name="Deliveries").click()
    expect(publisher).to_have_url(re.compile("/publisher/deliveries"))
    assert len(asked) == 2


def test_a_nul_character_in_a_portal_form_is_refused_beside_its_input(portal, new_page):
    from models import Studio
    from portal.studios.state import StudioState
    from tests.e2e.socket_events import SPY, form, send_event

    staff = new_page()
    staff.add_init_script(SPY)
    sign_in(staff, portal.url, *portal.staff, then="/staff/studios")
    expect(staff.get_by_role("heading", name="New studio")).to_be_visible()
    send_event(
        staff,
        f"{StudioState.get_full_name()}.create_studio",
        form(name="Nul\x00Studio"),
        "/staff/studios",
    )
    expect(staff.get_by_text("Remove the NUL character: text cannot hold it.")).to_be_visible()
    with Session(portal.engine()) as session:
        assert session.exec(select(Studio).where(Studio.name.contains("Nul"))).all() == []


def test_a_save_that_succeeds_takes_the_refusals_toast_away_and_toasts_cover_no_title(
    portal, new_page
):
    """Each toast is looked at on a laptop and on a phone by resizing the one page (the
    layout, toasts' places included, follows the width in CSS alone). The save is clicked
    on the phone, where the refusal's toast lies across the bottom over the button."""
    from tests.e2e.missions.test_portal_editors import designer_with_game

    designer, game_id, _, _ = designer_with_game(
        portal, new_page, "Toast Game", width=DESKTOP[0], height=DESKTOP[1]
    )
    designer.goto(f"{portal.url}/studio/mission?game={game_id}")
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    fill_mission(designer, "Win once", "-3", "https://toast.example/play", "WIN")
    designer.get_by_role("button", name="Save mission").click()
    errors = designer.locator("[data-sonner-toast][data-type=error]")
    expect(errors).to_have_text(["Some fields need attention."])

    def clear_of_title_and_tabs(toast, name: str, sizes) -> None:
        for width, height in sizes:
            designer.set_viewport_size({"width": width, "height": height})
            designer.evaluate("window.scrollTo(0, 0)")  # the title and tabs in view
            # Where the toast comes to rest, once it has slid in.
            toast.evaluate("t => Promise.all(t.getAnimations().map(a => a.finished))")
            for part in (designer.locator("h1"), designer.get_by_test_id("game-tabs")):
                assert not overlap(box(toast), box(part)), f"the toast covers {part} at {width}px"
            screenshot(designer, f"{name}-{width}")

    clear_of_title_and_tabs(errors, "toast-refused", (DESKTOP, PHONE))

    designer.get_by_label("Payout (USD)").fill("3")
    # On a phone the toast lies across the bottom, over the button: a tap goes through.
    designer.get_by_role("button", name="Save mission").click()
    saved = designer.locator("[data-sonner-toast][data-type=success]")
    expect(saved).to_have_text(["Mission “Win once” created."])
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    # Gone with the save, not left to run out its four seconds.
    expect(errors).to_have_count(0, timeout=1_000)
    clear_of_title_and_tabs(saved, "toast-saved", (PHONE, DESKTOP))


# A button of a list's row put under the toast (the page scrolled to bring it there), and
# what a click at the button's centre would reach: the button, or the toast over it.
UNDER_THE_TOAST = """async () => {
  const toast = document.querySelector('[data-sonner-toast]');
  if (!toast) return {button: '', under: false, reached: false};
  await Promise.all(toast.getAnimations().map(a => a.finished));  // come to rest
  const t = toast.getBoundingClientRect();
  const room = document.documentElement.scrollHeight - window.innerHeight;
  const button = [...document.querySelectorAll('[data-testid=publisher-row] button')]
    .find(b => {
      const r = b.getBoundingClientRect(), x = r.left + r.width / 2;
      const scroll = window.scrollY + r.top + r.height / 2 - (t.top + t.height / 2);
      return x > t.left + 30 && x < t.right && scroll >= 0 && scroll <= room;
    });
  if (!button) return null;
  const r = button.getBoundingClientRect();
  window.scrollBy(0, r.top + r.height / 2 - (t.top + t.height / 2));
  const b = button.getBoundingClientRect(), x = b.left + b.width / 2, y = b.top + b.height / 2;
  const hit = document.elementFromPoint(x, y);
  return {
    button: button.textContent,
    under: toast.isConnected && x > t.left && x < t.right && y > t.top && y < t.bottom,
    reached: button.contains(hit),
  };
}"""


def test_a_toast_lets_a_click_through_to_the_row_button_under_it(portal, new_page):
    """Staff approve one publisher of a long list: the toast that says so lies over other
    rows' buttons (at the bottom right, or across a phone's bottom), and a click there
    reaches the button (the toast's close button, at its left corner, is left aside).

    One list serves both widths: a laptop's approval is measured, its toast closed, and
    the page resized to a phone's width, where a second approval brings a toast of its
    own (a toast lasts four seconds, too short to be sure of measuring one twice)."""
    from api.publishers import offerwalls

    with portal.setting_up() as (session, _):
        for n in range(12):
            offerwalls.create_offerwall(session=session, name=f"Under Toast {n:02d}")
    staff = new_page(1366, 768)
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers")
    staff.get_by_placeholder("Company, email, website or owid").fill("Under Toast")
    staff.get_by_role("button", name="Search").click()
    rows = staff.get_by_test_id("publisher-row")
    expect(rows).to_have_count(12)
    toasts = staff.locator("[data-sonner-toast]")
    for n, (width, height) in enumerate(((1366, 768), PHONE)):
        staff.set_viewport_size({"width": width, "height": height})
        staff_row(staff, f"Under Toast {n:02d}").get_by_role("button", name="Approve").click()
        expect(staff.get_by_text(f"Under Toast {n:02d} is approved")).to_be_visible()
        expect(rows).to_have_count(11 - n)
        under = staff.evaluate(UNDER_THE_TOAST)
        screenshot(staff, f"toast-over-rows-{width}")
        assert under is not None, f"no row button can be brought under the toast at {width} px"
        assert under["under"], f"the toast went before it could be measured: {under}"
        assert under["reached"], f"the toast takes the click meant for {under['button']}"
        # Closed, so that the next width's toast is the only one on the page.
        # (by script: the toast may be running out its four seconds as it is clicked).
        staff.evaluate(
            "document.querySelectorAll('[data-sonner-toast] [data-close-button]')"
            ".forEach(b => b.click())"
        )
        expect(toasts).to_have_count(0)
