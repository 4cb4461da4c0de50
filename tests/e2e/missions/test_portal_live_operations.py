"""Live operations in the real portal's editor and missions list: a recurring daily
mission in a zone picked from the list, a ladder of three stages (one removed and added
again), caps per period and per offerwall, a start date, a pooled mission that creates its
pool; each opened again with its values; the list's badges and funnel per period, long
ones inside their rows; a ladder whose stages do not go up refused under the stage, with
nothing typed lost."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import Page, expect
from sqlmodel import Session, select

from api.core.periods import Period
from models import Mission
from models.offers import CapCount, MissionPool
from models.types import utcnow
from tests.e2e.conftest import LAPTOP, PHONE, looked_at
from tests.e2e.missions.test_portal_editors import designer_with_game, import_missions, mission
from tests.e2e.steps import approved_wall, click_mission

pytestmark = pytest.mark.e2e


def stored(portal, title: str) -> Mission:
    with Session(portal.engine()) as db:
        found = db.exec(select(Mission).where(Mission.title == title)).one()
        db.expunge(found)
        return found


def new_mission(designer: Page, url: str, game_id: str, title: str, event: str) -> None:
    designer.goto(url + f"/studio/mission?game={game_id}")
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    designer.get_by_label("Title").fill(title)
    designer.get_by_label("Destination URL").fill("https://live.example/play")
    designer.get_by_label("Event name").fill(event)


def stage(designer: Page, n: int, threshold: str, payout: str) -> None:
    designer.get_by_label(f"Stage {n} threshold", exact=True).fill(threshold)
    designer.get_by_label(f"Stage {n} payout", exact=True).fill(payout)


def stage_values(designer: Page) -> list[tuple[str, str]]:
    rows = designer.get_by_test_id("stage")
    return [
        (
            rows.nth(i).get_by_label(re.compile(r"threshold$")).input_value(),
            rows.nth(i).get_by_label(re.compile(r"payout$")).input_value(),
        )
        for i in range(rows.count())
    ]


def test_live_operations_are_edited_opened_again_and_seen_in_the_list(portal, new_page):
    designer, game_id, _, _ = designer_with_game(portal, new_page, "Live Ops")
    label = lambda text: designer.get_by_label(text, exact=True)  # noqa: E731

    # A daily mission in New York's days, a ladder, caps and a start date.
    new_mission(designer, portal.url, game_id, "Daily duels", "DUEL")
    label("Repeats").select_option("day")
    zone = label("Recurrence time zone")
    zones = designer.locator("datalist#" + zone.get_attribute("list") + " option")
    expect(zones.and_(designer.locator('[value="America/New_York"]'))).to_have_count(1)
    zone.fill("America/New_York")  # as picked from the list of IANA names
    designer.get_by_role("button", name="Add stages").click()
    expect(designer.get_by_test_id("stage")).to_have_count(2)
    designer.get_by_role("button", name="Add stage", exact=True).click()
    expect(designer.get_by_test_id("stage")).to_have_count(3)
    stage(designer, 1, "1", "0.10")
    stage(designer, 2, "5", "0.40")
    stage(designer, 3, "10", "1")
    designer.get_by_role("button", name="Remove stage 2").click()
    expect(designer.get_by_test_id("stage")).to_have_count(2)
    assert stage_values(designer) == [("1", "0.10"), ("10", "1")]
    designer.get_by_role("button", name="Add stage", exact=True).click()
    expect(designer.get_by_test_id("stage")).to_have_count(3)
    stage(designer, 3, "5", "0.40")  # below the stage before it: refused
    label("Per day").fill("500")
    label("Caps' time zone").fill("Europe/Berlin")
    label("Cap per offerwall").fill("1000")
    label("Starts on").fill("2031-12-24")
    designer.get_by_role("button", name="Save mission").click()

    threshold = label("Stage 3 threshold")
    expect(threshold).to_have_attribute("aria-invalid", "true")
    expect(threshold).to_have_accessible_description(
        "A ladder's stages go up: each threshold above the one before."
    )
    expect(designer.get_by_role("heading", name="New mission")).to_be_visible()
    # Nothing typed is lost.
    assert stage_values(designer) == [("1", "0.10"), ("10", "1"), ("5", "0.40")]
    expect(zone).to_have_value("America/New_York")
    expect(label("Per day")).to_have_value("500")
    expect(label("Starts on")).to_have_value("2031-12-24")
    looked_at(designer, "live-ops-editor-error")

    stage(designer, 2, "5", "0.40")
    stage(designer, 3, "10", "1")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Daily duels” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    daily = stored(portal, "Daily duels")
    assert daily.recurrence == {
        "every": "day",
        "timeZone": "America/New_York",
        "weekStartsOn": "monday",
    }
    assert [(s["threshold"], Decimal(s["payout"])) for s in daily.stages] == [
        (1, Decimal("0.1")),
        (5, Decimal("0.4")),
        (10, Decimal(1)),
    ]
    assert daily.payout_micros == 1_500_000  # the stages' sum
    assert daily.period_caps == {
        "day": 500,
        "week": None,
        "month": None,
        "timeZone": "Europe/Berlin",
    }
    assert daily.cap_per_offerwall == 1000
    assert daily.start_date.isoformat() == "2031-12-24T00:00:00+00:00"

    # Opened again, it shows what was saved.
    designer.reload()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    expect(label("Repeats")).to_have_value("day")
    expect(label("Recurrence time zone")).to_have_value("America/New_York")
    expect(designer.get_by_test_id("stage")).to_have_count(3)
    assert stage_values(designer) == [("1", "0.10"), ("5", "0.40"), ("10", "1")]
    expect(label("Payout (USD)")).to_have_value("")  # the stages' sum
    expect(label("Per day")).to_have_value("500")
    expect(label("Caps' time zone")).to_have_value("Europe/Berlin")
    expect(label("Cap per offerwall")).to_have_value("1000")
    expect(label("Starts on")).to_have_value("2031-12-24")
    looked_at(designer, "live-ops-editor")

    # A pooled mission that makes its pool by name.
    new_mission(designer, portal.url, game_id, "Duel of the day", "DUEL")
    label("Payout (USD)").fill("0.5")
    expect(designer.get_by_test_id("new-pool")).to_have_count(0)
    label("Pool").fill("daily-pvp")
    label("Pool").press("Tab")
    expect(designer.get_by_test_id("new-pool")).to_contain_text("New pool “daily-pvp”")
    label("Missions each player sees").fill("2")
    label("Pool's time zone").fill("UTC")
    looked_at(designer, "live-ops-new-pool")
    designer.get_by_role("button", name="Save mission").click()
    expect(designer.get_by_text("Mission “Duel of the day” created.")).to_be_visible()
    expect(designer.get_by_role("heading", name="Edit mission")).to_be_visible()
    with Session(portal.engine()) as db:
        pool = db.exec(select(MissionPool).where(MissionPool.game_id == game_id)).one()
        assert (pool.name, pool.size, pool.every, pool.time_zone) == ("daily-pvp", 2, "day", "UTC")
    assert stored(portal, "Duel of the day").pool == "daily-pvp"
    expect(label("Pool")).to_have_value("daily-pvp")
    expect(designer.get_by_test_id("new-pool")).to_have_count(0)  # the game's pool now

    # A quest that starts later; a pooled mission is not offered to it.
    designer.goto(portal.url + f"/studio/quest?game={game_id}")
    expect(designer.get_by_role("heading", name="New quest")).to_be_visible()
    expect(designer.get_by_test_id("editor-fieldset")).to_have_attribute("aria-busy", "false")
    label("Name").fill("Winter season")
    label("Destination URL").fill("https://live.example/season")
    label("Starts on").fill("2031-12-24")
    expect(designer.get_by_text("Duel of the day")).to_have_count(0)
    designer.get_by_role("button", name="Add", exact=True).click()
    expect(designer.get_by_test_id("quest-mission")).to_have_text(re.compile("Daily duels"))
    designer.get_by_role("button", name="Save quest").click()
    expect(designer.get_by_text("Quest “Winter season” created.")).to_be_visible()
    expect(label("Starts on")).to_have_value("2031-12-24")

    # A daily mission at its cap for today, clicked once this period.
    [capped] = import_missions(
        portal,
        game_id,
        mission(
            "Capped daily",
            "WIN",
            recurrence={"every": "day"},
            periodCaps={"day": 1, "timeZone": "UTC"},
        ),
    )
    click_mission(portal, capped["id"], approved_wall(portal, "Live Wall"), "player-1")
    with portal.setting_up() as (session, _):
        day = Period("day").key(utcnow())
        session.add(CapCount(mission_id=capped["id"], scope="", period=f"day:{day}", count=1))

    designer.goto(portal.url + f"/studio/missions?game={game_id}")
    rows = designer.get_by_test_id("offer-row")
    daily_row = rows.filter(has_text="Daily duels")
    expect(daily_row.get_by_test_id("live-recurring")).to_have_text("Daily · America/New_York")
    expect(daily_row.get_by_test_id("live-stages")).to_have_text("3 stages")
    expect(daily_row.get_by_test_id("live-scheduled")).to_have_text("Starts 24 Dec 2031")
    expect(daily_row.get_by_test_id("period-figures")).to_have_text(["0 · 0 · 0", "0 · 0 · 0"])
    quest_row = rows.filter(has=designer.get_by_role("link", name="Winter season"))
    expect(quest_row.get_by_test_id("live-scheduled")).to_have_text("Starts 24 Dec 2031")
    pooled_row = rows.filter(has_text="Duel of the day")
    expect(pooled_row.get_by_test_id("live-pool")).to_have_text("Pool daily-pvp · daily")
    capped_row = rows.filter(has_text="Capped daily")
    expect(capped_row.get_by_test_id("live-full")).to_have_text(
        re.compile(r"^Full · reopens \d{1,2} [A-Z][a-z]{2}$")
    )
    expect(capped_row.get_by_test_id("per-period")).to_contain_text("Today")
    expect(capped_row.get_by_test_id("period-figures").first).to_have_text("1 · 0 · 0")
    looked_at(designer, "live-ops-missions")


# Each of the missions list's badges that reaches past its cell or the list's edges.
BADGES_PAST = """() => [...document.querySelectorAll('[data-testid^="live-"]')].filter(b => {
  const r = b.getBoundingClientRect();
  const cell = b.closest('td').getBoundingClientRect();
  const list = b.closest('.qw-cards').getBoundingClientRect();
  return r.right > Math.min(cell.right, list.right) + 0.5 || r.left < list.left - 0.5;
}).map(b => b.textContent)"""


def test_the_lists_long_badges_stay_inside_their_rows(portal, new_page):
    """The list is loaded once and looked at on a laptop and on a phone: its layout
    follows the width in CSS alone, so the resized page is the one a phone would open."""
    designer, game_id, _, _ = designer_with_game(
        portal, new_page, "Long Badges", width=LAPTOP[0], height=LAPTOP[1]
    )
    zone = "America/Argentina/ComodRivadavia"
    import_missions(
        portal,
        game_id,
        mission(
            "Weekly far away",
            "WIN",
            recurrence={"every": "week", "weekStartsOn": "wednesday", "timeZone": zone},
        ),
        mission(
            "Daily far away",
            "WIN",
            recurrence={"every": "day", "timeZone": zone},
            startDate="2031-12-24T15:00:00+00:00",
        ),
    )
    designer.goto(portal.url + f"/studio/missions?game={game_id}")
    expect(designer.get_by_test_id("live-recurring")).to_have_text(
        [f"Weekly from Wednesday · {zone}", f"Daily · {zone}"]
    )
    expect(designer.get_by_test_id("live-scheduled")).to_have_text("Starts 24 Dec 2031 15:00")
    designer.wait_for_load_state("networkidle")
    view = designer.locator(".qw-cards .rt-ScrollAreaViewport")
    for width, height in (LAPTOP, PHONE):
        designer.set_viewport_size({"width": width, "height": height})
        # The badges are still there after the resize: the phone's cards show them too.
        expect(designer.get_by_test_id("live-scheduled")).to_be_visible()
        assert designer.evaluate(BADGES_PAST) == [], f"badges past their rows at {width} px"
        # Nor does the list scroll sideways to show them.
        assert view.evaluate("v => v.scrollWidth <= v.clientWidth"), (
            f"the list scrolls at {width} px"
        )
        looked_at(designer, f"missions-long-badges-{width}", sizes=((width, height),))
