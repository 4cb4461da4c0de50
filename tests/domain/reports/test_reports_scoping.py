"""Reports are scoped by tenant in SQL (`reports._scope`): a designer sees only their
studio's offers, a publisher only their offerwall, staff everything, in every dimension
and in the CSV (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import pytest
from sqlalchemy import Engine

from api.accounts import Account
from api.core.crypto import SecretBox
from api.core.db import new_session
from api.reports import figures as reports
from api.reports import to_csv
from models import Offerwall, Role
from portal.reports.reports_state import report_line
from tests.factories import (
    make_account,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_quest,
    make_studio,
    mission_data,
    today,
)


def first() -> date:
    return today() - timedelta(days=1)


def last() -> date:
    return today() + timedelta(days=1)


@dataclass(frozen=True)
class Tenants:
    """Two studios with a mission each (studio A also a quest) and two offerwalls.

    Traffic: A's mission gets 2 clicks through wall 1 (one converts, from the US) and 1
    through wall 2; A's quest 1 click through wall 1; B's mission 1 click through wall 2
    (it converts, from Germany, at $4)."""

    studio_a: str
    studio_b: str
    mission_a: str
    quest_a: str
    mission_b: str
    wall_1: Offerwall
    wall_2: Offerwall


@pytest.fixture
def tenants(engine: Engine, box: SecretBox) -> Tenants:
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Arena A", studio_id=studio_a).game_id
    game_b = make_game(engine, box, "Arena B", studio_id=studio_b).game_id
    mission_a = make_mission(engine, game_a, title="Mission of A").id
    mission_b = make_mission(engine, game_b, title="Mission of B", payout="4.00").id
    quest_a = make_quest(engine, game_a, [mission_data(title="Step of A")], name="Quest of A").id
    wall_1, _ = make_offerwall(engine, box, name="Wall one")
    wall_2, _ = make_offerwall(engine, box, name="Wall two")

    make_conversion(engine, mission_id=mission_a, offerwall=wall_1, uid="a1")
    make_click(engine, offer_id=mission_a, offerwall=wall_1, uid="a2")
    make_click(engine, offer_id=mission_a, offerwall=wall_2, uid="a3")
    make_click(engine, kind="quest", offer_id=quest_a, offerwall=wall_1, uid="a4")
    make_conversion(
        engine,
        mission_id=mission_b,
        offerwall=wall_2,
        uid="b1",
        ip="198.51.100.9",
        payout_micros=4_000_000,
    )
    return Tenants(studio_a, studio_b, mission_a, quest_a, mission_b, wall_1, wall_2)


def _report(engine: Engine, account: Account, dimension: str, **kwargs) -> reports.Report:
    with new_session(engine) as session:
        return reports.build_report(
            session=session,
            account=account,
            dimension=dimension,
            first=first(),
            last=last(),
            **kwargs,
        )


def _totals(report: reports.Report) -> tuple[int, int, int, str]:
    t = report_line(report.totals, report.currency)
    return t.clicks, t.starts, t.conversions, t.payout


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
def test_a_designer_of_studio_b_sees_nothing_of_studio_a(engine, tenants, dimension):
    designer_b = make_account(Role.DESIGNER, studio_id=tenants.studio_b)
    report = _report(engine, designer_b, dimension)
    assert _totals(report) == (1, 1, 1, "$4.00")
    keys = {row.key for row in report.rows}
    assert not keys & {tenants.mission_a, tenants.quest_a, tenants.wall_1.id}
    if dimension == "offer":
        assert keys == {tenants.mission_b}
    if dimension == "offerwall":
        assert keys == {tenants.wall_2.id}
    if dimension == "country":
        assert keys == {"DE"}


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
def test_a_designer_of_studio_a_sees_its_missions_and_quests(engine, tenants, dimension):
    designer_a = make_account(Role.DESIGNER, studio_id=tenants.studio_a)
    report = _report(engine, designer_a, dimension)
    assert _totals(report) == (4, 4, 1, "$1.50")
    if dimension == "offer":
        assert {row.key for row in report.rows} == {tenants.mission_a, tenants.quest_a}


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
def test_a_designer_of_a_studio_without_games_sees_an_empty_report(engine, tenants, dimension):
    newcomer = make_account(Role.DESIGNER, studio_id=make_studio(engine, "Studio C"))
    report = _report(engine, newcomer, dimension)
    assert all(row.clicks == row.conversions == 0 for row in report.rows)
    assert (report.rows == []) == (dimension != "day")  # per day: every day, as zeros
    assert _totals(report) == (0, 0, 0, "$0.00")


@pytest.mark.parametrize("dimension", ["day", "offer"])
def test_a_designer_without_a_studio_sees_nothing(engine, box, tenants, dimension):
    """Not the games without a studio either (`studio_id IS NULL` would match them)."""
    orphan_game = make_game(engine, box, "No studio").game_id
    orphan = make_mission(engine, orphan_game, title="Mission of nobody").id
    make_conversion(engine, mission_id=orphan, offerwall=tenants.wall_1, uid="n1")
    report = _report(engine, make_account(Role.DESIGNER, studio_id=None), dimension)
    assert _totals(report) == (0, 0, 0, "$0.00")


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
def test_a_publisher_sees_only_their_offerwalls_traffic(engine, tenants, dimension):
    publisher = make_account(Role.PUBLISHER, offerwall_id=tenants.wall_2.id)
    report = _report(engine, publisher, dimension)
    assert _totals(report) == (2, 2, 1, "$4.00")
    keys = {row.key for row in report.rows}
    if dimension == "offer":
        assert keys == {tenants.mission_a, tenants.mission_b}
    if dimension == "offerwall":
        assert keys == {tenants.wall_2.id}


def test_a_publisher_naming_another_offerwall_still_gets_their_own(engine, tenants):
    publisher = make_account(Role.PUBLISHER, offerwall_id=tenants.wall_2.id)
    report = _report(engine, publisher, "offerwall", offerwall_id=tenants.wall_1.id)
    assert {row.key for row in report.rows} == {tenants.wall_2.id}


def test_staff_see_every_tenant_and_may_narrow_to_one_offerwall(engine, tenants):
    staff = make_account(Role.STAFF)
    assert _totals(_report(engine, staff, "offerwall")) == (5, 5, 2, "$5.50")
    narrowed = _report(engine, staff, "offer", offerwall_id=tenants.wall_1.id)
    assert {row.key for row in narrowed.rows} == {tenants.mission_a, tenants.quest_a}
    assert _totals(narrowed) == (3, 3, 1, "$1.50")


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
def test_the_csv_holds_only_what_the_report_shows(engine, tenants, dimension):
    designer_b = make_account(Role.DESIGNER, studio_id=tenants.studio_b)
    text = to_csv(_report(engine, designer_b, dimension), dimension)
    lines = text.splitlines()
    assert lines[0] == (
        f"{dimension},clicks,starts,conversions,conversion_rate,payout_usd,epc_usd,"
        "reversed,reversed_payout_usd,net_payout_usd,refused_clicks,spend_usd"
    )
    # A designer sees what their game spent (no revenue here): never a publisher.
    assert lines[-1] == "Total,1,1,1,100.0%,4.00,4.0000,0,0.00,4.00,0,0.00"
    assert "of A" not in text and "Wall one" not in text
    if dimension != "day":  # per day, every day of the range has its row
        assert len(lines) == 3  # the header, B's one row, the total


def test_the_csv_of_a_publisher_names_only_their_offerwall(engine, tenants):
    publisher = make_account(Role.PUBLISHER, offerwall_id=tenants.wall_1.id)
    text = to_csv(_report(engine, publisher, "offerwall"), "offerwall")
    assert "Wall one" in text and "Wall two" not in text
    # A publisher paid in US dollars has the USD columns only.
    assert text.splitlines()[-1] == "Total,3,3,1,33.3%,1.50,0.5000,0,0.00,1.50,0,1.50,1.50,0"
    assert "spend" not in text and "revenue" not in text


def test_a_designer_narrowing_to_one_offerwall_gets_that_offerwall_within_their_studio(
    engine, tenants
):
    designer_a = make_account(Role.DESIGNER, studio_id=tenants.studio_a)
    report = _report(engine, designer_a, "offerwall", offerwall_id=tenants.wall_2.id)
    assert {row.key for row in report.rows} == {tenants.wall_2.id}
    assert _totals(report) == (1, 1, 0, "$0.00")
