"""A signed request refused as a whole shows in the game's Live events page, while the page
is open, with the reason and the exact string the server signed, at 1366 and 390 px; the
designer of another studio cannot open that page."""

from __future__ import annotations

import json

import httpx
import pytest
from playwright.sync_api import expect

from api.core.crypto import signed_headers
from portal import routes
from tests.e2e.conftest import screenshot
from tests.e2e.missions.test_portal_anticheat import fits, titled_card
from tests.e2e.missions.test_portal_editors import designer_with_game

pytestmark = pytest.mark.e2e


def test_a_bad_signature_shows_in_live_events_with_the_string_signed(portal, new_page):
    designer, game_id, client_id, secret = designer_with_game(
        portal, new_page, "Signing Trouble", width=1366, height=900
    )
    designer.get_by_role("button", name="Events").click()
    expect(designer.get_by_role("heading", name="Live events")).to_be_visible()
    expect(designer.get_by_text("No request was refused.")).to_be_visible()

    # Signed with the wrong secret, as an integrator whose signing is broken would.
    body = json.dumps({"gameId": game_id, "events": []}, separators=(",", ":")).encode()
    headers = signed_headers(client_id, "qw_cs_a-wrong-secret", body)
    answer = httpx.post(portal.url + "/v2/custom-events", content=body, headers=headers)
    assert answer.status_code == 401 and answer.json()["code"] == "invalid_signature"

    row = designer.get_by_test_id("refused-row")
    expect(row).to_have_count(1)  # the open page shows it without a reload
    expect(row).to_contain_text("401 invalid_signature")
    expect(row).to_contain_text("The signature does not match")
    expect(row).to_contain_text(headers["x-signature"])
    signed_string = client_id + headers["x-timestamp"] + body.decode()
    expect(row.get_by_test_id("refused-signed")).to_have_text(signed_string)
    expect(designer.get_by_text(secret)).to_have_count(0)

    refused = titled_card(designer, "Refused requests")
    fits(designer, refused)
    screenshot(refused, "refused-requests-card-1366")
    screenshot(designer, "refused-requests-1366")
    designer.set_viewport_size({"width": 390, "height": 844})
    expect(row.get_by_test_id("refused-signed")).to_have_text(signed_string)
    fits(designer, refused)
    screenshot(refused, "refused-requests-card-390")
    screenshot(designer, "refused-requests-390")

    rival, _, _, _ = designer_with_game(portal, new_page, "Other Studio")
    rival.goto(portal.url + f"{routes.EVENTS}?game={game_id}")
    expect(rival.get_by_text("No such game.")).to_be_visible()
    expect(rival.get_by_test_id("refused-row")).to_have_count(0)
