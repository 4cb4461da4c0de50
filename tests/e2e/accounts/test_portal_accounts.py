"""Accounts in the real portal, with its mail going to a real SMTP server (aiosmtpd): the
forgotten password by mail, the account page (change the password, sign out everywhere),
staff disabling and enabling an account, the publisher's approval mail, the outbox page,
and the staff's handlers refusing events forged by another role."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from models import Studio, User
from tests.e2e.socket_events import (
    SPY,
    expect_refusals,
    form,
    handler_name,
    send_event,
)
from tests.e2e.steps import (
    PUBLISHER_PASSWORD,
    applicant_signed_in,
    sign_in,
    sign_in_with_the_form,
    staff_approve,
)
from tests.smtp import reset_link, text_of

pytestmark = pytest.mark.e2e

NEW_PASSWORD = "violet-harbour-2027"


def signed_out(page: Page) -> None:
    """A page of a signed-out browser lands on the sign-in page."""
    page.reload()
    expect(page).to_have_url(re.compile(r"/login"))


def open_account_page(page: Page) -> None:
    page.get_by_role("button", name="Account menu").click()
    page.get_by_role("menuitem", name="Your account").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()


def test_a_forgotten_password_is_reset_by_mail_and_the_new_one_signs_in(portal, mailbox, new_page):
    first = new_page()
    email = applicant_signed_in(portal, first, "Forgetful Wall")
    # The same answer for an address with an account and one without (no mail for it).
    for address in ("nobody@example.com", email):
        page = new_page()
        page.goto(portal.url + "/login")
        page.wait_for_load_state("networkidle")  # live: a click is not a plain link's
        page.get_by_role("link", name="Forgot your password?").click()
        expect(page.get_by_role("heading", name="Forgot your password?")).to_be_visible()
        page.wait_for_load_state("networkidle")
        page.get_by_label("Email").fill(address)
        page.get_by_role("button", name="Send the link").click()
        expect(page.get_by_text("If an account uses that address")).to_be_visible(timeout=15_000)

    message = mailbox.wait_for(email, subject="Set a new password")
    link = reset_link(message)
    assert link.startswith(portal.url + "/reset-password#token=qw_r_")
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("short")
    page.get_by_label("Repeat the new password").fill("short")
    page.get_by_role("button", name="Set the new password").click()
    expect(page.get_by_text("Use at least 10 characters.")).to_be_visible()
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("Repeat the new password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set the new password").click()
    expect(page.get_by_text("Your password is changed.")).to_be_visible()
    signed_out(first)  # every session of the account ended

    sign_in_with_the_form(page, portal.url, email, PUBLISHER_PASSWORD)
    expect(page.get_by_text("Wrong email or password.")).to_be_visible()
    sign_in_with_the_form(page, portal.url, email, NEW_PASSWORD)
    expect(page.get_by_role("heading", name="Your application")).to_be_visible()
    # The link worked once.
    page.goto(link)
    page.get_by_label("New password", exact=True).fill("another-passphrase-1")
    page.get_by_label("Repeat the new password").fill("another-passphrase-1")
    page.get_by_role("button", name="Set the new password").click()
    expect(page.get_by_text("This link no longer works")).to_be_visible()
    assert [m["To"] for m in mailbox.messages].count("nobody@example.com") == 0


def test_the_account_page_changes_the_password_and_signs_out_everywhere(portal, new_page):
    page, elsewhere = new_page(), new_page()
    email = applicant_signed_in(portal, page, "Careful Wall")
    sign_in(elsewhere, portal.url, email, PUBLISHER_PASSWORD)
    expect(elsewhere.get_by_role("heading", name="Your application")).to_be_visible()
    open_account_page(page)
    expect(page.get_by_text(email).last).to_be_visible()
    expect(page.get_by_text(re.compile(r"^publisher$", re.IGNORECASE))).to_be_visible()
    expect(page.get_by_text("Careful Wall")).to_be_visible()

    page.get_by_label("Current password").fill("not my password")
    page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("Repeat the new password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("This is not your current password.")).to_be_visible()
    page.get_by_label("Current password").fill(PUBLISHER_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("Password changed.")).to_be_visible()
    signed_out(elsewhere)
    page.reload()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()  # still in

    sign_in(elsewhere, portal.url, email, NEW_PASSWORD)
    expect(elsewhere.get_by_role("heading", name="Your application")).to_be_visible()
    page.get_by_role("button", name="Sign out everywhere").click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text("this one too")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    page.get_by_role("button", name="Sign out everywhere").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Sign out everywhere").click()
    expect(page).to_have_url(re.compile(r"/login/?$"))
    signed_out(elsewhere)


def test_staff_disable_an_account_that_then_cannot_sign_in_and_enable_it_again(portal, new_page):
    user, staff = new_page(), new_page()
    email = applicant_signed_in(portal, user, "Disabled Wall")
    sign_in(staff, portal.url, *portal.staff)
    staff.get_by_role("link", name="Users").click()
    expect(staff.get_by_role("heading", name="Users")).to_be_visible()
    staff.get_by_label("Search accounts").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()
    row = staff.get_by_test_id("user-row").filter(has_text=email)
    expect(row).to_contain_text("Disabled Wall")
    # Staff cannot disable themselves: their own row has no such button.
    staff.get_by_label("Search accounts").fill(portal.staff[0])
    staff.get_by_role("button", name="Search", exact=True).click()
    mine = staff.get_by_test_id("user-row").filter(has_text=portal.staff[0])
    expect(mine.get_by_text("You", exact=True)).to_be_visible()
    expect(mine.get_by_role("button", name="Disable")).to_have_count(0)
    staff.get_by_label("Search accounts").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()

    row.get_by_role("button", name="Disable").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Disable").click()
    expect(staff.get_by_text(f"{email} is disabled")).to_be_visible()
    expect(row).to_contain_text("disabled")
    signed_out(user)
    sign_in_with_the_form(user, portal.url, email, PUBLISHER_PASSWORD)
    expect(user.get_by_text("This account is disabled.")).to_be_visible()

    row.get_by_role("button", name="Enable").click()
    expect(staff.get_by_text(f"{email} can sign in again.")).to_be_visible()
    sign_in(user, portal.url, email, PUBLISHER_PASSWORD)
    expect(user.get_by_role("heading", name="Your application")).to_be_visible()


def test_an_approved_publisher_gets_a_mail_and_staff_read_the_outbox(portal, mailbox, new_page):
    publisher, staff = new_page(), new_page()
    email = applicant_signed_in(portal, publisher, "Welcome Wall")
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    staff_approve(staff, portal.url, "Welcome Wall")
    message = mailbox.wait_for(email, subject="approved")
    body = text_of(message)
    assert portal.url + "/publisher" in body and "qw_ak_" not in body
    assert re.search(r"owid\) is ow[a-z0-9]{10}", body), body

    staff.get_by_role("link", name="Mail", exact=True).click()
    expect(staff.get_by_role("heading", name="Mail outbox")).to_be_visible()
    staff.get_by_label("Search messages").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()
    row = staff.get_by_test_id("mail-row").filter(has_text="Welcome Wall is approved")
    expect(row).to_contain_text("sent")
    row.get_by_role("button", name="Welcome Wall is approved").click()
    expect(staff.get_by_test_id("mail-body")).to_contain_text("Good news")
    staff.keyboard.press("Escape")
    # A reset link is its recipient's alone: staff read that it is there, not the link.
    staff.get_by_role("link", name="Users").click()
    staff.get_by_label("Search accounts").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()
    staff.get_by_test_id("user-row").filter(has_text=email).get_by_role(
        "button", name="Send reset link"
    ).click()
    expect(
        staff.get_by_text(f"A link to set a new password is on its way to {email}.")
    ).to_be_visible()
    mailbox.wait_for(email, subject="Set a new password")
    staff.get_by_role("link", name="Mail", exact=True).click()
    staff.get_by_label("Search messages").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()
    staff.get_by_role("button", name="Set a new password for Questwall").click()
    expect(staff.get_by_test_id("mail-body")).to_contain_text("only its recipient reads")
    expect(staff.get_by_test_id("mail-body")).not_to_contain_text("token")


def test_staff_handlers_refuse_events_forged_by_a_publisher(portal, new_page):
    from portal.accounts.account_state import AccountState
    from portal.accounts.users_state import UsersState
    from portal.mail.state import MailState
    from portal.studios.state import StudioState

    staff, mine = new_page(), new_page()
    mine.add_init_script(SPY)
    email = applicant_signed_in(portal, mine, "Forging Wall")
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    with Session(portal.engine()) as db:
        boss = db.exec(select(User).where(User.email == portal.staff[0])).one()
        me = db.exec(select(User).where(User.email == email)).one()
    mine.goto(portal.url + "/account")
    expect(mine.get_by_role("heading", name="Your account")).to_be_visible()
    where = "/staff/users"
    send_event(
        mine, handler_name(UsersState, "ask_disable"), {"user_id": boss.id, "email": "x"}, where
    )
    send_event(mine, handler_name(UsersState, "disable"), {}, where)
    send_event(mine, handler_name(UsersState, "send_reset"), {"user_id": boss.id}, where)
    send_event(mine, handler_name(UsersState, "enable"), {"user_id": me.id}, where)
    send_event(mine, handler_name(UsersState, "end_sessions"), {"user_id": boss.id}, where)
    send_event(mine, handler_name(MailState, "open"), {"message_id": 1}, "/staff/mail")
    send_event(
        mine,
        handler_name(StudioState, "start_rename"),
        {"studio_id": "x", "name": "x"},
        "/staff/studios",
    )
    send_event(mine, handler_name(StudioState, "rename"), form(name="Mine Now"), "/staff/studios")
    expect_refusals(mine, 6)
    # The account page's own handlers act on the sender's account only: still signed in.
    send_event(mine, handler_name(AccountState, "load"), {}, "/account")
    expect(mine.get_by_role("heading", name="Your account")).to_be_visible()

    with Session(portal.engine()) as db:
        boss_after = db.get(User, boss.id)
        studios = db.exec(select(Studio.name)).all()
    assert boss_after.disabled_at is None and boss_after.password_hash == boss.password_hash
    assert "Mine Now" not in studios


def test_staff_rename_a_studio_to_a_name_no_other_studio_has(portal, page):
    sign_in(page, portal.url, *portal.staff, then="/staff/studios")
    for name in ("Old Mill Games", "Taken Name Studio"):
        page.get_by_label("Studio name").fill(name)
        page.get_by_role("button", name="Create studio").click()
        expect(page.get_by_text(f"Studio {name} created.")).to_be_visible()
    # As a person would, wait for the notices to go: the list grows with every test's
    # studios, and a row under a notice cannot be clicked (the pointer on a notice keeps
    # it open).
    expect(page.locator("[data-sonner-toast]")).to_have_count(0)
    row = page.get_by_test_id("studio-row").filter(has_text="Old Mill Games")
    row.get_by_role("button", name="Rename").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("New name").fill("taken name studio")
    dialog.get_by_role("button", name="Rename").click()
    expect(dialog.get_by_text("A studio with this name exists.")).to_be_visible()
    dialog.get_by_label("New name").fill("New Mill Games")
    dialog.get_by_role("button", name="Rename").click()
    expect(page.get_by_text("The studio is now called New Mill Games.")).to_be_visible()
    expect(page.get_by_test_id("studio-row").filter(has_text="New Mill Games")).to_have_count(1)
    expect(page.get_by_test_id("studio-row").filter(has_text="Old Mill Games")).to_have_count(0)
    expect(page.get_by_label("Studio name")).to_have_value("")  # the create form untouched
