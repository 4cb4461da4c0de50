"""Staff's System page in the real portal: the readiness checks, a postback waiting in its
outbox counted, the server's own dispatcher seen by its heartbeat, the last prune and the
schema at head; and a publisher or a designer refused, by the page and by its handler."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect

from api.core.crypto import SecretBox
from api.core.db import write_session
from api.ops import read_outboxes
from models import Offerwall, Postback
from models.types import utcnow
from portal import routes
from tests.e2e.conftest import looked_at
from tests.e2e.socket_events import SPY, expect_refusals, handler_name, send_event
from tests.e2e.steps import approved_publisher_signed_in, sign_in, studio_with_designer
from tests.factories import make_paying_offerwall, make_postback
from tests.live import cli

pytestmark = pytest.mark.e2e


def _waiting_postback(portal) -> None:
    """A postback of an offerwall whose deliveries are paused, so the server's dispatcher
    leaves it waiting: made a month ago, scheduled for later."""
    engine = portal.engine()
    try:
        box = SecretBox([portal.env["SECRET_KEY"]])
        wall = make_paying_offerwall(engine, box, name="Held Back Wall", postback_url=None)
        with write_session(engine) as session:
            paused = session.get(Offerwall, wall.id)
            paused.deliveries_paused_at = utcnow()
            session.add(paused)
        postback = make_postback(engine, box, wall)
        with write_session(engine) as session:
            table = Postback.__table__
            session.execute(
                sa.update(table)
                .where(table.c.id == postback)
                .values(
                    created_at=utcnow() - timedelta(days=30),
                    next_attempt_at=utcnow() + timedelta(hours=1),
                )
            )
    finally:
        engine.dispose()


def _scheduled_postbacks(portal) -> int:
    engine = portal.engine()
    try:
        with engine.connect() as conn:
            return read_outboxes(conn).backlogs["postback"].scheduled
    finally:
        engine.dispose()


def test_staff_see_readiness_backlogs_workers_the_last_prune_and_the_schema(portal, page):
    _waiting_postback(portal)
    cli(portal.env, "prune")
    sign_in(page, portal.url, *portal.staff, then=routes.STAFF_SYSTEM)
    expect(page.get_by_role("heading", name="System", exact=True)).to_be_visible()

    checks = page.get_by_test_id("readiness-check")
    expect(checks.filter(has_text="Database answers")).to_contain_text("ok")
    expect(checks.filter(has_text="Schema at the migrations' head")).to_contain_text("ok")
    postbacks = page.get_by_test_id("outbox-row").filter(has_text="Postbacks")
    expect(postbacks.locator("td").nth(2)).to_have_text(str(_scheduled_postbacks(portal)))
    expect(postbacks.locator("td").nth(3)).to_have_text(re.compile(r"^30 days"))
    expect(page.get_by_test_id("paused-endpoints")).not_to_contain_text("0 offerwalls'")
    # The server's own dispatcher beats as it starts, then once a minute.
    serve = page.get_by_test_id("worker-row").filter(has_text="serve")
    expect(serve.first).to_contain_text("postbacks, webhooks, mail")
    expect(serve.first.get_by_text("stale")).to_have_count(0)
    expect(page.get_by_test_id("prune-ran")).to_contain_text(re.compile(r"just now|s ago"))
    expect(page.get_by_test_id("card-prune")).to_contain_text("Removed")
    expect(page.get_by_test_id("schema")).to_contain_text("at head")
    looked_at(page, "system")

    _waiting_postback(portal)
    page.get_by_role("button", name="Refresh").click()
    expect(postbacks.locator("td").nth(2)).to_have_text(str(_scheduled_postbacks(portal)))


def test_a_publisher_or_a_designer_cannot_open_the_system_page_nor_refresh_it(portal, new_page):
    from portal.ops.state import SystemState

    publisher, designer = new_page(), new_page()
    studio_with_designer(portal, "System Studio", "designer-system@example.com", "designer-2026")
    for who in (publisher, designer):
        who.add_init_script(SPY)
    approved_publisher_signed_in(portal, publisher, "System Wall")
    sign_in(designer, portal.url, "designer-system@example.com", "designer-2026")

    for who in (publisher, designer):
        who.goto(portal.url + routes.STAFF_SYSTEM)
        expect(who.get_by_text("Your account cannot open that page.")).to_be_visible()
        expect(who).not_to_have_url(re.compile(routes.STAFF_SYSTEM))
        send_event(who, handler_name(SystemState, "refresh"), {}, routes.STAFF_SYSTEM)
        expect_refusals(who, 1)
        received = who.evaluate("window.__received.join('')")
        assert "Postbacks" not in received and "Database answers" not in received
