"""Two-factor sign-in in the real portal, at a laptop's and a phone's width: set up on the
account page (the QR code and the key in text; the key read from the page gives the codes,
as an authenticator app would), then a sign-in asks for a code after the password; a code
used once is refused again, and a recovery code works once."""

from __future__ import annotations

import re
import time

import pyotp
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, col, select

from models import AuditEvent, User
from tests.e2e.conftest import looked_at
from tests.e2e.socket_events import SPY, wait_until_connected
from tests.e2e.steps import sign_in, sign_in_with_the_form, studio_with_designer

pytestmark = pytest.mark.e2e

PASSWORD = "two-steps-ahead-2026"
# The designer's home, signed in (not the sign-in page that would come back to it).
HOME = re.compile(r"^[^?]*/studio/games/?$")
EMAIL = "mfa-mo@example.com"


def enter_code(page: Page, code: str) -> None:
    # The answer's callback is an event: one sent before the page's on_load is done is
    # dropped (tests/e2e/socket_events.py).
    wait_until_connected(page)
    page.get_by_label("Code", exact=True).fill(code)
    page.get_by_role("button", name="Verify").click()


def sign_out(page: Page, url: str) -> None:
    page.goto("about:blank")  # the signed-in page would go to the sign-in page itself
    page.context.request.post(url + "/auth/sign-out", headers={"Origin": url})
    page.context.clear_cookies()


def test_two_factor_sign_in_set_up_then_used(portal, new_page):
    studio_with_designer(portal, "Two Step Studio", EMAIL, PASSWORD)
    page = new_page(1366, 768)
    page.add_init_script(SPY)
    sign_in(page, portal.url, EMAIL, PASSWORD, then="/account")
    wait_until_connected(page)

    page.get_by_role("button", name="Set up two-factor sign-in").click()
    expect(
        page.get_by_role("img", name="QR code to scan with your authenticator app")
    ).to_be_visible()
    secret = page.locator("#mfa-secret").inner_text().replace(" ", "")
    assert re.fullmatch(r"[A-Z2-7]{32}", secret), secret
    app = pyotp.TOTP(secret)
    looked_at(page, "account-mfa-enrol")

    page.get_by_label("Code from the app").fill("000000")
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_text("That code is not right")).to_be_visible()
    page.get_by_label("Code from the app").fill(app.now())
    page.get_by_role("button", name="Turn on").click()
    codes = page.locator("#recovery-codes .recovery-code")
    expect(codes).to_have_count(10)
    recovery = codes.all_inner_texts()
    expect(page.get_by_text("Recovery codes left:")).to_contain_text("10")
    looked_at(page, "account-mfa-codes")
    page.get_by_role("button", name="I have saved them").click()
    expect(codes).to_have_count(0)

    # Signed out, the password alone no longer opens the account: a code does.
    sign_out(page, portal.url)
    sign_in_with_the_form(page, portal.url, EMAIL, PASSWORD)
    expect(page).to_have_url(re.compile(r"/login/code"))
    expect(page.get_by_role("heading", name="Enter your code")).to_be_visible()
    looked_at(page, "login-code")
    code = app.at(time.time() + 30)  # the next step's: the enrolment used this one's
    enter_code(page, code)
    expect(page).to_have_url(HOME)

    # The same code again is refused, even with the right password first.
    sign_out(page, portal.url)
    sign_in_with_the_form(page, portal.url, EMAIL, PASSWORD)
    expect(page).to_have_url(re.compile(r"/login/code"))
    enter_code(page, code)
    expect(page.get_by_role("alert")).to_contain_text("not right, or was used already")
    looked_at(page, "login-code-refused")

    # A recovery code instead: once.
    enter_code(page, recovery[0])
    expect(page).to_have_url(HOME)
    sign_out(page, portal.url)
    sign_in_with_the_form(page, portal.url, EMAIL, PASSWORD)
    expect(page).to_have_url(re.compile(r"/login/code"))
    enter_code(page, recovery[0])
    expect(page.get_by_role("alert")).to_contain_text("not right, or was used already")
    enter_code(page, recovery[1])
    expect(page).to_have_url(HOME)
    page.goto(portal.url + "/account")
    wait_until_connected(page)
    expect(page.get_by_text("Recovery codes left:")).to_contain_text("8")
    looked_at(page, "account-mfa-on")

    with Session(portal.engine()) as db:
        me = db.exec(select(User).where(User.email == EMAIL)).one()
        actions = db.exec(select(AuditEvent.action).where(col(AuditEvent.target_id) == me.id)).all()
    assert {"account.mfa_enrolled", "account.recovery_code_used"} <= set(actions)
    assert actions.count("account.recovery_code_used") == 2
