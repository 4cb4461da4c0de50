"""A designer's day in the real portal: a game, a mission from the editor, a player who
clicks and plays, the conversion in the reports, the events in the debugger, the rule
tester; and what a publisher or another studio cannot do."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect
from sqlmodel import Session, select

from models import Mission
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, expect_refusals, form, send_event
from tests.e2e.steps import (
    applicant_signed_in,
    approved_wall,
    click_mission,
    import_offers,
    send_events,
    sign_in,
    studio_with_designer,
)
from tests.e2e.studios.test_portal_studios import (
    DESIGNER_PASSWORD,
    create_game,
)

pytestmark = pytest.mark.e2e


def test_a_mission_from_the_editor_converts_and_shows_in_reports_and_debugger(portal, new_page):
    from portal.missions.missions_state import EditorState

    designer, rival = new_page(), new_page()
    studio_with_designer(portal, "Green Studio", "gina@green.example", DESIGNER_PASSWORD)
    studio_with_designer(portal, "Grey Studio", "gus@grey.example", DESIGNER_PASSWORD)
    sign_in(designer, portal.url, "gina@green.example", DESIGNER_PASSWORD)
    expect(designer.get_by_role("heading", name="Games")).to_be_visible()
    game_id, client_id, secret = create_game(designer, "Castle Siege")
    # The game sends an event first: its name is suggested in the rule builder.
    send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [],
            "events": [
                {"userId": "warmup", "event": "SIEGE_WON", "time": datetime.now(UTC).isoformat()}
            ],
        },
    )

    designer.get_by_role("button", name="Missions").click()
    expect(designer.get_by_text("No missions yet")).to_be_visible()
    designer.get_by_role("button", name="New mission").click()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    expect(designer.locator("#event-names option[value=SIEGE_WON]")).to_have_count(1)
    designer.get_by_label("Title").fill("Win two sieges")
    designer.get_by_label("Payout (USD)").fill("-3")
    designer.get_by_label("Destination URL").fill("https://castle.example/play")
    designer.get_by_label("Event name").fill("SIEGE_WON")
    designer.get_by_label("Completion threshold").fill("2")
    designer.get_by_role("button", name="Save mission").click()
    # Inline errors from the same schema imports use; nothing is saved.
    expect(designer.get_by_text("Enter 0 or more.")).to_be_visible()
    designer.get_by_label("Payout (USD)").fill("3")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Win two sieges” created.")).to_be_visible()
    designer.get_by_role("button", name="Show JSON").click()
    expect(designer.get_by_test_id("offer-preview")).to_contain_text('"title": "Win two sieges"')
    expect(designer.get_by_test_id("offer-preview")).to_contain_text('"payout": 3.0')
    screenshot(designer, "designer-mission-editor")
    mission_id = re.search(r"mission=([0-9a-f-]+)", designer.url).group(1)

    # A player of an approved offerwall clicks the mission's link, then plays.
    owid = approved_wall(portal, "Designer Test Wall")
    player = click_mission(portal, mission_id, owid, "knight-7")
    later = datetime.now(UTC) + timedelta(seconds=1)
    answer = send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [{"userId": "knight-7", "platformUserId": player}],
            "events": [
                {"userId": "knight-7", "event": "SIEGE_WON", "time": later.isoformat()},
                {
                    "userId": "knight-7",
                    "event": "SIEGE_WON",
                    "time": (later + timedelta(seconds=1)).isoformat(),
                },
                {"userId": "knight-7", "event": "SIEGE_WON", "time": "yesterday"},
            ],
        },
    )
    assert answer.status_code == 207

    designer.get_by_role("button", name="Events").click()
    expect(designer.get_by_test_id("event-row").filter(has_text="knight-7")).to_have_count(2)
    expect(designer.get_by_test_id("rejected-row")).to_contain_text("events[2]")
    expect(designer.get_by_test_id("identifier-row")).to_contain_text("platformUserId")
    # New events appear while the page is open.
    send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [],
            "events": [
                {"userId": "squire-2", "event": "SIEGE_LOST", "time": datetime.now(UTC).isoformat()}
            ],
        },
    )
    expect(designer.get_by_test_id("event-row").filter(has_text="squire-2")).to_be_visible()
    designer.get_by_label("Filter by user id").fill("squire-2")
    designer.get_by_role("button", name="Filter").click()
    expect(designer.get_by_test_id("event-row")).to_have_count(1)
    screenshot(designer, "designer-debugger")

    designer.get_by_role("link", name="Reports").click()
    designer.get_by_label("Group").select_option("offer")  # applies at once
    row = designer.get_by_test_id("report-row").filter(has_text="Win two sieges")
    expect(row).to_contain_text("$3.00")
    expect(row.get_by_role("cell")).to_have_text(
        ["Win two sieges", "1", "1", "1", "100.0%", "$3.00", "$3.00", "0", "$3.00", "0", "$0.00"]
    )
    screenshot(designer, "designer-reports")
    with designer.expect_download() as download:
        designer.get_by_role("button", name="Export CSV").click()
    with open(download.value.path()) as exported:
        csv_text = exported.read()
    assert "Win two sieges,1,1,1,100.0%,3.00" in csv_text
    # A refused range shows its reason and no figures (not the previous range's).
    # exact: "To" is also in the label of a toast's close button ("Close toast").
    designer.get_by_label("From", exact=True).fill("2030-01-02")
    designer.get_by_label("To", exact=True).fill("2030-01-01")
    designer.get_by_role("button", name="Show").click()
    expect(designer.get_by_text("The range starts after it ends.")).to_be_visible()
    expect(row).to_be_hidden()

    # Another studio's designer cannot save into this game, even by sending the event.
    rival.add_init_script(SPY)
    sign_in(
        rival,
        portal.url,
        "gus@grey.example",
        DESIGNER_PASSWORD,
        then=f"/studio/mission?game={game_id}&mission={mission_id}",
    )
    expect(rival.get_by_text("No such game.")).to_be_visible()
    rival.evaluate("window.__received = []")  # count the refusal below only
    send_event(
        rival,
        f"{EditorState.get_full_name()}.save",
        form(
            **{
                "title": "Hijacked",
                "payout": "999",
                "destinationUrl": "https://evil.example/",
                "rule.event": "X",
            }
        ),
        f"/studio/mission?game={game_id}&mission={mission_id}",
    )
    expect_refusals(rival, 1, "No such game.")
    with Session(portal.engine()) as db:
        titles = [m.title for m in db.exec(select(Mission).where(Mission.game_id == game_id))]
    assert titles == ["Win two sieges"]


def test_the_rule_tester_shows_a_consecutive_run_reset(portal, new_page):
    designer = new_page()
    studio_with_designer(portal, "Tester Studio", "tess@tester.example", DESIGNER_PASSWORD)
    sign_in(designer, portal.url, "tess@tester.example", DESIGNER_PASSWORD)
    expect(designer.get_by_role("heading", name="Games")).to_be_visible()
    create_game(designer, "Arena")
    designer.get_by_role("button", name="Rule tester").click()
    expect(designer.get_by_label("Event name")).to_have_value("MATCH_END")
    designer.get_by_label("Events", exact=True).fill(
        "MATCH_END 1200\nMATCH_END 1500\nMATCH_END 300\nMATCH_END 1100\nMATCH_END 1000 mode=ranked\nMATCH_END 2500"
    )
    designer.get_by_role("button", name="Run").click()
    steps = designer.get_by_test_id("test-step")
    expect(steps).to_have_count(6)
    expect(steps.nth(2)).to_contain_text("fails the filter")
    expect(steps.nth(2).get_by_test_id("progress")).to_have_text("0 / 3")  # the run resets
    expect(steps.nth(5)).to_contain_text("completes")
    expect(designer.get_by_test_id("completes-at")).to_contain_text("completes at event 6")
    screenshot(designer, "designer-rule-tester")


def test_a_publisher_cannot_open_the_editor(portal, page):
    applicant_signed_in(portal, page, "Editor Snoop")
    page.goto(portal.url + "/studio/mission?game=anything")
    expect(page.get_by_text("Your account cannot open that page.")).to_be_visible()
    expect(page.get_by_role("heading", name="New mission")).to_have_count(0)


def test_a_quest_is_built_from_missions_in_the_chosen_order(portal, new_page):
    designer = new_page()
    studio_with_designer(portal, "Quest Studio", "quinn@quest.example", DESIGNER_PASSWORD)
    sign_in(designer, portal.url, "quinn@quest.example", DESIGNER_PASSWORD)
    expect(designer.get_by_role("heading", name="Games")).to_be_visible()
    game_id, _, _ = create_game(designer, "Dungeon")
    import_offers(
        portal,
        {
            "gameId": game_id,
            "missions": [
                {
                    "title": title,
                    "payout": 1,
                    "destinationUrl": "https://dungeon.example/",
                    "rule": {"event": event},
                }
                for title, event in (("Open the gate", "GATE"), ("Slay the dragon", "DRAGON"))
            ],
        },
    )

    designer.goto(portal.url + f"/studio/quest?game={game_id}")
    expect(designer.get_by_text("Open the gate")).to_be_visible()  # loaded: the form is final
    designer.get_by_label("Name").fill("The dragon's lair")
    designer.get_by_label("Destination URL").fill("https://dungeon.example/quest")
    designer.get_by_role("button", name="Save quest").click()
    expect(designer.get_by_text("a quest needs at least one mission")).to_be_visible()
    for title in ("Slay the dragon", "Open the gate"):
        designer.get_by_text(title).locator("..").get_by_role("button", name="Add").click()
    # The missions are there now: the error about them is gone.
    expect(designer.get_by_text("a quest needs at least one mission")).to_be_hidden()
    chosen = designer.get_by_test_id("quest-mission")
    expect(chosen.first).to_contain_text("Slay the dragon")
    chosen.nth(1).get_by_role("button", name="Move up").click()
    expect(chosen.first).to_contain_text("Open the gate")
    screenshot(designer, "designer-quest")
    designer.get_by_role("button", name="Save quest").click()
    expect(designer.get_by_text("Quest “The dragon's lair” created.")).to_be_visible()
    designer.get_by_role("button", name="Back to missions").click()
    expect(
        designer.get_by_test_id("offer-row").filter(has_text="in The dragon's lair")
    ).to_have_count(2)
    with Session(portal.engine()) as db:
        missions = db.exec(
            select(Mission).where(Mission.game_id == game_id).order_by(Mission.quest_position)
        )
        assert [m.title for m in missions] == ["Open the gate", "Slay the dragon"]
