"""Reports → Margin in the real portal: staff's totals and table of revenue, payout and
margin, the grouping and date range, the CSV download and the staff endpoint with the
portal's session, at 1366 px and 390 px; publishers never see revenue or margin."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Page, expect

from api.core.db import new_session
from api.reports import margin
from models import ConversionStatus, Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from tests.e2e.conftest import screenshot
from tests.e2e.reports.test_portal_reports import (
    DESKTOP,
    PHONE,
    staff_signed_in,
)
from tests.e2e.steps import approved_publisher_signed_in, convert
from tests.factories import make_account

pytestmark = pytest.mark.e2e


def economics(portal, uid: str, **values) -> None:
    """Give the player's conversion the economics the conversion stores (its revenue,
    country, status, promotion), in the server's database."""
    with portal.setting_up() as (session, _box):
        clicks = sa.select(_click.c.id).where(_click.c.uid == uid).scalar_subquery()
        session.execute(
            sa.update(_conversion).where(_conversion.c.click_id.in_(clicks)).values(**values)
        )


def totals_now(portal, by: str, first, last) -> margin.MarginRow:
    """The totals the page should show (other tests share this portal's database)."""
    engine = portal.engine()
    try:
        with new_session(engine) as session:
            return margin.build_margin(
                session=session, account=make_account(Role.STAFF), by=by, first=first, last=last
            ).totals
    finally:
        engine.dispose()


def no_sideways_scroll(page: Page, name: str) -> None:
    for width, height in (DESKTOP, PHONE):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)
        screenshot(page, f"{name}-{width}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{name} scrolls sideways at {width}px"
    page.set_viewport_size({"width": DESKTOP[0], "height": DESKTOP[1]})


def test_staff_read_revenue_payout_and_margin_and_download_them(portal, new_page):
    staff, publisher = new_page(*DESKTOP), new_page()
    staff_signed_in(staff, portal)
    wall = approved_publisher_signed_in(portal, publisher, "Margin Wall")
    for uid in ("mg-1", "mg-2", "mg-3", "mg-4"):
        convert(portal, wall.owid, uid)  # $2 payout each
    economics(portal, "mg-1", revenue_micros=5_000_000, country="US")
    economics(
        portal,
        "mg-2",
        revenue_micros=2_500_000,
        country="IS",  # a country no other test converts in
        status=ConversionStatus.PENDING,
        multiplier=200,
        promotion="Double gems",
    )
    economics(portal, "mg-3", revenue_micros=None, country=None)  # before revenue existed
    economics(portal, "mg-4", revenue_micros=9_000_000, status=ConversionStatus.REJECTED)

    staff.get_by_role("link", name="Reports").click()
    staff.get_by_test_id("report-tabs").get_by_role("link", name="Margin").click()
    expect(staff).to_have_url(re.compile(r"/reports/margin/?$"))
    expect(staff.get_by_label("Group")).to_have_value("day")
    staff.get_by_role("button", name="Last 7 days").click()
    today = datetime.now(UTC).date()
    first = today - timedelta(days=6)
    expect(staff.get_by_label("From", exact=True)).to_have_value(first.isoformat())
    rows = staff.get_by_test_id("margin-row")
    expect(rows).to_have_count(7)  # every day of the range

    totals = totals_now(portal, "day", first, today)
    expect(staff.get_by_test_id("margin-revenue")).to_have_text(f"${totals.revenue_usd:,.2f}")
    expect(staff.get_by_test_id("margin-payout")).to_have_text(f"${totals.payout_usd:,.2f}")
    expect(staff.get_by_test_id("margin-margin")).to_contain_text(f"{abs(totals.margin_usd):,.2f}")
    no_sideways_scroll(staff, "margin-days")

    # Per offerwall: ours is approved $5 + held $2.50 + $0, for 3 × $2; the rejected one
    # is left out.
    staff.get_by_label("Group").select_option("offerwall")
    ours = rows.filter(has_text="Margin Wall")
    expect(ours.get_by_role("cell")).to_have_text(
        ["Margin Wall", "3", "1", "$7.50", "$6.00", "$1.50", "20.0%"]
    )
    # Per country: the conversion without a country, and without revenue, has no share.
    staff.get_by_label("Group").select_option("country")
    expect(rows.filter(has_text="Iceland (IS)").get_by_role("cell")).to_have_text(
        ["Iceland (IS)", "1", "1", "$2.50", "$2.00", "$0.50", "20.0%"]
    )
    expect(rows.filter(has_text="unknown").first).to_be_visible()
    total = staff.get_by_test_id("margin-total")
    country_totals = totals_now(portal, "country", first, today)
    expect(total.get_by_role("cell").nth(2)).to_have_text(f"${country_totals.revenue_usd:,.2f}")
    no_sideways_scroll(staff, "margin-countries")

    # The CSV: the same rows, totals that are their exact sum.
    with staff.expect_download() as download:
        staff.get_by_role("button", name="Export CSV").click()
    assert re.fullmatch(r"questwall-margin-country-[\d-]+\.csv", download.value.suggested_filename)
    text = Path(download.value.path()).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "country,conversions,held,revenue_usd,payout_usd,margin_usd,margin_percent"
    assert "Iceland (IS),1,1,2.500000,2.000000,0.500000,20.0" in lines
    assert lines[-1].startswith(f"Total,{country_totals.conversions},")

    # The staff endpoint answers the signed-in staff browser with the same figures.
    answer = staff.evaluate(
        """async (q) => { const r = await fetch('/staff/reports/margin?' + q);
        return {status: r.status, body: await r.json()} }""",
        f"by=country&from={first}&to={today}",
    )
    assert answer["status"] == 200
    assert answer["body"]["totals"]["revenueMicros"] == country_totals.revenue_micros
    bad = staff.evaluate("async () => (await fetch('/staff/reports/margin?by=os')).status")
    assert bad == 400

    # The publisher: their reports show the currency given, with and without the
    # promotion, and never revenue, spend or margin; no Margin tab, no margin endpoint.
    publisher.get_by_role("link", name="Reports").click()
    publisher.get_by_label("Group").select_option("offer")
    expect(publisher.get_by_test_id("report-row").first).to_be_visible()
    headers = publisher.get_by_role("columnheader")
    expect(headers.filter(has_text="Currency given")).to_have_count(1)
    page_text = publisher.locator("main").inner_text().lower()
    for word in ("revenue", "margin", "spend"):
        assert word not in page_text
    expect(publisher.get_by_test_id("report-tabs")).to_have_count(0)
    refused = publisher.evaluate("async () => (await fetch('/staff/reports/margin')).status")
    assert refused == 403
    publisher.goto(portal.url + "/reports/margin")
    expect(publisher).not_to_have_url(re.compile(r"/reports/margin"))
    screenshot(publisher, "margin-publisher-refused")
