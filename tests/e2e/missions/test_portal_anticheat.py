"""A mission's fraud screening in the real portal: the editor's Fraud screening card saves
its limits (the minimum time in minutes, stored in seconds) and its own actions for the
risk signals, and refuses bad ones without losing what was typed or chosen; a player's events over a limit do not count, and the game's live
events page lists them as set aside, by rule and reason; both cards fit a phone."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Locator, Page, expect
from sqlmodel import Session, select

from models import CheatFlag, Conversion, Mission
from tests.e2e.conftest import screenshot
from tests.e2e.missions.test_portal_editors import designer_with_game
from tests.e2e.steps import approved_wall, click_mission, send_events

pytestmark = pytest.mark.e2e

FRAUD_LIMITS = {
    "Minimum time (minutes)": "10",
    "Most matching events a minute": "5",
    "Highest value": "1000",
    "Trait": "kills",
    "Highest trait value": "50",
}


def titled_card(page: Page, heading: str) -> Locator:
    """The portal card whose heading is `heading`."""
    return page.locator(".rt-Card").filter(has=page.get_by_role("heading", name=heading))


def fits(page: Page, box: Locator) -> None:
    """Nothing scrolls sideways, and every input and table of `box` stays inside it."""
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls {overflow} px sideways"
    outside = box.evaluate(
        """card => {
            const edge = card.getBoundingClientRect();
            return [...card.querySelectorAll('input, label, table, p, span')]
                .filter(e => e.getClientRects().length)
                .filter(e => {
                    const r = e.getBoundingClientRect();
                    return r.left < edge.left - 1 || r.right > edge.right + 1;
                })
                .map(e => e.outerHTML.slice(0, 80));
        }"""
    )
    assert outside == [], outside


def test_fraud_limits_are_saved_and_events_over_them_are_set_aside(portal, new_page):
    designer, game_id, client_id, secret = designer_with_game(
        portal, new_page, "Cheat Proof", width=1366, height=900
    )
    designer.get_by_role("button", name="Missions").click()
    designer.get_by_role("button", name="New mission").click()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    designer.get_by_label("Title").fill("Win a match")
    designer.get_by_label("Payout (USD)").fill("2")
    designer.get_by_label("Destination URL").fill("https://cheatproof.example/play")
    designer.get_by_label("Event name").fill("MATCH_END")
    fraud = titled_card(designer, "Fraud screening")
    for label, value in FRAUD_LIMITS.items():
        fraud.get_by_label(label, exact=True).fill(value)
    hosting = fraud.get_by_label("hosting_network", exact=True)
    expect(hosting).to_have_value("")  # the offerwall's rule until the mission sets one
    expect(fraud.get_by_label("shared_ip", exact=True).locator("option")).to_have_text(
        ["Offerwall's rule", "Hold for review"]  # a completion's signal is never refused
    )
    hosting.select_option(label="Refuse the click")

    # A trait's name the schema refuses: its message is under that input, nothing is lost.
    trait = fraud.get_by_label("Trait", exact=True)
    trait.fill("kills per match")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.locator("#maxTraitField-error")).to_have_text(
        "Use letters, digits and _ . : - only (at most 64 characters), e.g. kills."
    )
    expect(trait).to_have_attribute("aria-invalid", "true")
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    expect(designer.get_by_label("Title")).to_have_value("Win a match")
    expect(designer.get_by_label("Event name")).to_have_value("MATCH_END")
    for label, value in FRAUD_LIMITS.items():
        if label != "Trait":
            expect(fraud.get_by_label(label, exact=True)).to_have_value(value)
    expect(trait).to_have_value("kills per match")
    expect(hosting).to_have_value("refuse")

    # A trait without its maximum is refused too, with a message saying what is missing.
    trait.fill("kills")
    fraud.get_by_label("Highest trait value", exact=True).fill("")
    designer.get_by_role("button", name="Save mission").click()
    expect(
        designer.get_by_text("A trait's maximum needs both the trait's name and the maximum.")
    ).to_be_visible()
    expect(designer.locator("#maxTraitField-error")).to_have_count(0)
    expect(designer.get_by_label("Payout (USD)")).to_have_value("2")
    expect(trait).to_have_value("kills")
    with Session(portal.engine()) as db:
        assert db.exec(select(Mission).where(Mission.game_id == game_id)).all() == []

    fraud.get_by_label("Highest trait value", exact=True).fill("50")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Win a match” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    mission_id = re.search(r"mission=([0-9a-f-]+)", designer.url).group(1)
    with Session(portal.engine()) as db:
        stored = db.get(Mission, mission_id)
    assert stored is not None
    assert (
        stored.min_completion_seconds,
        stored.max_event_value,
        stored.max_trait_field,
        stored.max_trait_value,
        stored.max_events_per_minute,
    ) == (600, 1000.0, "kills", 50.0, 5)
    assert stored.fraud_actions == {"hosting_network": "refuse"}

    # Opened again, the card shows what was saved, the minimum time in minutes.
    designer.reload()
    expect(designer.get_by_label("Title")).to_have_value("Win a match")
    fraud = titled_card(designer, "Fraud screening")
    for label, value in FRAUD_LIMITS.items():
        expect(fraud.get_by_label(label, exact=True)).to_have_value(value)
    expect(fraud.get_by_label("hosting_network", exact=True)).to_have_value("refuse")
    expect(fraud.get_by_label("multi_offerwall", exact=True)).to_have_value("")
    fits(designer, fraud)
    screenshot(fraud, "anticheat-editor-card-1366")
    designer.set_viewport_size({"width": 390, "height": 844})
    expect(fraud.get_by_label("Trait", exact=True)).to_have_value("kills")
    fits(designer, fraud)
    screenshot(fraud, "anticheat-editor-card-390")
    screenshot(designer, "anticheat-editor-390")
    designer.set_viewport_size({"width": 1366, "height": 900})

    # A player clicks the mission's link, is linked to the game and sends events over the
    # highest value and over the trait's maximum: neither counts.
    owid = approved_wall(portal, "Anticheat Wall")
    player = click_mission(portal, mission_id, owid, "ace")
    later = datetime.now(UTC) + timedelta(seconds=1)
    answer = send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [{"userId": "ace-77", "platformUserId": player}],
            "events": [
                {
                    "userId": "ace-77",
                    "event": "MATCH_END",
                    "time": later.isoformat(),
                    "value": 5000,
                    "traits": {"kills": 3},
                },
                {
                    "userId": "ace-77",
                    "event": "MATCH_END",
                    "time": (later + timedelta(seconds=1)).isoformat(),
                    "value": 10,
                    "traits": {"kills": 80},
                },
            ],
        },
    )
    assert answer.json()["message"] == "OK", answer.text
    with Session(portal.engine()) as db:
        flags = db.exec(select(CheatFlag).where(CheatFlag.mission_id == mission_id)).all()
        conversions = db.exec(select(Conversion).where(Conversion.mission_id == mission_id)).all()
    assert sorted(f.rule for f in flags) == ["max_trait", "max_value"]
    assert conversions == []

    designer.get_by_role("button", name="Events").click()
    expect(designer.get_by_role("heading", name="Live events")).to_be_visible()
    rows = designer.get_by_test_id("set-aside-row")
    expect(rows).to_have_count(2)
    by_value = rows.filter(has_text="max_value")
    expect(by_value).to_contain_text("value 5000 is over the maximum 1000")
    by_trait = rows.filter(has_text="max_trait")
    expect(by_trait).to_contain_text("traits.kills 80 is over the maximum 50")
    for row in (by_value, by_trait):
        expect(row).to_contain_text("Win a match")
        expect(row).to_contain_text("ace-77")
        expect(row).to_contain_text("MATCH_END")
    # Still stored as events, which the events card lists.
    expect(designer.get_by_test_id("event-row").filter(has_text="ace-77")).to_have_count(2)
    set_aside = titled_card(designer, "Set aside by anti-cheat rules")
    fits(designer, set_aside)
    screenshot(set_aside, "anticheat-debugger-card-1366")
    designer.set_viewport_size({"width": 390, "height": 844})
    expect(rows).to_have_count(2)
    screenshot(set_aside, "anticheat-debugger-card-390")
    overflow = designer.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the debugger scrolls {overflow} px sideways on a phone"
