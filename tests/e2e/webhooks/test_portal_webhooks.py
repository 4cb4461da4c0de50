"""A game's webhooks in the real portal: an endpoint added with its secret shown once, a
test event and a real message received by a local server and verified as Standard
Webhooks says, the message seen in the delivery log, sent again and replayed with the same
webhook-id, the secret rotated behind the password; and another studio refused by hand."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select
from standardwebhooks.webhooks import Webhook

from api import webhooks
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.postbacks.transport import http_client
from models import WebhookEndpoint
from models.types import utcnow
from portal import routes
from tests.e2e.conftest import looked_at
from tests.e2e.missions.test_portal_editors import designer_with_game
from tests.e2e.socket_events import (
    SPY,
    expect_refusals,
    handler_name,
    send_event,
)
from tests.e2e.steps import rotate
from tests.e2e.studios.test_portal_studios import DESIGNER_PASSWORD
from tests.receiver import Receiver, running_receiver

pytestmark = pytest.mark.e2e

LAPTOP = {"width": 1366, "height": 900}


def wait_for(check, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def received(receiver: Receiver, index: int, *secrets: str) -> dict:
    """The index-th POST, verified with each of `secrets` (a Standard Webhooks library)."""
    body, headers = receiver.posts[index], receiver.post_headers[index]
    verified = [Webhook(secret).verify(body, headers) for secret in secrets]
    return verified[0]


def add_endpoint(page: Page, portal, game_id: str, url: str) -> str:
    """Add an endpoint taking mission.completed and conversion.approved; its secret."""
    page.goto(portal.url + routes.with_game(routes.WEBHOOKS, game_id))
    expect(page.get_by_role("heading", name="Add an endpoint")).to_be_visible()
    page.get_by_label("URL", exact=True).fill(url)
    page.get_by_label("Description (optional)").fill("badges")
    page.get_by_role("checkbox", name="mission.completed").click()
    page.get_by_role("checkbox", name="conversion.approved").click()
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.get_by_test_id("fresh-webhook-secret")
    expect(secret).to_be_visible()
    return secret.inner_text()


def deliver(portal) -> None:
    """What the worker does: claim what is due and send it (the served portal's own
    worker may take it first; either way it goes out once)."""
    settings = Settings(
        DATABASE_URL=portal.env["DATABASE_URL"],
        SECRET_KEY=portal.env["SECRET_KEY"],
        QUESTWALL_DATA_DIR=portal.env["QUESTWALL_DATA_DIR"],
        POSTBACK_ALLOW_PRIVATE=True,
    )
    engine = portal.engine()
    dispatcher = webhooks.WebhookDispatcher(
        engine=engine, box=SecretBox([portal.env["SECRET_KEY"]]), settings=settings
    )
    with ThreadPoolExecutor(2) as pool, http_client(settings) as client:
        dispatcher.run_once(pool, client)
        dispatcher.wait()
    engine.dispose()


def test_a_designer_adds_tests_replays_and_rotates_a_webhook(portal, new_page):
    designer, game_id, _client_id, _secret = designer_with_game(
        portal, new_page, "Hook Race", **LAPTOP
    )
    with running_receiver() as receiver:
        secret = add_endpoint(designer, portal, game_id, receiver.url + "/hooks")
        assert secret.startswith("whsec_")
        row = designer.get_by_test_id("webhook-row")
        expect(row).to_contain_text("mission.completed, conversion.approved")
        expect(row).to_contain_text("active")
        looked_at(designer, "webhooks-added")
        designer.get_by_role("button", name="I have stored it").click()
        designer.reload()
        expect(designer.get_by_test_id("webhook-row")).to_have_count(1)
        expect(designer.get_by_text(secret)).to_have_count(0)  # shown once

        # The endpoint's page: a test event of a type picked, received and verified.
        row.get_by_role("link", name="Open").click()
        expect(designer.get_by_test_id("endpoint-url")).to_have_text(receiver.url + "/hooks")
        designer.get_by_label("Type of the test event").select_option("conversion.approved")
        designer.get_by_role("button", name="Send test event").click()
        expect(designer.get_by_test_id("test-status")).to_have_text("204")
        expect(designer.get_by_test_id("test-result")).to_have_text("delivered")
        wait_for(lambda: len(receiver.posts) == 1)
        assert received(receiver, 0, secret)["type"] == "conversion.approved"
        assert receiver.post_headers[0]["webhook-id"].startswith("test-msg_")
        expect(designer.get_by_text("No messages yet")).to_be_visible()
        looked_at(designer, "webhook-tested")

        # A real message, delivered, in the log.
        with portal.setting_up() as (session, _box):
            webhooks.emit(
                session,
                game_id=game_id,
                player="00000000-0000-4000-8000-0000000000b1",
                items=[("mission.completed", {"userId": "u-1", "progress": {"current": 3}})],
                now=utcnow(),
            )
        deliver(portal)
        wait_for(lambda: len(receiver.posts) == 2)
        webhook_id = receiver.post_headers[1]["webhook-id"]
        assert webhook_id.startswith("msg_")
        assert received(receiver, 1, secret)["data"]["userId"] == "u-1"
        designer.get_by_role("button", name="Refresh").click()
        message = designer.get_by_test_id("message-row")
        expect(message).to_have_count(1)
        expect(message).to_contain_text("mission.completed")
        expect(message).to_contain_text("delivered")
        looked_at(designer, "webhook-log")

        # Filters: no failed message; every type again.
        designer.get_by_label("Filter by event type").select_option("conversion.held")
        expect(designer.get_by_text("No matches")).to_be_visible()
        designer.get_by_label("Filter by event type").select_option("all")
        expect(message).to_have_count(1)

        # It opens with its body, its webhook-id and its attempt; sent again, same id.
        message.get_by_role("button", name="Open").click()
        panel = designer.get_by_role("dialog")
        expect(panel.get_by_test_id("open-webhook-id")).to_have_text(webhook_id)
        expect(panel.get_by_test_id("open-body")).to_contain_text('"type": "mission.completed"')
        expect(panel.get_by_test_id("attempt-row")).to_have_count(1)
        expect(panel.get_by_test_id("attempt-row")).to_contain_text("204")
        looked_at(designer, "webhook-message")
        panel.get_by_role("button", name="Send again").click()
        expect(designer.get_by_text("Queued again")).to_be_visible()
        deliver(portal)
        wait_for(lambda: len(receiver.posts) == 3)
        assert receiver.post_headers[2]["webhook-id"] == webhook_id
        received(receiver, 2, secret)
        panel.get_by_role("button", name="Close").click()
        designer.get_by_role("button", name="Refresh").click()
        expect(message).to_contain_text("delivered")
        message.get_by_role("button", name="Open").click()
        expect(panel.get_by_test_id("attempt-row")).to_have_count(2)
        panel.get_by_role("button", name="Close").click()

        # A time range replayed: refused over 7 days, then the last day's message again.
        designer.get_by_role("button", name="Replay a time range").click()
        replay = designer.get_by_role("dialog")
        replay.get_by_label("From (UTC)").fill("2026-01-01T00:00")
        replay.get_by_role("button", name="Replay").click()
        expect(replay.get_by_role("alert")).to_contain_text("at most 7 days")
        looked_at(designer, "webhook-replay-refused")
        designer.get_by_role("button", name="Cancel").click()
        designer.get_by_role("button", name="Replay a time range").click()
        designer.get_by_role("dialog").get_by_role("button", name="Replay").click()
        expect(designer.get_by_text("Queued 1 message again")).to_be_visible()
        deliver(portal)
        wait_for(lambda: len(receiver.posts) == 4)
        assert receiver.post_headers[3]["webhook-id"] == webhook_id

        # The secret rotated behind the password, with a week's overlap.
        rotate(designer, "Rotate secret", "7 days", password="not my password")
        dialog = designer.get_by_role("alertdialog")
        expect(dialog.get_by_role("alert")).to_contain_text("Wrong password")
        looked_at(designer, "webhook-rotate-refused")
        dialog.get_by_role("radio", name="7 days").click()
        dialog.get_by_label("Your password").fill(DESIGNER_PASSWORD)
        dialog.get_by_role("button", name="Rotate").click()
        rotated = designer.get_by_test_id("webhook-secret")
        expect(rotated).to_be_visible()
        new_secret = rotated.inner_text()
        assert new_secret.startswith("whsec_") and new_secret != secret
        expect(designer.get_by_test_id("previous-secret-until")).to_be_visible()
        looked_at(designer, "webhook-rotated")
        designer.get_by_role("button", name="Send test event").click()
        wait_for(lambda: len(receiver.posts) == 5)
        received(receiver, 4, new_secret, secret)  # both sign during the overlap

    # Disabled, then removed behind a confirmation.
    designer.get_by_role("link", name="← All endpoints").click()
    row = designer.get_by_test_id("webhook-row")
    row.get_by_role("button", name="Disable").click()
    expect(row.get_by_test_id("endpoint-status")).to_contain_text("disabled by a designer")
    looked_at(designer, "webhooks-disabled")
    row.get_by_role("button", name="Remove").click()
    designer.get_by_role("alertdialog").get_by_role("button", name="Remove").click()
    expect(designer.get_by_test_id("webhook-row")).to_have_count(0)
    expect(designer.get_by_text("No endpoints yet")).to_be_visible()


def test_another_studios_designer_cannot_touch_the_webhooks(portal, new_page):
    from portal.webhooks.state import WebhooksState, WebhookState

    alice, alice_game, _c, _s = designer_with_game(portal, new_page, "Owned Hooks")
    with portal.setting_up() as (session, box):
        endpoint = webhooks.add_endpoint(
            session=session, box=box, game_id=alice_game, url="https://game.example/hooks"
        ).endpoint.id
    bob, bob_game, _c2, _s2 = designer_with_game(portal, new_page, "Curious Hooks")
    bob.add_init_script(SPY)
    own = routes.with_game(routes.WEBHOOKS, bob_game)
    bob.goto(portal.url + own)
    expect(bob.get_by_role("heading", name="Add an endpoint")).to_be_visible()
    # Through his own game: no such endpoint. Through hers: no such game.
    for path in (own, routes.with_game(routes.WEBHOOKS, alice_game)):
        for name, payload in (
            ("remove", {"endpoint_id": endpoint}),
            ("set_active", {"endpoint_id": endpoint, "active": False}),
        ):
            send_event(bob, handler_name(WebhooksState, name), payload, path)
    expect_refusals(bob, 4, "No such")
    # Her endpoint's page under his game: no such endpoint, and nothing of it works.
    detail = routes.webhook(bob_game, endpoint)
    bob.goto(portal.url + detail)
    expect(bob.get_by_text("No such webhook endpoint").first).to_be_visible()
    for name, payload in (
        ("send_test", {"drawn_with": None}),
        ("open", {"message_id": 1}),
        ("replay", {"form": {"from": "2026-01-01T00:00", "to": "2026-01-02T00:00"}}),
    ):
        send_event(bob, handler_name(WebhookState, name), payload, detail)
    expect_refusals(bob, 4, "No such webhook endpoint")
    # Her page, opened by him, sends him back to his games.
    bob.goto(portal.url + routes.webhook(alice_game, endpoint))
    expect(bob.get_by_role("heading", name="Games")).to_be_visible()
    with Session(portal.engine()) as db:
        kept = db.exec(select(WebhookEndpoint).where(WebhookEndpoint.id == endpoint)).one()
    assert kept.status == "active"
    assert alice.get_by_role("heading", name="Owned Hooks").count() == 1
