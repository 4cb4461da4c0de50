"""A payout rule asks staff for their password again once the ten minutes since they last
entered it are over: the dialog asks, and the rule is saved once it is right."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect
from sqlmodel import col, select

from models import PortalSession, User
from models.types import utcnow
from portal import routes
from tests.e2e.conftest import STAFF_EMAIL
from tests.e2e.publishers.test_portal_payout_rules import DESKTOP, arrange, rules_stored
from tests.e2e.steps import sign_in
from tests.factories import mission_data

pytestmark = pytest.mark.e2e


def test_a_payout_rule_after_ten_minutes_asks_for_the_password_then_is_saved(portal, new_page):
    wall_id, _ = arrange(
        portal,
        "Password Wall",
        [mission_data(title="Open 3 chests", payout="1.00", revenue="2.00")],
    )
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff, then=f"{routes.STAFF_OFFERWALL}?offerwall={wall_id}")
    expect(staff.get_by_role("heading", name="Password Wall")).to_be_visible()
    with portal.setting_up() as (db, _):  # signed in twenty minutes ago
        boss = db.exec(select(User).where(User.email == STAFF_EMAIL)).one()
        db.execute(
            sa.update(PortalSession)
            .where(col(PortalSession.user_id) == boss.id)
            .values(password_confirmed_at=utcnow() - timedelta(minutes=20))
        )

    staff.get_by_label("Share of every mission's revenue (%)").fill("70")
    staff.get_by_role("button", name="Save share").click()
    dialog = staff.get_by_role("dialog")
    expect(dialog.get_by_text("Enter your password")).to_be_visible()
    assert rules_stored(portal, wall_id) == []
    dialog.get_by_label("Your password").fill(portal.staff[1])
    dialog.get_by_role("button", name="Continue").click()
    expect(staff.get_by_text("Revenue share saved")).to_be_visible()
    expect(staff.get_by_test_id("every-share")).to_have_text("70%")
    assert rules_stored(portal, wall_id) == [("", None, 70.0)]
    expect(staff).to_have_url(re.compile(rf"offerwall={wall_id}"))
