"""The designer's editors in the real portal: the offer as players see it, toasts that name
things, rules in words, countries picked by name, the complete quest builder, forms that
lose nothing typed while loading, questions before destructive actions, each mission's
funnel, the rule tester after a completion, and the integration page on a phone."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.studios import create_game as arrange_game
from models import GameCredential, Mission, Quest
from portal import routes
from tests.e2e.conftest import screenshot
from tests.e2e.socket_events import SPY, expect_refusals, form, send_event
from tests.e2e.steps import (
    approved_wall,
    click_mission,
    import_offers,
    send_events,
    sign_in,
    studio_with_designer,
)
from tests.e2e.studios.test_portal_studios import DESIGNER_PASSWORD

pytestmark = pytest.mark.e2e


def designer_with_game(portal, new_page, name: str, **size: int) -> tuple[Page, str, str, str]:
    """A new studio's designer, signed in, on the page of a new game of theirs: (the page,
    the game's id, client id and secret). The studio, the designer and the game are
    arranged in the server's database; staff creating them through the portal is
    test_portal_studios.py's."""
    email = f"{name.lower().replace(' ', '-')}@studio.example"
    studio_id = studio_with_designer(portal, f"{name} Studio", email, DESIGNER_PASSWORD)
    with portal.setting_up() as (session, box):
        game = arrange_game(session=session, box=box, name=name, studio_id=studio_id)
        made = (game.game_id, game.client_id, game.client_secret)
    designer = new_page(**size)
    sign_in(designer, portal.url, email, DESIGNER_PASSWORD, then=routes.game(made[0]))
    # Loaded: the title is the game's name, and the tabs' links carry its id.
    expect(designer.locator("h1")).to_have_text(name)
    return designer, *made


def import_missions(portal, game_id: str, *missions: dict) -> list[dict]:
    return import_offers(portal, {"gameId": game_id, "missions": list(missions)})["missions"]


def mission(title: str, event: str, **more) -> dict:
    return {
        "title": title,
        "payout": 1,
        "destinationUrl": "https://game.example/",
        "rule": {"event": event},
        **more,
    }


def offer(portal, model, offer_id: str):
    with Session(portal.engine()) as db:
        return db.get(model, offer_id)


def test_the_mission_editor_shows_the_offer_as_players_see_it(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Card Game")
    designer.get_by_role("button", name="Missions").click()
    designer.get_by_role("button", name="New mission").click()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    designer.get_by_label("Title").fill("Kill 10")
    designer.get_by_label("Payout (USD)").fill("1.5")
    designer.get_by_label("Destination URL").fill("https://card.example/play")
    designer.get_by_label("Thumbnail URL").fill("https://cdn.card.example/kill.png")
    designer.get_by_label("Description").fill("Take down ten players in one game.")
    designer.get_by_label("Instructions").fill("Play a ranked match.")
    designer.get_by_label("Requirements").fill("Level 5 or higher")
    designer.get_by_label("Expires on").fill("2031-01-31")
    # Countries by name: typed and Enter, or picked from the list (the whole label).
    only = designer.get_by_label("Only in these countries")
    only.fill("germ")
    only.press("Enter")
    expect(designer.get_by_test_id("country-chip-include")).to_have_text(["Germany (DE)"])
    expect(only).to_have_value("")
    only.fill("France (FR)")
    expect(designer.get_by_test_id("country-chip-include")).to_have_count(2)
    expect(only).to_have_value("")
    only.fill("Spain (ES)")
    expect(designer.get_by_test_id("country-chip-include")).to_have_count(3)
    only.press("Backspace")  # in the empty picker: takes the last one out
    expect(designer.get_by_test_id("country-chip-include")).to_have_count(2)
    designer.get_by_role("button", name="Remove France (FR)").click()
    expect(designer.get_by_test_id("country-chip-include")).to_have_text(["Germany (DE)"])
    not_in = designer.get_by_label("Not in these countries")
    not_in.fill("united k")
    not_in.press("Enter")  # Enter in a picker adds; it does not save the form
    expect(designer.get_by_test_id("country-chip-exclude")).to_have_text(["United Kingdom (GB)"])
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    designer.get_by_label("Event name").fill("GAME_END")
    designer.get_by_label("Condition field 1").fill("traits.kills")
    designer.get_by_label("Condition value 1").fill("10")
    designer.get_by_role("button", name="Save mission").click()

    expect(designer.get_by_text("Mission “Kill 10” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    mission_id = re.search(r"mission=([0-9a-f-]+)", designer.url).group(1)
    stored = offer(portal, Mission, mission_id)
    assert (stored.countries_include, stored.countries_exclude) == (["DE"], ["GB"])
    expect(designer.get_by_test_id("rule-summary")).to_have_text(
        "Saved rule: GAME_END where kills ≥ 10, once"
    )
    card = designer.get_by_test_id("offer-card")
    for text in (
        "Kill 10",
        "Take down ten players in one game.",
        "$1.50",
        "Ends on 31 Jan 2031",
        "Play a ranked match.",
        "Level 5 or higher",
    ):
        expect(card).to_contain_text(text)
    expect(designer.get_by_test_id("preview-thumbnail")).to_have_css(
        "background-image", re.compile(r"cdn\.card\.example/kill\.png")
    )
    # The offers API's record, with the server's own base URL in the tracking link.
    expect(designer.get_by_test_id("offer-preview")).to_have_count(0)
    designer.get_by_role("button", name="Show JSON").click()
    record = json.loads(designer.get_by_test_id("offer-preview").inner_text())
    assert record["trackingLink"] == f"{portal.url}/missions/{mission_id}?owid=<owid>"
    assert (record["title"], record["payout"]) == ("Kill 10", 1.5)
    screenshot(designer, "editors-mission-card")

    # The countries come back as chips; saving again says so by name.
    designer.reload()
    expect(designer.get_by_test_id("country-chip-include")).to_have_text(["Germany (DE)"])
    designer.get_by_label("Payout (USD)").fill("2")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Kill 10” saved.")).to_be_visible()
    expect(designer.get_by_test_id("preview-payout")).to_have_text("$2.00")
    designer.get_by_role("button", name="Back to missions").click()
    row = designer.get_by_test_id("offer-row").filter(has_text="Kill 10")
    expect(row.get_by_test_id("rule")).to_have_text("GAME_END where kills ≥ 10, once")
    assert game_id in designer.url


def test_the_quest_builder_edits_every_field_an_import_file_sets(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Quest Game")
    import_missions(
        portal,
        game_id,
        mission("Open the gate", "GATE", payout=1),
        mission("Slay the dragon", "DRAGON", payout=2.5),
    )
    designer.goto(portal.url + f"/studio/quest?game={game_id}")
    expect(designer.get_by_text("Open the gate")).to_be_visible()
    designer.get_by_label("Name").fill("The lair")
    designer.get_by_label("Start cap (players)").fill("500")
    designer.get_by_label("Destination URL").fill("https://quest.example/lair")
    designer.get_by_label("Preview URL").fill("https://quest.example/trailer")
    designer.get_by_label("Thumbnail URL").fill("https://cdn.quest.example/lair.png")
    designer.get_by_label("Expires on").fill("2031-06-30")
    designer.get_by_label("Description").fill("Two steps to the hoard.")
    designer.get_by_label("Instructions").fill("Start at the gate.")
    designer.get_by_label("Requirements").fill("Level 10")
    designer.get_by_label("Tags").fill("pve, story")
    designer.get_by_label("Android").check()
    designer.get_by_label("iOS").check()
    only = designer.get_by_label("Only in these countries")
    only.fill("Brazil (BR)")
    # The chip comes back from the server, which then empties the box: type on once it
    # has (as a person does on seeing the chip), or the emptying takes what came after.
    expect(designer.get_by_test_id("country-chip-include")).to_have_text(["Brazil (BR)"])
    expect(only).to_have_value("")
    only.fill("port")
    only.press("Enter")
    expect(designer.get_by_test_id("country-chip-include")).to_have_text(
        ["Brazil (BR)", "Portugal (PT)"]
    )
    for title in ("Open the gate", "Slay the dragon"):
        designer.get_by_text(title).locator("..").get_by_role("button", name="Add").click()
    designer.get_by_role("button", name="Save quest").click()

    # A save is a round trip through the server and the database: on a loaded machine it
    # has taken over the 5 s default, so the toast gets longer.
    expect(designer.get_by_text("Quest “The lair” created.")).to_be_visible(timeout=15_000)
    expect(designer.get_by_role("heading", name="Edit quest")).to_be_visible()
    quest_id = re.search(r"quest=([0-9a-f-]+)", designer.url).group(1)
    stored = offer(portal, Quest, quest_id)
    assert stored.thumbnail == "https://cdn.quest.example/lair.png"
    assert stored.preview_url == "https://quest.example/trailer"
    assert stored.expiration_date == datetime(2031, 6, 30, tzinfo=UTC)
    assert stored.operating_systems == ["Android", "iOS"]
    assert stored.countries_include == ["BR", "PT"]
    assert (stored.tags, stored.requirements, stored.start_cap) == (
        ["pve", "story"],
        "Level 10",
        500,
    )
    card = designer.get_by_test_id("offer-card")
    expect(card).to_contain_text("The lair")
    expect(card).to_contain_text("Up to $3.50")
    expect(card).to_contain_text("Open the gate$1.00")
    expect(card).to_contain_text("Ends on 30 Jun 2031")
    designer.get_by_role("button", name="Show JSON").click()
    record = json.loads(designer.get_by_test_id("offer-preview").inner_text())
    assert record["trackingLink"] == f"{portal.url}/quests/{quest_id}?owid=<owid>"
    screenshot(designer, "editors-quest")

    # Opened again, the builder shows what was saved; saving stays here, and says so.
    designer.reload()
    expect(designer.get_by_label("Preview URL")).to_have_value("https://quest.example/trailer")
    expect(designer.get_by_label("Android")).to_be_checked()
    expect(designer.get_by_test_id("country-chip-include")).to_have_count(2)
    designer.get_by_role("button", name="Remove Brazil (BR)").click()
    designer.get_by_role("button", name="Save quest").click()
    expect(designer.get_by_text("Quest “The lair” saved.")).to_be_visible()
    assert offer(portal, Quest, quest_id).countries_include == ["PT"]
    designer.get_by_role("button", name="Back to missions").click()
    expect(designer.get_by_test_id("offer-row").filter(has_text="in The lair")).to_have_count(2)


def test_typing_before_an_editor_has_loaded_is_not_lost(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Early Typing")
    [stored] = import_missions(portal, game_id, mission("Stored title", "WIN"))
    path = f"/studio/mission?game={game_id}&mission={stored['id']}"
    # The page as served, before any script ran: its inputs cannot take typing yet.
    served = httpx.get(portal.url + path, follow_redirects=True).text
    assert re.search(r"<fieldset[^>]*disabled", served), "the editor's inputs are open at once"

    for url, label, typed in (
        (path, "Title", "Typed at once"),
        (f"/studio/mission?game={game_id}", "Title", "A new one"),
        (f"/studio/quest?game={game_id}", "Name", "A quest typed early"),
        (f"/studio/tester?game={game_id}", "Event name", "TYPED_EARLY"),
    ):
        designer.goto(portal.url + url, wait_until="commit")
        field = designer.get_by_label(label, exact=True)
        field.fill(typed)  # waits until the field takes typing
        expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
        designer.wait_for_timeout(1500)  # anything still arriving would refill the form
        expect(field).to_have_value(typed)


def test_deactivating_an_offer_asks_first_and_names_it(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Ask First")
    [kill] = import_missions(portal, game_id, mission("Kill 10", "KILL"))
    designer.goto(portal.url + f"/studio/missions?game={game_id}")
    row = designer.get_by_test_id("offer-row").filter(has_text="Kill 10")
    row.get_by_role("button", name="Deactivate").click()
    dialog = designer.get_by_role("alertdialog")
    expect(dialog).to_contain_text("Deactivate mission “Kill 10”?")
    expect(dialog).to_contain_text("No one can start or complete it")
    screenshot(designer, "editors-deactivate-dialog")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert offer(portal, Mission, kill["id"]).is_active

    row.get_by_role("button", name="Deactivate").click()
    designer.get_by_role("alertdialog").get_by_role("button", name="Deactivate").click()
    expect(designer.get_by_text("Mission “Kill 10” is inactive")).to_be_visible()
    expect(row).to_contain_text("inactive")
    assert not offer(portal, Mission, kill["id"]).is_active
    row.get_by_role("button", name="Activate").click()  # no question: nothing is lost
    expect(designer.get_by_text("Mission “Kill 10” is active")).to_be_visible()
    assert offer(portal, Mission, kill["id"]).is_active

    # In the editor, unchecking Active asks before the save deactivates.
    designer.goto(portal.url + f"/studio/mission?game={game_id}&mission={kill['id']}")
    expect(designer.get_by_label("Title")).to_have_value("Kill 10")
    designer.get_by_label("Active").uncheck()
    designer.get_by_role("button", name="Save mission").click()
    dialog = designer.get_by_role("alertdialog")
    expect(dialog).to_contain_text("Deactivate mission “Kill 10”?")
    dialog.get_by_role("button", name="Cancel").click()
    assert offer(portal, Mission, kill["id"]).is_active
    designer.get_by_role("button", name="Save mission").click()
    designer.get_by_role("alertdialog").get_by_role("button", name="Save and deactivate").click()
    expect(designer.get_by_text("Mission “Kill 10” saved.")).to_be_visible()
    assert not offer(portal, Mission, kill["id"]).is_active


def test_credentials_are_named_revoked_after_asking_and_the_example_fits_a_phone(portal, new_page):
    designer, game_id, first_client, _ = designer_with_game(
        portal, new_page, "Phone Game", width=390, height=844
    )
    designer.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=portal.url)
    rows = designer.get_by_test_id("credential-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Key 1")
    designer.get_by_label("New credential").fill("prod-key")
    designer.get_by_role("button", name="Add credential").click()
    expect(designer.get_by_text("Credential “prod-key” added")).to_be_visible()
    expect(designer.get_by_text("New credential “prod-key”.")).to_be_visible()
    expect(rows).to_have_count(2)
    designer.get_by_label("New credential").fill("prod-key")
    designer.get_by_role("button", name="Add credential").click()  # a third live one
    expect(designer.get_by_text("already has two live credentials")).to_be_visible()

    # The curl example wraps: nothing scrolls sideways on a phone; it copies in one click.
    curl = designer.get_by_test_id("curl-example")
    expect(curl).to_contain_text("/v2/custom-events")
    assert designer.evaluate("document.documentElement.scrollWidth") <= 390
    assert curl.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    screenshot(designer, "editors-game-phone")
    designer.get_by_role("button", name="Copy the curl example").click()
    expect(designer.get_by_text("Copied", exact=True)).to_be_visible()
    copied = designer.evaluate("navigator.clipboard.readText()")
    assert f"curl -s {portal.url}/v2/custom-events" in copied

    prod = rows.filter(has_text="prod-key")
    prod.get_by_role("button", name="Revoke").click()
    dialog = designer.get_by_role("alertdialog")
    expect(dialog).to_contain_text("Revoke credential “prod-key”?")
    expect(dialog).to_contain_text("Games using it stop being accepted")
    dialog.get_by_role("button", name="Cancel").click()
    with Session(portal.engine()) as db:
        ours = db.exec(select(GameCredential).where(GameCredential.game_id == game_id)).all()
    assert [c.revoked_at for c in ours] == [None, None]
    prod.get_by_role("button", name="Revoke").click()
    designer.get_by_role("alertdialog").get_by_role("button", name="Revoke").click()
    expect(designer.get_by_text("Credential “prod-key” revoked")).to_be_visible()
    expect(prod).to_contain_text(re.compile(r"Revoked at \d{4}-\d\d-\d\d \d\d:\d\d UTC"))
    expect(rows.filter(has_text="Key 1")).to_contain_text("live")
    with Session(portal.engine()) as db:
        live = db.exec(
            select(GameCredential.client_id)
            .where(GameCredential.revoked_at.is_(None))  # type: ignore[union-attr]
            .where(GameCredential.game_id == game_id)
        ).all()
    assert live == [first_client]


def test_the_missions_list_shows_each_missions_funnel(portal, new_page):
    designer, game_id, client_id, secret = designer_with_game(portal, new_page, "Funnel Game")
    [duel, _] = import_missions(
        portal,
        game_id,
        mission(
            "Win two duels",
            "DUEL",
            rule={
                "event": "DUEL",
                "conditions": [{"field": "traits.won", "op": "==", "value": True}],
                "completion": {"kind": "count", "threshold": 2},
            },
        ),
        mission("Nobody plays this", "NOTHING"),
    )
    owid = approved_wall(portal, "Funnel Wall")
    players = {}
    for uid in ("ann", "bob", "cid", "ann"):  # ann clicks twice
        players[uid] = click_mission(portal, duel["id"], owid, uid)
    later = datetime.now(UTC) + timedelta(seconds=1)
    won = lambda uid, n: {  # noqa: E731
        "userId": uid,
        "event": "DUEL",
        "time": (later + timedelta(seconds=n)).isoformat(),
        "traits": {"won": True},
    }
    answer = send_events(
        portal.url,
        client_id,
        secret,
        {
            "gameId": game_id,
            "identifiers": [
                {"userId": uid, "platformUserId": players[uid]} for uid in ("ann", "bob")
            ],
            "events": [won("ann", 0), won("ann", 1), won("bob", 2)],
        },
    )
    assert answer.json()["message"] == "OK", answer.text

    designer.goto(portal.url + f"/studio/missions?game={game_id}")
    row = designer.get_by_test_id("offer-row").filter(has_text="Win two duels")
    for test_id, value in (
        ("clicks", "4"),
        ("started", "2"),
        ("in-progress", "1"),
        ("completed", "1"),
    ):
        expect(row.get_by_test_id(test_id)).to_have_text(value)
    expect(row.get_by_test_id("median-time")).to_have_text(re.compile(r"^\d+ s$"))
    expect(row.get_by_test_id("rule")).to_have_text("DUEL where won = true, 2 times")
    idle = designer.get_by_test_id("offer-row").filter(has_text="Nobody plays this")
    expect(idle.get_by_test_id("clicks")).to_have_text("0")
    expect(idle.get_by_test_id("median-time")).to_have_text("–")
    screenshot(designer, "editors-missions-funnel")


def test_the_rule_tester_lists_every_event_also_after_completion(portal, new_page):
    designer, _, _, _ = designer_with_game(portal, new_page, "Tester Game")
    designer.get_by_role("button", name="Rule tester").click()
    expect(designer.get_by_label("Event name")).to_have_value("MATCH_END")
    designer.get_by_label("Events", exact=True).fill(
        "MATCH_END 1200\nMATCH_END 1500\nMATCH_END 1100\nMATCH_END 300\nLOGIN\nMATCH_END 2000"
    )
    designer.get_by_role("button", name="Run").click()
    steps = designer.get_by_test_id("test-step")
    expect(steps).to_have_count(6)  # none dropped
    expect(designer.get_by_test_id("rule-summary")).to_have_text(
        "Rule: MATCH_END where value ≥ 1000, 3 times in a row"
    )
    expect(designer.get_by_test_id("completes-at")).to_contain_text("completes at event 3")
    expect(steps.nth(2)).to_contain_text("completes")
    for n, outcome in ((3, "fails the filter"), (4, "other event"), (5, "passes")):
        expect(steps.nth(n)).to_contain_text(outcome)
        expect(steps.nth(n)).to_contain_text("after completion: not counted")
    expect(steps.nth(5).get_by_test_id("progress")).to_have_text("3 / 3")  # the run stays
    screenshot(designer, "editors-rule-tester")


def test_another_studio_cannot_deactivate_or_build_quests_in_a_game(portal, new_page):
    from portal.missions.missions_state import MissionsState, QuestState

    owner, game_id, _, _ = designer_with_game(portal, new_page, "Guarded Game")
    [kept] = import_missions(portal, game_id, mission("Kept active", "KEEP"))
    rival, _, _, _ = designer_with_game(portal, new_page, "Rival Game")
    rival.add_init_script(SPY)
    rival.goto(portal.url + f"/studio/missions?game={game_id}")
    expect(rival.get_by_text("No such game.")).to_be_visible()
    where = f"/studio/missions?game={game_id}"
    rival.evaluate("window.__received = []")  # count the two refusals below only
    send_event(
        rival,
        f"{MissionsState.get_full_name()}.set_active",
        {"kind": "mission", "offer_id": kept["id"], "active": False},
        where,
    )
    quest_form = form(name="Stolen", destinationUrl="https://evil.example/", isActive="true")
    send_event(
        rival, f"{QuestState.get_full_name()}.save", quest_form, f"/studio/quest?game={game_id}"
    )
    expect_refusals(rival, 2, "No such game.")
    assert offer(portal, Mission, kept["id"]).is_active
    with Session(portal.engine()) as db:
        assert db.exec(select(Quest).where(Quest.game_id == game_id)).all() == []
    owner.close()
