"""Publishers in the real portal: signup, approval, the workspace, the postback tools,
rejection, suspension, sign-in throttling, and one publisher trying another's data."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from api.accounts import create_user
from models import Role
from tests.e2e.conftest import screenshot
from tests.e2e.steps import (
    PUBLISHER_PASSWORD,
    applicant_signed_in,
    approved_wall,
    convert,
    inside_the_window,
    offers_status,
    publisher_applied,
    reveal_key,
    rotate,
    sign_in,
    sign_in_with_the_form,
    staff_approve,
    staff_row,
)
from tests.receiver import running_receiver

pytestmark = pytest.mark.e2e


def test_login_page_first_load(portal, page):
    started = time.perf_counter()
    page.goto(portal.url + "/login")
    page.get_by_role("button", name="Sign in").wait_for()
    print(f"\nfirst load of the login page: {(time.perf_counter() - started) * 1000:.0f} ms")
    assert page.title() == "Sign in · Questwall"
    screenshot(page, "login")


def test_publisher_signs_up_is_approved_and_receives_postbacks(portal, new_page):
    publisher, staff = new_page(), new_page()
    # Inline validation: the server's answer appears under the field.
    publisher.goto(portal.url + "/signup")
    publisher.get_by_label("Company").fill("Acme Rewards")
    publisher.get_by_label("Website").fill("https://acme.example")
    publisher.get_by_label("Contact person").fill("Ada Lovelace")
    publisher.get_by_label("Email").fill("ada@acme.example")
    publisher.get_by_label("Password", exact=True).fill(PUBLISHER_PASSWORD)
    publisher.get_by_label("Repeat the password").fill(PUBLISHER_PASSWORD + "x")
    publisher.get_by_role("button", name="Apply").click()
    expect(publisher.get_by_text("The two passwords differ.")).to_be_visible()
    screenshot(publisher, "signup")
    publisher.get_by_label("Repeat the password").fill(PUBLISHER_PASSWORD)
    publisher.get_by_role("button", name="Apply").click()
    expect(publisher.get_by_text("Our staff review applications")).to_be_visible()
    screenshot(publisher, "application-pending")

    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers")
    expect(staff_row(staff, "Acme Rewards")).to_be_visible()
    screenshot(staff, "staff-publishers")
    staff_approve(staff, portal.url, "Acme Rewards")

    publisher.reload()  # the application page sends an approved publisher on
    expect(publisher).to_have_url(re.compile(r"/publisher/?$"))
    expect(publisher.get_by_test_id("owid")).to_have_text(re.compile(r"^ow\w{10}$"))
    owid = publisher.get_by_test_id("owid").inner_text()
    # A wrong password is refused beside the form (the service's field error), no key.
    publisher.get_by_label("Your password").fill("not my password")
    publisher.get_by_role("button", name="Reveal key").click()
    expect(publisher.get_by_text("Wrong password.")).to_be_visible()
    expect(publisher.get_by_test_id("api-key")).to_have_count(0)
    api_key = reveal_key(publisher)
    assert offers_status(portal.url, api_key) == 200
    screenshot(publisher, "publisher-offerwall")

    with running_receiver() as receiver:
        publisher.get_by_role("link", name="Postback").first.click()
        editor = publisher.get_by_label("URL", exact=True)
        editor.fill(receiver.url + "/pb?uid={uid}&tx={transaction_id}&x={nope}")
        expect(publisher.get_by_test_id("unknown-macros")).to_contain_text("{nope}")
        expect(publisher.get_by_test_id("preview")).to_contain_text("uid=player-123")
        expect(publisher.get_by_test_id("preview")).to_contain_text("hash_key=")
        publisher.get_by_role("button", name="Save").click()
        expect(publisher.get_by_text("Postback URL saved.")).to_be_visible()
        publisher.get_by_role("button", name="Send test postback").click()
        expect(publisher.get_by_test_id("test-status")).to_have_text("200")
        expect(publisher.get_by_test_id("test-answer")).to_have_text("ok")
        assert len(receiver.requests) == 1 and "tx=test-" in receiver.requests[0]
        # A double click sends one more test postback, not two (also when a slow browser
        # draws the page again between its clicks: the second comes within 0.5 s).
        publisher.wait_for_timeout(600)  # the first test's click is no double click's
        publisher.get_by_role("button", name="Send test postback").dblclick()
        expect(publisher.get_by_text("Test postback answered 200.")).to_have_count(1)
        publisher.wait_for_timeout(1000)  # room for a second event, had the click sent one
        assert len(receiver.requests) == 2
        screenshot(publisher, "publisher-postback")

        convert(portal, owid, "player-1")
        deadline = time.monotonic() + 10
        while len(receiver.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(receiver.requests) == 3
        publisher.get_by_role("link", name="Deliveries").first.click()
        row = publisher.get_by_role("row").filter(has_text="Win once (player-1)")
        expect(row).to_contain_text("delivered")
        row.get_by_role("button", name="Open").click()
        dialog = publisher.get_by_role("dialog")
        expect(dialog.get_by_role("cell", name="200")).to_be_visible()
        screenshot(publisher, "publisher-deliveries")
        dialog.get_by_role("button", name="Resend now").click()
        expect(publisher.get_by_text("Queued for another attempt now.")).to_be_visible()
        deadline = time.monotonic() + 10
        while len(receiver.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receiver.requests[3] == receiver.requests[2]  # the same URL, resent
        dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_be_hidden()
        # The status filter is a named control, and shows what it filters by.
        status = publisher.get_by_role("combobox", name="Filter by status")
        status.click()
        publisher.get_by_role("option", name="Failed").click()
        expect(status).to_contain_text("Failed")
        expect(row).to_be_hidden()
        status.click()
        publisher.get_by_role("option", name="Delivered").click()
        expect(status).to_contain_text("Delivered")
        expect(row).to_be_visible()

    publisher.get_by_role("link", name="Offerwall").first.click()
    rotate(publisher, "Rotate key", "None")
    expect(publisher.get_by_text("New API key issued")).to_be_visible()
    new_key = publisher.get_by_test_id("api-key").inner_text()
    assert new_key != api_key
    assert offers_status(portal.url, api_key) == 401
    assert offers_status(portal.url, new_key) == 200


def test_a_rejected_publisher_sees_the_reason(portal, new_page):
    publisher, staff = new_page(), new_page()
    applicant_signed_in(portal, publisher, "Shady Clicks")
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers")
    staff_row(staff, "Shady Clicks").get_by_role("button", name="Reject").click()
    staff.get_by_label("Reason").fill("Incentivised traffic is not allowed on our network.")
    staff.get_by_role("dialog").get_by_role("button", name="Reject").click()
    expect(staff.get_by_text("Shady Clicks is rejected")).to_be_visible()
    publisher.reload()
    expect(publisher.get_by_text("Incentivised traffic is not allowed")).to_be_visible()
    screenshot(publisher, "application-rejected")
    publisher.goto(portal.url + "/publisher")  # the workspace stays closed
    expect(publisher).to_have_url(re.compile(r"/account/application/?$"))


def test_a_suspended_publisher_loses_api_access_at_once(portal, new_page):
    publisher, staff = new_page(), new_page()
    applicant_signed_in(portal, publisher, "Paused Wall")
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    staff_approve(staff, portal.url, "Paused Wall")
    # The waiting application page shows the decision by itself: the workspace opens.
    expect(publisher.get_by_label("Your password")).to_be_visible(timeout=15_000)
    api_key = reveal_key(publisher)
    assert offers_status(portal.url, api_key) == 200

    staff.get_by_role("radio", name="Approved").click()
    # The highlight follows the chosen status.
    expect(staff.get_by_role("radio", name="Approved")).to_be_checked()
    expect(staff.get_by_role("radio", name="Pending")).not_to_be_checked()
    staff_row(staff, "Paused Wall").get_by_role("button", name="Suspend").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Suspend").click()
    expect(staff.get_by_text("Paused Wall is suspended")).to_be_visible()
    assert offers_status(portal.url, api_key) == 403
    publisher.goto(portal.url + "/publisher")
    expect(publisher.get_by_text("Your offerwall is suspended")).to_be_visible()

    staff.get_by_role("radio", name="Suspended").click()
    staff_row(staff, "Paused Wall").get_by_role("button", name="Reinstate").click()
    expect(staff.get_by_text("Paused Wall is reinstated")).to_be_visible()
    assert offers_status(portal.url, api_key) == 200


def test_sign_in_pauses_after_repeated_failures(portal, page):
    # An account that never signed in from here: this IP is no known origin of it (an
    # owner's known IP is not paused by the address's count, see the service tests).
    email, password = "forgetful@questwall.example", "amber-harbor-2026"
    with portal.setting_up() as (session, _):
        create_user(session=session, email=email, password=password, role=Role.STAFF)
    for _ in range(5):
        sign_in_with_the_form(page, portal.url, email, "not-the-password-1")
        expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
    sign_in_with_the_form(page, portal.url, email, password)
    expect(page.get_by_role("alert")).to_contain_text("Too many failed sign-ins. Try again in")
    screenshot(page, "login-throttled")
    expect(page).to_have_url(re.compile(r"/login/?$"))


def test_pages_fit_a_phone_and_work_from_the_keyboard(portal, new_page):
    phone = new_page(390, 844)
    phone.goto(portal.url + "/login")
    phone.get_by_label("Email").focus()
    phone.keyboard.type(portal.staff[0])
    phone.keyboard.press("Tab")
    phone.keyboard.type(portal.staff[1])
    phone.keyboard.press("Enter")
    expect(phone.get_by_role("heading", name="Dashboard")).to_be_visible()
    screenshot(phone, "staff-dashboard-phone")
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    phone.goto(portal.url + "/staff/publishers")
    expect(phone.get_by_role("heading", name="Publishers")).to_be_visible()
    screenshot(phone, "staff-publishers-phone")
    overflow = phone.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


def test_the_status_filter_names_each_status_with_its_count_and_fits_a_phone(portal, new_page):
    """A laptop's filter is a row of radios and a phone's a select, whose choices are never
    cut. The layout follows the width in CSS alone, so one page is looked at and used at
    each width by resizing it."""
    from api.publishers import offerwalls

    company = "Filtered Wall"
    with portal.setting_up() as (session, _):
        offerwalls.create_offerwall(session=session, name=company)
    staff = new_page(1366, 900)
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers")
    expect(staff_row(staff, company)).to_be_visible()
    radios = staff.get_by_role("radiogroup", name="Filter by status")
    select = staff.get_by_role("combobox", name="Filter by status")
    counted = re.compile(r"^(All|(Pending|Approved|Rejected|Suspended) \(\d+\))$")

    def fits(control, width: int) -> None:
        assert inside_the_window(control), (
            f"the status filter is cut or scrolls sideways at {width} px"
        )

    # A laptop: radios, each status named with its count.
    expect(select).to_be_hidden()
    expect(radios.get_by_role("radio")).to_have_count(5)
    for status in ("Pending", "Approved", "Rejected", "Suspended"):
        named = re.compile(rf"^{status} \(\d+\)$")
        expect(radios.get_by_role("radio", name=named)).to_be_visible()
    radios.get_by_role("radio", name="Approved").click()
    expect(staff_row(staff, company)).to_have_count(0)
    radios.get_by_role("radio", name="Pending").click()
    expect(staff_row(staff, company)).to_be_visible()
    fits(radios, 1366)
    screenshot(staff, "publishers-filter-1366")

    # A phone: a select in the radios' place, which filters the same list.
    staff.set_viewport_size({"width": 390, "height": 844})
    expect(radios).to_be_hidden()
    options = select.locator("option")
    expect(options).to_have_count(5)
    assert all(counted.match(text) for text in options.all_inner_texts())
    select.select_option("approved")
    expect(staff_row(staff, company)).to_have_count(0)
    select.select_option("pending")
    expect(staff_row(staff, company)).to_be_visible()
    fits(select, 390)
    screenshot(staff, "publishers-filter-390")


# What of a list's row (and the row itself) reaches past the list's edges.
PAST_THE_LIST = """row => {
  const list = row.closest('.qw-cards').getBoundingClientRect();
  return [row, ...row.querySelectorAll('*')]
    .filter(e => { const r = e.getBoundingClientRect();
      return r.width > 0 && (r.left < list.left - 0.5 || r.right > list.right + 0.5); })
    .map(e => (e.closest('td')?.dataset.label || e.tagName) + ': ' + e.textContent.slice(0, 40));
}"""


def test_every_publishers_row_stays_inside_the_list(portal, new_page):
    """A phone's card of a row holds a long company, e-mail and website, the date it
    applied and its buttons, inside the list; a laptop's row too. Opened on every status
    (`?status=all`), pending and approved rows are both listed. The layout follows the
    width in CSS alone, so one page is looked at in both widths by resizing it."""
    publisher_applied(portal, "Cardwide Extraordinarily Longnamed Rewards", approved=False)
    approved_wall(portal, "Cardwide Approved")
    staff = new_page(1366, 900)
    sign_in(staff, portal.url, *portal.staff, then="/staff/publishers?status=all")
    rows = staff.get_by_test_id("publisher-row")
    expect(rows.filter(has_text="Cardwide Extraordinarily Longnamed Rewards")).to_have_count(1)
    expect(rows.filter(has_text="Cardwide Approved")).to_have_count(1)
    staff.wait_for_load_state("networkidle")
    for width, height in ((1366, 900), (390, 844)):
        staff.set_viewport_size({"width": width, "height": height})
        past = {
            rows.nth(i).get_by_role("cell").first.inner_text(): rows.nth(i).evaluate(PAST_THE_LIST)
            for i in range(rows.count())
        }
        assert all(found == [] for found in past.values()), f"past the list at {width} px: {past}"
        assert staff.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(staff, f"publishers-rows-{width}")
