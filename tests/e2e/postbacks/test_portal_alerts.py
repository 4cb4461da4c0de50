"""The alerts ALERT_WEBHOOK_URL refused, on the staff dashboard of the real portal: each with
its attempts (the answer's status and start, or the error) and "Send again", which only
staff may use, even by sending the event by hand."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from playwright.sync_api import expect
from sqlmodel import Session

from models import AlertAttempt, AlertMessage, MailStatus
from models.types import utcnow
from tests.e2e.conftest import LAPTOP, looked_at
from tests.e2e.socket_events import SPY, expect_refusals, handler_name, send_event
from tests.e2e.steps import applicant_signed_in, sign_in

pytestmark = pytest.mark.e2e


def _given_up_alert(portal, company: str) -> int:
    """An alert of `company`'s pause the webhook refused at every attempt, as the alert
    sender leaves it (the portal under test has no ALERT_WEBHOOK_URL of its own)."""
    from api.postbacks.alerts import MAX_ATTEMPTS

    made = utcnow() - timedelta(hours=3)
    with portal.setting_up() as (session, _):
        alert = AlertMessage(
            event="endpoint.paused",
            body=json.dumps({"event": "endpoint.paused", "name": company}),
            status=MailStatus.FAILED,
            attempts=MAX_ATTEMPTS,
            last_error="HTTP 503",
            created_at=made,
            next_attempt_at=made,
        )
        session.add(alert)
        session.flush()
        assert alert.id is not None
        for n in range(MAX_ATTEMPTS):
            session.add(
                AlertAttempt(
                    alert_id=alert.id,
                    started_at=made + timedelta(minutes=n),
                    duration_ms=12,
                    status_code=503,
                    body_excerpt="upstream unavailable",
                    sent=True,
                )
            )
        return alert.id


def _alert(portal, alert_id: int) -> AlertMessage:
    with Session(portal.engine()) as db:
        found = db.get(AlertMessage, alert_id)
        assert found is not None
        return found


def test_staff_see_a_failed_alert_with_its_attempts_and_send_it_again(portal, new_page):
    alert_id = _given_up_alert(portal, "Alerted Wall")
    staff = new_page(*LAPTOP)
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    card = staff.get_by_test_id("card-alerts")
    row = card.get_by_test_id("failing-alert").filter(has_text="Alerted Wall")
    expect(row).to_contain_text("endpoint.paused")
    expect(row).to_contain_text("failed")
    expect(row).to_contain_text("HTTP 503")
    row.get_by_text("6 attempts").click()  # opens the list
    attempts = row.get_by_test_id("alert-attempt")
    expect(attempts).to_have_count(6)
    expect(attempts.first).to_contain_text("HTTP 503 · 12 ms")
    expect(attempts.first).to_contain_text("upstream unavailable")
    looked_at(staff, "dashboard-failing-alert")

    row.get_by_role("button", name="Send again").click()
    expect(staff.get_by_text("The alert is queued to be sent again now.")).to_be_visible()
    expect(row).to_contain_text("retrying")
    expect(row).to_contain_text("next try")
    sent_again = _alert(portal, alert_id)
    assert sent_again.status == MailStatus.QUEUED and sent_again.lease_until is None
    assert sent_again.next_attempt_at <= utcnow()


def test_a_publisher_cannot_send_an_alert_again_by_hand(portal, new_page):
    from portal.reports.dashboard_state import DashboardState

    alert_id = _given_up_alert(portal, "Forged Alert Wall")
    mine = new_page()
    mine.add_init_script(SPY)
    applicant_signed_in(portal, mine, "Alert Forging Wall")
    mine.goto(portal.url + "/account")
    expect(mine.get_by_role("heading", name="Your account")).to_be_visible()
    send_event(
        mine, handler_name(DashboardState, "send_alert_again"), {"alert_id": alert_id}, "/staff"
    )
    expect_refusals(mine, 1)
    untouched = _alert(portal, alert_id)
    assert (untouched.status, untouched.attempts) == (MailStatus.FAILED, 6)
