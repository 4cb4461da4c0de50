"""An offerwall's payout rules in the real portal: staff open them from the Publishers page,
set a revenue share for every mission, pick a mission by game and title for a rule of its
own (a share of a mission without revenue refused beside its input, a double click making
one rule), read what each rule does and preview what the offerwall gets; designers and
publishers sending the page's events by hand are refused on the server."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.accounts import sessions as accounts
from api.economics import Terms, payout_rules, resolve
from api.publishers import offerwalls
from api.studios import studios
from models import Mission, PayoutRule, Role
from portal import routes
from tests.e2e.conftest import looked_at
from tests.e2e.socket_events import (
    SPY,
    expect_refusals,
    form,
    handler_name,
    send_event,
)
from tests.e2e.steps import expect_errors, import_offers, sign_in, staff_row
from tests.factories import mission_data

pytestmark = pytest.mark.e2e

DESKTOP = (1366, 900)
PASSWORD = "payout-rules-2026"
NO_REVENUE = "“Reach level 5” has no revenue to share: set its revenue first, or a fixed payout."


def arrange(portal, company: str, missions: list[dict]) -> tuple[str, dict[str, str]]:
    """An approved offerwall `company` with its publisher, a designer, and `missions` of
    the portal's game; the offerwall's id and the missions' ids by title."""
    tag = re.sub(r"[^a-z]", "", company.lower())
    with portal.setting_up() as (session, box):
        wall = offerwalls.create_offerwall(session=session, name=company)
        offerwalls.approve(session=session, box=box, offerwall=wall)
        studio = studios.create_studio(session=session, name=f"{company} Studio")
        for role, fields in (
            (Role.DESIGNER, {"studio_id": studio.id}),
            (Role.PUBLISHER, {"offerwall_id": wall.id}),
        ):
            accounts.create_user(
                session=session,
                email=f"{role.value}-{tag}@payouts.example",
                password=PASSWORD,
                role=role,
                **fields,
            )
        wall_id = wall.id
    made = import_offers(portal, {"gameId": portal.game["gameId"], "missions": missions})
    return wall_id, {m["title"]: m["id"] for m in made["missions"]}


def paid(portal, wall_id: str, mission_id: str, country: str | None = None) -> int:
    """What the served portal's database now makes `resolve` pay."""
    engine = portal.engine()
    try:
        with Session(engine) as db:
            mission = db.get(Mission, mission_id)
            rules = payout_rules.for_mission(db, wall_id, mission_id)
            return resolve(Terms.of(mission), rules, country).payout_micros
    finally:
        engine.dispose()


def rules_stored(portal, wall_id: str) -> list[tuple[str, int | None, float | None]]:
    engine = portal.engine()
    try:
        with Session(engine) as db:
            rows = db.exec(select(PayoutRule).where(PayoutRule.offerwall_id == wall_id)).all()
            return sorted((r.mission_id, r.payout_micros, r.share_percent) for r in rows)
    finally:
        engine.dispose()


def pick(page: Page, search: str, label: str, mission_id: str) -> None:
    """Search, then choose this test's mission `label` (by its id: the portal's game may
    hold others of that title)."""
    page.get_by_label("Find a mission").fill(search)
    option = page.get_by_label("Mission", exact=True).locator(f'option[value="{mission_id}"]')
    expect(option).to_contain_text(label)
    page.get_by_label("Mission", exact=True).select_option(value=mission_id)


def test_staff_set_an_offerwalls_payout_rules_and_preview_them(portal, new_page):
    wall_id, missions = arrange(
        portal,
        "Payout Wall",
        [
            mission_data(title="Kill 10 players", payout="1.00", revenue="2.00"),
            mission_data(title="Reach level 5", payout="0.50"),
            mission_data(
                title="Win a ranked match",
                payout="1.00",
                revenue="1.60",
                payouts=[{"countries": ["US", "CA"], "payout": "1.20"}],
            ),
        ],
    )
    kill, level = missions["Kill 10 players"], missions["Reach level 5"]
    staff = new_page(*DESKTOP)
    sign_in(staff, portal.url, *portal.staff)
    expect(staff.get_by_role("heading", name="Dashboard")).to_be_visible()

    # From the Publishers page to the offerwall's page.
    staff.goto(portal.url + routes.publishers_with_status("approved"))
    staff.get_by_placeholder("Company, email, website or owid").fill("Payout Wall")
    staff.get_by_role("button", name="Search").click()
    expect(staff_row(staff, "Payout Wall")).to_have_count(1)
    looked_at(staff, "payout-rules-publishers")
    staff_row(staff, "Payout Wall").get_by_role("link", name="Payout rules").click()
    expect(staff).to_have_url(re.compile(rf"/staff/publishers/offerwall/?\?offerwall={wall_id}"))
    expect(staff.get_by_role("heading", name="Payout Wall")).to_be_visible()
    expect(staff.get_by_test_id("precedence")).to_contain_text(
        "the mission's payout for the player's country › this offerwall's rule for the "
        "mission › its revenue share › the mission's own payout"
    )
    looked_at(staff, "payout-rules-empty")

    # The revenue share for every mission: refused beside its input, then saved.
    share = staff.get_by_label("Share of every mission's revenue (%)")
    share.fill("150")
    staff.get_by_role("button", name="Save share").click()
    expect_errors(
        staff,
        {
            "Share of every mission's revenue (%)": "A revenue share is a percentage from 0 "
            "to 100, with at most two decimals."
        },
    )
    share.fill("70")
    staff.get_by_role("button", name="Save share").click()
    expect(staff.get_by_text("Revenue share saved")).to_be_visible()
    expect(staff.get_by_test_id("every-share")).to_have_text("70%")
    expect(share).to_have_attribute("aria-invalid", "false")
    assert paid(portal, wall_id, kill) == 1_400_000

    # A share of a mission without revenue is refused, with its message beside its input.
    pick(staff, "level", "Reach level 5", level)
    staff.get_by_role("radio", name="A share of its revenue (%)").click()
    expect(
        staff.get_by_text("This mission has no revenue: a share of it cannot apply")
    ).to_be_visible()
    staff.get_by_label("Share of this mission's revenue (%)").fill("50")
    staff.get_by_role("button", name="Save rule").click()
    expect_errors(staff, {"Share of this mission's revenue (%)": NO_REVENUE})
    assert [r[0] for r in rules_stored(portal, wall_id)] == [""]

    # A fixed payout for one mission, found by its game: a double click saves one rule.
    pick(staff, "e2e", "Kill 10 players", kill)
    staff.get_by_role("radio", name="A fixed payout (USD)").click()
    staff.get_by_label("Payout (USD)", exact=True).fill("1.20")
    staff.get_by_role("button", name="Save rule").dblclick()
    expect(staff.get_by_text("Rule saved.")).to_be_visible()
    rows = staff.get_by_test_id("payout-rule-row")
    expect(rows).to_have_count(1)
    expect(rows.get_by_test_id("rule-words")).to_have_text("Kill 10 players pays $1.20 here")
    assert rules_stored(portal, wall_id) == sorted([("", None, 70.0), (kill, 1_200_000, None)])
    assert paid(portal, wall_id, kill) == 1_200_000
    assert paid(portal, wall_id, level) == 500_000  # no revenue: its own payout

    # The preview of the picked mission: the rule's payout, beside the default, revenue, margin.
    preview = staff.get_by_test_id("payout-preview")
    expect(preview.get_by_test_id("preview-payout")).to_have_text("$1.20")
    expect(preview.get_by_test_id("preview-default")).to_have_text("$1.00")
    expect(preview.get_by_test_id("preview-revenue")).to_have_text("$2.00")
    expect(preview.get_by_test_id("preview-margin")).to_have_text("$0.80")
    expect(preview).to_contain_text("40.0% of revenue")
    expect(preview.get_by_test_id("preview-why")).to_contain_text("fixed payout for the mission")

    # A share for the ranked match: its words, and the countries paid otherwise.
    pick(staff, "ranked", "Win a ranked match", missions["Win a ranked match"])
    expect(preview.get_by_test_id("preview-payout")).to_have_text("$1.12")  # 70% of 1.60
    expect(preview).to_contain_text("CA $1.20, US $1.20")
    staff.get_by_role("radio", name="A share of its revenue (%)").click()
    staff.get_by_label("Share of this mission's revenue (%)").fill("62.5")
    staff.get_by_role("button", name="Save rule").click()
    ranked = rows.filter(has_text="Win a ranked match")
    expect(ranked.get_by_test_id("rule-words")).to_have_text(
        "Win a ranked match pays 62.5% of its revenue here ($1.00)"
    )
    expect(preview.get_by_test_id("preview-why")).to_contain_text("revenue share for the mission")
    looked_at(staff, "payout-rules")

    # Removing the rule: the share for every mission applies again.
    rows.filter(has_text="Kill 10 players").get_by_role("button", name="Preview").click()
    expect(preview).to_contain_text("Kill 10 players")
    rows.filter(has_text="Kill 10 players").get_by_role(
        "button", name="Remove the rule for Kill 10 players"
    ).click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Remove").click()
    expect(staff.get_by_text("Rule removed")).to_be_visible()
    expect(rows).to_have_count(1)
    expect(preview.get_by_test_id("preview-payout")).to_have_text("$1.40")
    expect(preview.get_by_test_id("preview-why")).to_contain_text("revenue share for every mission")
    assert paid(portal, wall_id, kill) == 1_400_000

    # Clearing the share: missions pay their own payout.
    staff.get_by_role("button", name="Clear share").click()
    staff.get_by_role("alertdialog").get_by_role("button", name="Clear share").click()
    expect(staff.get_by_text("Revenue share cleared")).to_be_visible()
    expect(staff.get_by_test_id("every-share")).to_have_count(0)
    assert paid(portal, wall_id, kill) == 1_000_000


@pytest.mark.parametrize("who", ["designer", "publisher"])
def test_designers_and_publishers_are_refused_even_by_hand(portal, new_page, who):
    from portal.economics.payout_rules_state import PayoutRulesState

    company = f"Guarded {who.title()} Wall"
    wall_id, missions = arrange(
        portal, company, [mission_data(title=f"Guarded {who} mission", revenue="2.00")]
    )
    kill = missions[f"Guarded {who} mission"]
    with portal.setting_up() as (session, _box):
        payout_rules.set_share(session, wall_id, "70", by="staff@questwall.example")
    before = rules_stored(portal, wall_id)
    page = new_page(*DESKTOP)
    page.add_init_script(SPY)
    tag = re.sub(r"[^a-z]", "", company.lower())
    sign_in(page, portal.url, f"{who}-{tag}@payouts.example", PASSWORD)
    expect(page).not_to_have_url(re.compile(r"/login"))  # signed in, on their home page
    expect(page.get_by_role("heading").first).to_be_visible()
    here = routes.staff_offerwall(wall_id)
    page.goto(portal.url + here)
    expect(page.get_by_text("Your account cannot open that page.")).to_be_visible()
    expect(page).not_to_have_url(re.compile(r"/staff/"))
    expect(page.get_by_role("heading", name="Payout rules")).to_have_count(0)

    name = lambda h: handler_name(PayoutRulesState, h)  # noqa: E731
    send_event(page, name("set_share"), form(share="99"), here)
    send_event(page, name("clear_share"), {}, here)
    send_event(
        page,
        name("save_rule"),
        form(mission=kill, kind="payout", payout="50"),
        here,
    )
    send_event(page, name("remove_rule"), {"mission_id": kill}, here)
    send_event(page, name("find_missions"), {"text": "Kill"}, here)
    send_event(page, name("pick"), {"mission_id": kill}, here)
    expect_refusals(page, 6)
    assert rules_stored(portal, wall_id) == before
    assert page.get_by_text(f"Guarded {who} mission").count() == 0
