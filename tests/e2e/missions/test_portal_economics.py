"""Revenue, country payouts and budgets in the real portal (docs/economics.md): the mission
editor's "Revenue and payouts" card (rows added and removed, problems under their inputs,
nothing typed lost, every value there again when the mission is opened again), and the
missions page's budgets: the game's budget set and removed, each budget's burn, the
revenue beside the payout and a mission whose budget is spent."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.core.periods import Period
from api.economics.budgets import game_scope, mission_scope
from models import BudgetSpend, Game, Mission
from models.types import utcnow
from tests.e2e.conftest import LAPTOP, PHONE, looked_at, screenshot
from tests.e2e.missions.test_portal_editors import designer_with_game
from tests.e2e.missions.test_portal_live_operations import new_mission

pytestmark = pytest.mark.e2e


def stored(portal, title: str) -> Mission:
    with Session(portal.engine()) as db:
        found = db.exec(select(Mission).where(Mission.title == title)).one()
        db.expunge(found)
        return found


def card_shots(page: Page, name: str, test_id: str) -> None:
    """The card alone at each width, beside `looked_at`'s whole pages: what to look at."""
    before = page.viewport_size
    for width, height in (LAPTOP, PHONE):
        page.set_viewport_size({"width": width, "height": height})
        screenshot(page.get_by_test_id(test_id), f"{name}-card-{width}")
    if before:
        page.set_viewport_size(before)


def payout_rows(designer: Page) -> list[tuple[str, str]]:
    rows = designer.get_by_test_id("country-payout")
    return [
        (
            rows.nth(i).get_by_label(re.compile(r"countries$")).input_value(),
            rows.nth(i).get_by_label(re.compile(r"\(USD\)$")).input_value(),
        )
        for i in range(rows.count())
    ]


def test_revenue_payouts_and_a_budget_are_edited_and_opened_again(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Econ Editor")
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731

    new_mission(designer, portal.url, game_id, "Win 3 ranked", "RANKED_WIN")
    label("Payout (USD)").fill("1.00")
    card = designer.get_by_test_id("revenue-and-payouts")
    expect(card.get_by_role("heading", name="Revenue and payouts")).to_be_visible()
    add = card.get_by_role("button", name="Add country payout")
    add.click()
    expect(designer.get_by_test_id("country-payout")).to_have_count(1)
    add.click()
    add.click()
    expect(designer.get_by_test_id("country-payout")).to_have_count(3)
    label("Payout 1 countries").fill("US, Canada")
    label("Payout 1 (USD)").fill("1.20")
    label("Payout 2 countries").fill("DE")
    label("Payout 2 (USD)").fill("0.90")
    label("Payout 3 countries").fill("Brazil, us")  # the US a second time: refused
    label("Payout 3 (USD)").fill("0.50")
    designer.get_by_role("button", name="Remove payout 2").click()
    expect(designer.get_by_test_id("country-payout")).to_have_count(2)
    assert payout_rows(designer) == [("US, Canada", "1.20"), ("Brazil, us", "0.50")]
    # A budget without revenue.
    label("Budget (USD)").fill("500")
    label("Spends").select_option("day")
    zone = label("Budget's time zone")
    zones = designer.locator("datalist#" + zone.get_attribute("list") + " option")
    expect(zones.and_(designer.locator('[value="America/New_York"]'))).to_have_count(1)
    zone.fill("America/New_York")
    designer.get_by_role("button", name="Save mission").click()

    twice = label("Payout 2 countries")
    expect(twice).to_have_attribute("aria-invalid", "true")
    expect(twice).to_have_accessible_description("A country has one payout: US is in two rows.")
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    # Nothing typed is lost.
    assert payout_rows(designer) == [("US, Canada", "1.20"), ("Brazil, us", "0.50")]
    expect(label("Budget (USD)")).to_have_value("500")
    expect(zone).to_have_value("America/New_York")
    card.scroll_into_view_if_needed()
    looked_at(designer, "economics-editor-error")
    card_shots(designer, "economics-editor-error", "revenue-and-payouts")

    # The rows fixed, the budget still has no revenue to count: said under the revenue.
    twice.fill("Brazil, IN")
    designer.get_by_role("button", name="Save mission").click()
    revenue = label("Revenue (USD)")
    expect(revenue).to_have_attribute("aria-invalid", "true")
    expect(revenue).to_have_accessible_description(
        "A budget counts revenue: set the mission's revenue first."
    )
    expect(twice).to_have_attribute("aria-invalid", "false")

    revenue.fill("1.60")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Win 3 ranked” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    ranked = stored(portal, "Win 3 ranked")
    assert ranked.revenue_micros == 1_600_000
    assert ranked.payouts == [
        {"countries": ["CA", "US"], "payout": "1.20"},
        {"countries": ["BR", "IN"], "payout": "0.50"},
    ]
    assert ranked.budget == {"amount": "500", "every": "day", "timeZone": "America/New_York"}

    # Opened again, it shows what was saved.
    designer.reload()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    expect(label("Revenue (USD)")).to_have_value("1.6")
    expect(designer.get_by_test_id("country-payout")).to_have_count(2)
    assert payout_rows(designer) == [("CA, US", "1.20"), ("BR, IN", "0.50")]
    expect(label("Budget (USD)")).to_have_value("500")
    expect(label("Spends")).to_have_value("day")
    expect(label("Budget's time zone")).to_have_value("America/New_York")
    card.scroll_into_view_if_needed()
    looked_at(designer, "economics-editor")
    card_shots(designer, "economics-editor", "revenue-and-payouts")

    # A row taken out and the budget emptied are gone after the save.
    designer.get_by_role("button", name="Remove payout 1").click()
    expect(designer.get_by_test_id("country-payout")).to_have_count(1)
    label("Budget (USD)").fill("")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Win 3 ranked” saved.")).to_be_visible()
    ranked = stored(portal, "Win 3 ranked")
    assert ranked.payouts == [{"countries": ["BR", "IN"], "payout": "0.50"}]
    assert ranked.budget is None
    assert ranked.revenue_micros == 1_600_000


def test_the_games_budget_and_each_budgets_burn_on_the_missions_page(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Econ Budgets")
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731

    new_mission(designer, portal.url, game_id, "Daily spender", "MATCH_END")
    label("Payout (USD)").fill("1.00")
    label("Revenue (USD)").fill("2")
    label("Budget (USD)").fill("10")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Daily spender” created.")).to_be_visible()
    spender = stored(portal, "Daily spender")

    designer.goto(portal.url + f"/studio/missions?game={game_id}")
    budgets = designer.get_by_test_id("budgets")
    expect(budgets.get_by_role("heading", name="Budgets")).to_be_visible()
    expect(designer.get_by_test_id("budget-burn")).to_have_count(1)
    expect(designer.get_by_test_id("burn-label")).to_have_text(["“Daily spender” · daily"])
    expect(designer.get_by_test_id("burn-spent")).to_have_text(["$0.00 of $10.00 · 0%"])
    row = designer.get_by_test_id("offer-row").filter(has_text="Daily spender")
    expect(row.get_by_test_id("revenue")).to_have_text("revenue $2.00")

    # The game's budget: a problem under its input, then saved (a double click saves once).
    form = designer.get_by_test_id("game-budget-form")
    label("Budget (USD)").fill("-5")
    form.get_by_role("button", name="Save game budget").click()
    amount = label("Budget (USD)")
    expect(amount).to_have_attribute("aria-invalid", "true")
    expect(amount).to_have_accessible_description(re.compile("above 0"))
    amount.fill("1000")
    label("Spends").select_option("month")
    label("Budget's time zone").fill("Europe/Berlin")
    form.get_by_role("button", name="Save game budget").dblclick()
    expect(designer.get_by_text("Game budget saved.")).to_have_count(1)
    expect(designer.get_by_test_id("burn-label")).to_have_text(
        ["Game budget · monthly", "“Daily spender” · daily"]
    )
    with Session(portal.engine()) as db:
        game = db.get(Game, game_id)
        assert game is not None
        assert game.budget == {"amount": "1000", "every": "month", "timeZone": "Europe/Berlin"}
    expect(label("Budget (USD)")).to_have_value("1000")
    expect(label("Spends")).to_have_value("month")

    # The mission's day spent: its badge, and the burn of each budget.
    now = utcnow()
    with portal.setting_up() as (session, _):
        day = f"day:{Period('day', 'UTC').key(now)}"
        month = f"month:{Period('month', 'Europe/Berlin').key(now)}"
        session.add(
            BudgetSpend(scope=mission_scope(spender.id), period=day, spent_micros=9_000_000)
        )
        session.add(BudgetSpend(scope=game_scope(game_id), period=month, spent_micros=250_000_000))
    designer.reload()
    expect(designer.get_by_test_id("burn-spent")).to_have_text(
        ["$250.00 of $1,000.00 · 25%", "$9.00 of $10.00 · 90%"]
    )
    expect(designer.get_by_test_id("burn-turns").first).to_have_text(
        re.compile(r"^Turns over on \d{4}-\d\d-\d\d \d\d:\d\d UTC \(midnight in Europe/Berlin\)$")
    )
    row = designer.get_by_test_id("offer-row").filter(has_text="Daily spender")
    expect(row.get_by_test_id("live-budget")).to_have_text(
        re.compile(r"^Budget spent · reopens \d{1,2} [A-Z][a-z]{2}")
    )
    looked_at(designer, "economics-budgets")
    card_shots(designer, "economics-budgets", "budgets")

    # Removed after a question.
    budgets.get_by_role("button", name="Remove game budget").click()
    designer.get_by_role("button", name="Remove budget").click()
    expect(designer.get_by_text("The game has no budget now.")).to_be_visible()
    expect(designer.get_by_test_id("burn-label")).to_have_text(["“Daily spender” · daily"])
    expect(label("Budget (USD)")).to_have_value("")
    with Session(portal.engine()) as db:
        game = db.get(Game, game_id)
        assert game is not None and game.budget is None
