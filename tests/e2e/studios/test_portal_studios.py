"""Studios, designers and games in the real portal; one studio cannot touch another's."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect
from sqlmodel import Session, select

from models import GameCredential
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, expect_refusals, form, send_event, wait_until_connected
from tests.e2e.steps import applicant_signed_in, fill_mission, send_events, sign_in

pytestmark = pytest.mark.e2e
DESIGNER_PASSWORD = "level-design-2026"


def create_studio_with_designer(staff, url: str, studio: str, email: str) -> None:
    staff.goto(url + "/staff/studios")
    staff.get_by_label("Studio name").fill(studio)
    staff.get_by_role("button", name="Create studio").click()
    expect(staff.get_by_text(f"Studio {studio} created.")).to_be_visible()
    staff.locator("select[name=studio]").select_option(label=studio)
    staff.get_by_label("Email").fill(email)
    staff.get_by_label("Initial password").fill(DESIGNER_PASSWORD)
    staff.get_by_role("button", name="Create designer").click()
    expect(staff.get_by_text(f"Designer {email} can sign in now.")).to_be_visible()


def create_game(designer, name: str) -> tuple[str, str, str]:
    designer.get_by_label("Game name").fill(name)
    designer.get_by_role("button", name="Create game").click()
    expect(designer.get_by_test_id("fresh-secret")).to_be_visible()
    game_id = re.search(r"game=([0-9a-f-]+)", designer.url).group(1)
    return (
        game_id,
        designer.get_by_test_id("fresh-client-id").inner_text(),
        designer.get_by_test_id("fresh-secret").inner_text(),
    )


def test_designers_manage_their_studios_games_only(portal, new_page):
    from portal.studios.games_state import GameState

    staff, alice, bob = new_page(), new_page(), new_page()
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()
    create_studio_with_designer(staff, portal.url, "Blue Studio", "alice@blue.example")
    create_studio_with_designer(staff, portal.url, "Red Studio", "bob@red.example")
    screenshot(staff, "staff-studios")

    sign_in(alice, portal.url, "alice@blue.example", DESIGNER_PASSWORD)
    expect(alice.get_by_role("heading", name="Games")).to_be_visible()
    game_id, client_id, secret = create_game(alice, "Sky Race")
    expect(alice.get_by_test_id("curl-example")).to_contain_text(secret)
    screenshot(alice, "designer-game")
    # The credential the page showed signs requests the API accepts.
    answer = send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [],
            "events": [{"userId": "p1", "event": "START", "time": datetime.now(UTC).isoformat()}],
        },
    )
    assert answer.json()["message"] == "OK"
    alice.get_by_role("button", name="I have stored it").click()
    expect(alice.get_by_test_id("fresh-secret")).to_have_count(0)
    alice.reload()
    expect(alice.get_by_role("heading", name="Sky Race")).to_be_visible()
    expect(alice.get_by_text(secret)).to_have_count(0)  # shown once

    bob.add_init_script(SPY)
    sign_in(bob, portal.url, "bob@red.example", DESIGNER_PASSWORD)
    expect(bob.get_by_role("heading", name="Games")).to_be_visible()
    expect(bob.get_by_test_id("game-row")).to_have_count(0)
    bob.goto(portal.url + f"/studio/game?game={game_id}")
    expect(bob.get_by_text("No such game.")).to_be_visible()
    expect(bob).to_have_url(re.compile(r"/studio/games/?$"))
    bob.evaluate("window.__received = []")  # count the two refusals below only
    send_event(
        bob,
        f"{GameState.get_full_name()}.revoke",
        {"client_id": client_id},
        f"/studio/game?game={game_id}",
    )
    send_event(
        bob,
        f"{GameState.get_full_name()}.add_credential",
        form(name="stolen"),
        f"/studio/game?game={game_id}",
    )
    expect_refusals(bob, 2, "No such game.")
    with Session(portal.engine()) as db:
        creds = db.exec(select(GameCredential).where(GameCredential.game_id == game_id)).all()
    assert [(c.client_id, c.revoked_at) for c in creds] == [(client_id, None)]


def test_a_publisher_cannot_open_the_studio_pages(portal, page):
    applicant_signed_in(portal, page, "Nosy Wall")
    page.goto(portal.url + "/studio/games")
    expect(page.get_by_text("Your account cannot open that page.")).to_be_visible()
    expect(page.get_by_role("heading", name="Games")).to_have_count(0)


def test_a_refused_designer_form_keeps_what_was_typed(portal, new_page):
    staff = new_page()
    sign_in(staff, portal.url, *portal.staff, then="/staff/studios")
    staff.get_by_label("Studio name").fill("Kept Studio")
    staff.get_by_role("button", name="Create studio").click()
    expect(staff.get_by_text("Studio Kept Studio created.")).to_be_visible()
    expect(staff.get_by_label("Studio name")).to_have_value("")  # emptied once created
    staff.locator("select[name=studio]").select_option(label="Kept Studio")
    staff.get_by_label("Email").fill("kept@studio.example")
    staff.get_by_label("Initial password").fill("short")
    staff.get_by_role("button", name="Create designer").click()
    # Refused: the error shows and nothing typed is lost.
    expect(staff.get_by_text("at least 10 characters")).to_be_visible()
    expect(staff.get_by_label("Email")).to_have_value("kept@studio.example")
    staff.get_by_label("Initial password").fill(DESIGNER_PASSWORD)
    staff.get_by_role("button", name="Create designer").click()
    expect(staff.get_by_text("Designer kept@studio.example can sign in now.")).to_be_visible()
    expect(staff.get_by_label("Email")).to_have_value("")


def test_a_double_click_on_create_game_creates_one_game(portal, new_page):
    from models import Game, Mission

    staff, designer = new_page(), new_page()
    sign_in(staff, portal.url, *portal.staff)
    expect(staff).not_to_have_url(re.compile("/login"))
    create_studio_with_designer(staff, portal.url, "Twice Studio", "twice@studio.example")
    designer.add_init_script(SPY)
    sign_in(designer, portal.url, "twice@studio.example", DESIGNER_PASSWORD)
    expect(designer.get_by_role("heading", name="Games")).to_be_visible()
    wait_until_connected(designer)  # the page's events now reach the server
    designer.get_by_label("Game name").fill("Double Tap")
    designer.get_by_role("button", name="Create game").dblclick()
    expect(designer.get_by_test_id("fresh-secret")).to_be_visible()
    designer.wait_for_timeout(1000)  # room for a second event, had the click sent one
    with Session(portal.engine()) as session:
        made = session.exec(select(Game).where(Game.name == "Double Tap")).all()
    assert len(made) == 1

    # The same for a credential and for a new mission.
    designer.get_by_label("New credential").fill("twice-key")
    designer.get_by_role("button", name="Add credential").dblclick()
    expect(designer.get_by_text("Credential “twice-key” added")).to_be_visible()
    designer.get_by_role("button", name="Missions").click()
    designer.get_by_role("button", name="New mission").click()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    fill_mission(designer, "Only once", "1", "https://twice.example/play", "GAME_END")
    designer.get_by_role("button", name="Save mission").dblclick()
    expect(designer.get_by_text("Mission “Only once” created.")).to_be_visible()
    designer.wait_for_timeout(1000)
    with Session(portal.engine()) as session:
        game_id = made[0].id
        keys = session.exec(select(GameCredential).where(GameCredential.game_id == game_id)).all()
        missions = session.exec(select(Mission).where(Mission.game_id == game_id)).all()
    assert len(keys) == 2  # the game's first, and one more
    assert [m.title for m in missions] == ["Only once"]
