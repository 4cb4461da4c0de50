"""The mission editor's forms as a new designer meets them, on a laptop and on a phone:
countries typed by any common name or code become chips (or stop the save), every problem
of a rule, and every problem of the whole mission, is named at once beside its input,
messages read as sentences a person would say, and the rule tester says when a compared
field holds a word.

Each test works the form at one width (the phone's where typing and tapping differ most)
and looks at what it shows at both."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from models import Mission
from tests.e2e.conftest import LAPTOP, PHONE, looked_at
from tests.e2e.missions.test_portal_editors import designer_with_game
from tests.e2e.steps import expect_errors

pytestmark = pytest.mark.e2e


def new_mission(portal, new_page, name: str, size: tuple[int, int]) -> tuple[Page, str]:
    """A designer of a new game on its empty mission editor, title and rule filled in."""
    width, height = size
    designer, game_id, _, _ = designer_with_game(
        portal, new_page, f"{name} {width}", width=width, height=height
    )
    designer.get_by_role("button", name="Missions").click()
    designer.get_by_role("button", name="New mission").click()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    designer.get_by_label("Title").fill("US players only")
    designer.get_by_label("Payout (USD)").fill("1")
    designer.get_by_label("Destination URL").fill("https://game.example/play")
    designer.get_by_label("Event name").fill("GAME_END")
    return designer, game_id


def missions_of(portal, game_id: str) -> list[Mission]:
    with Session(portal.engine()) as db:
        return list(db.exec(select(Mission).where(Mission.game_id == game_id)).all())


def test_countries_typed_by_common_names_and_codes_are_saved(portal, new_page):
    designer, game_id = new_mission(portal, new_page, "Typed Countries", PHONE)
    only = designer.get_by_label("Only in these countries")
    chips = designer.get_by_test_id("country-chip-include")
    expect(designer.get_by_text("None chosen: everywhere.")).to_be_visible()
    only.fill("USA")
    only.press("Enter")
    expect(chips).to_have_text(["United States (US)"])
    # The hint says what the chips mean, no longer that none is chosen.
    expect(designer.get_by_text("None chosen: everywhere.")).to_have_count(0)
    expect(designer.get_by_text("Only players there can start it.")).to_be_visible()
    expect(only).to_have_value("")
    only.fill("uk")
    only.press("Enter")
    expect(chips).to_have_text(["United States (US)", "United Kingdom (GB)"])
    only.fill("Deutschland")
    only.press("Tab")  # leaving the box does what Enter does
    expect(chips).to_have_count(3)
    expect(chips.nth(2)).to_have_text("Germany (DE)")

    # Text that names no country stays, says so beside the picker, and stops the save.
    not_in = designer.get_by_label("Not in these countries")
    not_in.fill("Narnia")
    not_in.press("Enter")
    refusal = "No country is called “Narnia”: pick one from the list, or empty the box."
    expect_errors(designer, {"Not in these countries": refusal})
    expect(not_in).to_have_value("Narnia")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_role("alert").filter(has_text="Narnia")).to_be_visible()
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    assert missions_of(portal, game_id) == []
    looked_at(designer, "editor-forms-countries-refused")

    # A name typed and saved at once, without Enter in the picker, is saved too (Save
    # reached from the keyboard: leaving the picker adds its chip, which moves the button).
    not_in.fill("holland")
    save = designer.get_by_role("button", name="Save mission")
    save.focus()
    save.press("Enter")
    expect(designer.get_by_text("Mission “US players only” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    expect(designer.get_by_test_id("country-chip-exclude")).to_have_text(["Netherlands (NL)"])
    [saved] = missions_of(portal, game_id)
    assert (saved.countries_include, saved.countries_exclude) == (["DE", "GB", "US"], ["NL"])
    looked_at(designer, "editor-forms-countries-saved")


def test_every_problem_of_the_rule_is_named_at_once_beside_its_input(portal, new_page):
    designer, game_id = new_mission(portal, new_page, "Rule Problems", LAPTOP)
    designer.get_by_label("Payout (USD)").fill("-1")
    designer.get_by_label("Condition field 1").fill("value")
    designer.get_by_label("Condition value 1").fill("high")
    designer.get_by_role("button", name="Add condition").click()
    designer.get_by_label("Condition field 2").fill("kills")
    designer.get_by_label("Condition value 2").fill("3")
    designer.get_by_label("Completion", exact=True).select_option("sum")
    designer.get_by_label("Completion threshold").fill("0")
    designer.get_by_role("button", name="Save mission").click()

    expect_errors(
        designer,
        {
            "Condition value 1": (
                ">= compares numbers: enter a number, or compare text with == or !=."
            ),
            "Condition field 2": ('A condition\'s field is "value", "traits.<name>" or "groupId".'),
            "Completion field": 'A total needs the field to add up: "value" or "traits.<name>".',
            "Completion threshold": "The target must be above 0 (only a minimum may be 0).",
            "Payout (USD)": "Enter 0 or more.",
        },
    )
    assert missions_of(portal, game_id) == []
    looked_at(designer, "editor-forms-rule-problems")


def test_every_problem_of_the_whole_mission_is_named_at_once_beside_its_input(portal, new_page):
    designer, game_id = new_mission(portal, new_page, "Whole Problems", LAPTOP)
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731
    label("Starts on").fill("2031-12-24")
    label("Expires on").fill("2031-12-01")  # before the start
    label("Repeats").select_option("day")
    label("Pool").fill("daily-pvp")  # and pooled: a pool turns it over already
    label("Pool").press("Tab")
    label("Missions each player sees").fill("2")
    label("Budget (USD)").fill("500")  # and no revenue to count
    designer.get_by_role("button", name="Save mission").click()

    problems = {
        "Starts on": "The start date must be before the expiry date.",
        "Repeats": "A pooled mission turns over with its pool: leave recurrence out.",
        "Revenue (USD)": "A budget counts revenue: set the mission's revenue first.",
    }
    for width, height in (LAPTOP, PHONE):  # every one at once, at each width
        designer.set_viewport_size({"width": width, "height": height})
        expect_errors(designer, problems)
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    assert missions_of(portal, game_id) == []
    looked_at(designer, "editor-forms-whole-problems")


def test_an_email_address_is_refused_in_plain_words(portal, new_page):
    page = new_page(*PHONE)
    page.goto(portal.url + "/signup")
    page.get_by_label("Email").fill("ada@example")
    page.get_by_role("button", name="Apply").click()
    expect_errors(page, {"Email": "Check the part after the @: a domain such as example.com."})
    expect(page.get_by_text("@-sign")).to_have_count(0)
    looked_at(page, "editor-forms-email")


def test_the_rule_tester_says_a_compared_field_is_not_a_number(portal, new_page):
    width, height = PHONE
    designer, _, _, _ = designer_with_game(
        portal, new_page, "Word Tester", width=width, height=height
    )
    designer.get_by_role("button", name="Rule tester").click()
    expect(designer.get_by_label("Event name")).to_have_value("MATCH_END")
    designer.get_by_label("Condition field 1").fill("traits.kills")
    designer.get_by_label("Condition value 1").fill("3")
    designer.get_by_label("Completion", exact=True).select_option("count")
    designer.get_by_label("Completion threshold").fill("1")
    designer.get_by_label("Events", exact=True).fill("MATCH_END kills=4\nMATCH_END kills=three")
    designer.get_by_role("button", name="Run").click()
    expect_errors(designer, {"Events": "Line 2: kills is “three”, not a number."})
    expect(designer.get_by_test_id("test-step")).to_have_count(0)
    looked_at(designer, "editor-forms-tester-refused")
    # A number there, and the test runs.
    designer.get_by_label("Events", exact=True).fill("MATCH_END kills=4\nMATCH_END kills=5")
    designer.get_by_role("button", name="Run").click()
    expect(designer.get_by_test_id("test-step")).to_have_count(2)
    expect(designer.get_by_test_id("completes-at")).to_contain_text("completes at event 1")
    looked_at(designer, "editor-forms-tester")
