"""Staff's margin report (`api/reports/margin.py`) and its CSV: revenue, payout and margin
of the approved and held conversions per day, game, mission, offerwall and country, with
totals that are the rows' sums exactly; who may read it; and what the other reports show
of the same conversions: designers their games' spend, publishers the currency given with
and without promotions and never revenue (SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Forbidden
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.reports import figures as reports
from api.reports import margin, to_csv
from api.reports.csv_export import margin_csv
from api.reports.ranges import ReportError
from models import ConversionStatus, Offerwall, Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from portal.reports.reports_state import report_line
from tests.factories import (
    make_account,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_paying_offerwall,
    make_studio,
    today,
)

STAFF = make_account(Role.STAFF)


def first() -> date:
    return today() - timedelta(days=4)


def convert(
    engine: Engine,
    *,
    mission_id: str,
    wall: Offerwall,
    uid: str,
    payout_micros: int,
    revenue_micros: int | None,
    country: str | None = "US",
    status: str = ConversionStatus.APPROVED,
    multiplier: int = 100,
    promotion: str | None = None,
    day: date | None = None,
    test: bool = False,
) -> None:
    """A conversion with the economics of its moment stored as the conversion stores them
    (`Conversion.revenue_micros`, `country`, `promotion`, `multiplier`), on `day` at noon."""
    make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=uid)
    values: dict[str, Any] = {
        "payout_micros": payout_micros,
        "revenue_micros": revenue_micros,
        "country": country,
        "status": status,
        "multiplier": multiplier,
        "promotion": promotion,
        "test": test,
    }
    if day is not None:
        values["created_at"] = datetime.combine(day, time(12), tzinfo=UTC)
    with write_session(engine) as session:
        clicks = sa.select(_click.c.id).where(_click.c.uid == uid).scalar_subquery()
        if day is not None:
            session.execute(
                sa.update(_click).where(_click.c.uid == uid).values(created_at=values["created_at"])
            )
        session.execute(
            sa.update(_conversion).where(_conversion.c.click_id.in_(clicks)).values(**values)
        )


@dataclass(frozen=True)
class Sales:
    """Studio A's "Arena A" (mission "Win", $1.60 revenue) and studio B's "Arena B"
    (mission "Conquer", $3.333333), through "Gem wall" (100 GEM per USD) and "Dollar wall".

    In range: Win/Gem/US $1.00 approved; Win/Gem/DE $1.20 held; Win/Dollar/no country
    $0.50 approved without revenue (from before revenue existed); Conquer/Dollar/US $2.00
    approved two days ago under a 2.5× promotion. Left out: a rejected and a reversed Win
    (revenue $9 each), a test conversion and one from ten days ago."""

    studio_a: str
    game_a: str
    game_b: str
    win: str
    conquer: str
    gem_wall: Offerwall
    dollar_wall: Offerwall
    dollar_key: str


def make_sales(engine: Engine, box: SecretBox) -> Sales:
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Arena A", studio_id=studio_a).game_id
    game_b = make_game(engine, box, "Arena B", studio_id=studio_b).game_id
    win = make_mission(engine, game_a, title="Win", payout="1.00").id
    conquer = make_mission(engine, game_b, title="Conquer", payout="2.00").id
    gem = make_paying_offerwall(engine, box, name="Gem wall")
    dollar, key = make_offerwall(engine, box, name="Dollar wall")
    assert key is not None
    two_days_ago = today() - timedelta(days=2)
    sale = {"wall": gem, "mission_id": win}
    convert(engine, **sale, uid="w1", payout_micros=1_000_000, revenue_micros=1_600_000)
    convert(
        engine,
        **sale,
        uid="w2",
        payout_micros=1_200_000,
        revenue_micros=1_600_000,
        country="DE",
        status=ConversionStatus.PENDING,
    )
    convert(
        engine,
        mission_id=win,
        wall=dollar,
        uid="w3",
        payout_micros=500_000,
        revenue_micros=None,
        country=None,
    )
    convert(
        engine,
        mission_id=conquer,
        wall=dollar,
        uid="c1",
        payout_micros=2_000_000,
        revenue_micros=3_333_333,
        multiplier=250,
        promotion="Weekend sale",
        day=two_days_ago,
    )
    big = {"payout_micros": 1_000_000, "revenue_micros": 9_000_000}
    convert(engine, **sale, **big, uid="x1", status=ConversionStatus.REJECTED)
    convert(engine, **sale, **big, uid="x2", status=ConversionStatus.REVERSED)
    convert(engine, **sale, **big, uid="x3", test=True)
    convert(engine, **sale, **big, uid="x4", day=today() - timedelta(days=10))
    return Sales(studio_a, game_a, game_b, win, conquer, gem, dollar, key)


@pytest.fixture
def sales(engine: Engine, box: SecretBox) -> Sales:
    return make_sales(engine, box)


def _margin(engine: Engine, by: str, account=STAFF) -> margin.MarginReport:
    with new_session(engine) as session:
        return margin.build_margin(
            session=session, account=account, by=by, first=first(), last=today()
        )


def _figures(row: margin.MarginRow) -> tuple[str, int, int, int, int, str | None]:
    percent = row.margin_percent
    return (
        row.label,
        row.conversions,
        row.revenue_micros,
        row.payout_micros,
        row.margin_micros,
        None if percent is None else f"{percent}",
    )


def test_per_game_revenue_payout_and_margin_of_approved_and_held_conversions(engine, sales):
    report = _margin(engine, "game")
    # Largest revenue first; A's held conversion counts, its rejected and reversed do not.
    assert [_figures(r) for r in report.rows] == [
        ("Arena B", 1, 3_333_333, 2_000_000, 1_333_333, "40.0"),
        ("Arena A", 3, 3_200_000, 2_700_000, 500_000, "15.6"),
    ]
    assert [r.key for r in report.rows] == [sales.game_b, sales.game_a]
    assert [r.held for r in report.rows] == [0, 1]
    assert _figures(report.totals) == ("Total", 4, 6_533_333, 4_700_000, 1_833_333, "28.1")


def test_per_country_an_unknown_country_and_no_revenue_leave_the_share_blank(engine, sales):
    report = _margin(engine, "country")
    assert [_figures(r) for r in report.rows] == [
        ("United States (US)", 2, 4_933_333, 3_000_000, 1_933_333, "39.2"),
        ("Germany (DE)", 1, 1_600_000, 1_200_000, 400_000, "25.0"),
        # The conversion from before revenue existed: revenue 0, a negative margin, no %.
        ("unknown", 1, 0, 500_000, -500_000, None),
    ]
    assert [r.key for r in report.rows] == ["US", "DE", "??"]


def test_per_day_every_day_of_the_range_on_the_conversions_own_day(engine, sales):
    report = _margin(engine, "day")
    days = {r.key: (r.conversions, r.revenue_micros, r.payout_micros) for r in report.rows}
    assert list(days) == [(first() + timedelta(days=n)).isoformat() for n in range(5)]
    assert days[today().isoformat()] == (3, 3_200_000, 2_700_000)
    assert days[(today() - timedelta(days=2)).isoformat()] == (1, 3_333_333, 2_000_000)
    assert days[first().isoformat()] == (0, 0, 0)
    assert report.rows[0].margin_percent is None  # nothing that day


def test_per_mission_and_per_offerwall_are_named(engine, sales):
    missions = _margin(engine, "mission")
    assert [(r.key, r.label) for r in missions.rows] == [
        (sales.conquer, "Conquer"),
        (sales.win, "Win"),
    ]
    walls = _margin(engine, "offerwall")
    assert [_figures(r) for r in walls.rows] == [
        ("Dollar wall", 2, 3_333_333, 2_500_000, 833_333, "25.0"),
        ("Gem wall", 2, 3_200_000, 2_200_000, 1_000_000, "31.3"),
    ]


@pytest.mark.parametrize("by", margin.BY)
def test_the_totals_row_is_the_sum_of_the_rows_exactly(engine, sales, by):
    report = _margin(engine, by)
    t = report.totals
    assert t.conversions == sum(r.conversions for r in report.rows) == 4
    assert t.held == sum(r.held for r in report.rows) == 1
    assert t.revenue_micros == sum(r.revenue_micros for r in report.rows) == 6_533_333
    assert t.payout_micros == sum(r.payout_micros for r in report.rows) == 4_700_000
    assert t.margin_micros == sum(r.margin_micros for r in report.rows) == 1_833_333
    # The CSV's totals line is the sum of its rows' cells too, to the micro.
    lines = list(csv.reader(io.StringIO(margin_csv(report))))
    body, total = lines[1:-1], lines[-1]
    for column in (3, 4, 5):
        assert Decimal(total[column]) == sum(Decimal(line[column]) for line in body)


def test_the_csv_has_the_figures_to_the_micro_and_a_blank_share_without_revenue(engine, sales):
    text = margin_csv(_margin(engine, "country"))
    lines = text.splitlines()
    assert lines[0] == "country,conversions,held,revenue_usd,payout_usd,margin_usd,margin_percent"
    assert lines[1] == "United States (US),2,0,4.933333,3.000000,1.933333,39.2"
    assert lines[3] == "unknown,1,0,0.000000,0.500000,-0.500000,"
    assert lines[-1] == "Total,4,1,6.533333,4.700000,1.833333,28.1"


@pytest.mark.parametrize(
    "account",
    [
        make_account(Role.DESIGNER, studio_id="studio"),
        make_account(Role.PUBLISHER, offerwall_id="wall"),
        None,
    ],
    ids=["designer", "publisher", "signed-out"],
)
def test_only_staff_read_the_margin_report(engine, sales, account):
    with pytest.raises(Forbidden if account else Exception):
        _margin(engine, "game", account)


def test_an_unknown_grouping_is_refused(engine, sales):
    with pytest.raises(ReportError):
        _margin(engine, "os")


def _report(engine: Engine, account, dimension: str = "offer") -> reports.Report:
    with new_session(engine) as session:
        return reports.build_report(
            session=session, account=account, dimension=dimension, first=first(), last=today()
        )


def test_a_designer_sees_their_games_spend_of_approved_and_held_conversions(engine, sales):
    designer = make_account(Role.DESIGNER, studio_id=sales.studio_a)
    report = _report(engine, designer)
    # Win's approved $1.60, held $1.60 and the $0 of the one without revenue; the rejected
    # and reversed ones gave theirs back. Conversions still count as before (approved and
    # reversed since), so the held one is not among them.
    assert report.totals.spend_micros == 3_200_000
    assert report.totals.conversions == 3
    assert [(r.label, r.spend_micros) for r in report.rows] == [("Win", 3_200_000)]
    assert "spend_usd" in to_csv(report, "offer").splitlines()[0]
    assert _report(engine, STAFF).totals.spend_micros == 6_533_333


def test_a_publisher_sees_the_currency_given_with_and_without_promotions_never_revenue(
    engine, sales
):
    publisher = make_account(Role.PUBLISHER, offerwall_id=sales.dollar_wall.id)
    report = _report(engine, publisher)
    totals = report.totals
    assert totals.spend_micros is None
    # $2.00 at 2.5× is $5.00 given, $2.00 without the promotion; $0.50 without one.
    assert (totals.given_amount, totals.payout_amount, totals.promoted) == (
        Decimal("5.50"),
        Decimal("2.50"),
        1,
    )
    rows = {r.label: (r.given_amount, r.payout_amount, r.promoted) for r in report.rows}
    assert rows == {
        "Conquer": (Decimal("5.00"), Decimal("2.00"), 1),
        "Win": (Decimal("0.50"), Decimal("0.50"), 0),
    }
    text = to_csv(report, "offer")
    header = text.splitlines()[0].split(",")
    assert header[-3:] == [
        "currency_given",
        "currency_given_without_promotions",
        "promoted_conversions",
    ]
    assert text.splitlines()[-1].endswith(",5.50,2.50,1")
    for word in ("revenue", "spend", "margin"):
        assert word not in text.lower()
    # What the page is sent: no spend for a publisher, and no field for revenue at all.
    line = report_line(totals, None, report.amounts_in)
    assert line.spend == "" and (line.given, line.given_base, line.promoted) == (
        "$5.50",
        "$2.50",
        1,
    )
    assert not [f for f in vars(line) if "revenue" in f or "margin" in f]


def test_a_publisher_in_gems_gets_each_promoted_conversion_rounded_once(engine, sales):
    wall = sales.gem_wall
    convert(
        engine,
        mission_id=sales.win,
        wall=wall,
        uid="g1",
        payout_micros=1_000_000,
        revenue_micros=1_600_000,
        multiplier=150,
        promotion="Happy hour",
    )
    publisher = make_account(Role.PUBLISHER, offerwall_id=wall.id)
    totals = _report(engine, publisher).totals
    # w1 ($1 → 100 GEM), x2 (reversed since: counted, as the report counts it) and g1
    # ($1 × 1.5 → 150 GEM); w2 is held and x1 rejected: not counted.
    assert (totals.conversions, totals.payout_amount, totals.given_amount) == (
        3,
        Decimal(300),
        Decimal(350),
    )
    assert totals.promoted == 1
