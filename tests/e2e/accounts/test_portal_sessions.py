"""The Sessions page in the real portal, at a laptop's and a phone's width: every browser
signed in to the account, this one marked; ending one signs that browser out, and "End
all other sessions" every browser but this one. And the password asked again, in a
dialog, once the ten minutes since it was last entered are over."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from models import AuditEvent, PortalSession, User
from models.types import utcnow
from tests.e2e.conftest import STAFF_EMAIL, looked_at
from tests.e2e.steps import sign_in, studio_with_designer

pytestmark = pytest.mark.e2e

PASSWORD = "session-keeper-2026"
IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)


def signed_out(page: Page) -> None:
    page.reload()
    expect(page).to_have_url(re.compile(r"/login"))


def sessions_page(page: Page, url: str) -> None:
    page.goto(url + "/account")
    page.get_by_role("link", name="Your sessions").click()
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible()


def test_the_sessions_page_lists_ends_one_and_ends_all_others(portal, browser, new_page):
    email = "sessions-dee@example.com"
    studio_with_designer(portal, "Session Studio", email, PASSWORD)
    laptop = new_page(1366, 768)
    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, user_agent=IPHONE)
    try:
        phone = phone_context.new_page()
        sign_in(laptop, portal.url, email, PASSWORD)
        sign_in(phone, portal.url, email, PASSWORD)

        sessions_page(laptop, portal.url)
        rows = laptop.get_by_test_id("session-row")
        expect(rows).to_have_count(2)
        here = rows.filter(has_text="This browser")
        expect(here).to_have_count(1)
        expect(here).to_contain_text("Chrome")
        there = rows.filter(has_text="Mobile Safari 17 on iOS")
        expect(there).to_contain_text("Signed in")
        expect(there.get_by_text("This browser")).to_have_count(0)
        looked_at(laptop, "account-sessions")

        sessions_page(phone, portal.url)
        mine = phone.get_by_test_id("session-row").filter(has_text="This browser")
        expect(mine).to_contain_text("Mobile Safari 17 on iOS")
        looked_at(phone, "account-sessions-phone", sizes=((390, 844),))

        there.get_by_role("button", name="End session").click()
        expect(laptop.get_by_text("Session ended: that browser is signed out.")).to_be_visible()
        expect(rows).to_have_count(1)
        signed_out(phone)

        others = [new_page(), new_page()]
        for other in others:
            sign_in(other, portal.url, email, PASSWORD)
        laptop.reload()
        expect(rows).to_have_count(3)
        laptop.get_by_role("button", name="End all other sessions").click()
        laptop.get_by_role("alertdialog").get_by_role("button", name="End them").click()
        expect(laptop.get_by_text("2 other sessions ended.")).to_be_visible()
        expect(rows).to_have_count(1)
        expect(laptop.get_by_role("button", name="End all other sessions")).to_be_disabled()
        for other in others:
            signed_out(other)
    finally:
        phone_context.close()

    with Session(portal.engine()) as db:
        me = db.exec(select(User).where(User.email == email)).one()
        ended = db.exec(
            select(AuditEvent).where(
                AuditEvent.action == "session.ended", AuditEvent.target_id == me.id
            )
        ).all()
    assert sorted(e.changes["ended_by"][1] for e in ended) == ["ended"] + ["others_ended"] * 2
    assert all(e.actor_email == email for e in ended)


def test_staff_end_an_accounts_sessions_after_the_password_again(portal, new_page):
    email = "sessions-ended@example.com"
    studio_with_designer(portal, "Ended Studio", email, PASSWORD)
    user, staff = new_page(), new_page()
    sign_in(user, portal.url, email, PASSWORD)
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    with portal.setting_up() as (db, _):  # staff signed in a quarter of an hour ago
        boss = db.exec(select(User).where(User.email == STAFF_EMAIL)).one()
        db.execute(
            sa.update(PortalSession)
            .where(col(PortalSession.user_id) == boss.id)
            .values(password_confirmed_at=utcnow() - timedelta(minutes=15))
        )
    staff.get_by_role("link", name="Users").click()
    staff.get_by_label("Search accounts").fill(email)
    staff.get_by_role("button", name="Search", exact=True).click()
    row = staff.get_by_test_id("user-row").filter(has_text=email)
    row.get_by_role("button", name="End sessions").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="End sessions").click()

    dialog = staff.get_by_role("dialog")
    expect(dialog.get_by_text("Enter your password")).to_be_visible()
    dialog.get_by_label("Your password").fill("not my password")
    dialog.get_by_role("button", name="Continue").click()
    expect(dialog.get_by_text("Wrong password.")).to_be_visible()
    user.reload()
    expect(user.get_by_role("heading", name="Games")).to_be_visible()  # nothing ended yet

    dialog.get_by_label("Your password").fill(portal.staff[1])
    dialog.get_by_role("button", name="Continue").click()
    expect(staff.get_by_text(f"{email} is signed out everywhere.")).to_be_visible()
    expect(dialog).to_have_count(0)
    signed_out(user)
    looked_at(staff, "staff-users-sessions-ended")
    # Within the window now: the next change asks nothing.
    sign_in(user, portal.url, email, PASSWORD)
    row.get_by_role("button", name="End sessions").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="End sessions").click()
    expect(staff.get_by_role("dialog")).to_have_count(0)
    signed_out(user)
