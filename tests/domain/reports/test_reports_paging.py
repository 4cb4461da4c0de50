"""A report cut into pages in SQL (`reports.build_report` with `limit`, as the reporting API
calls it, and `reports.paged_report`, the portal's reports page): a sub value with 100,000
distinct values gives one page of rows, its totals and its row count still over every
group; pages put together are the whole report, in its order, for every grouping (SQLite
and PostgreSQL)."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from api.accounts import Account
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate, new_session, write_session
from api.reports import figures as reports
from api.reports import reporting_api
from models import Offerwall, Role
from models.tables import click as _click
from models.types import utcnow
from tests.conftest import MASTER_KEY
from tests.factories import (
    ANDROID_UA,
    make_account,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_paying_offerwall,
    today,
)

MANY = 100_000


@dataclass(frozen=True)
class Crowd:
    wall: Offerwall
    mission: str


def _build_crowd(engine: Engine, box: SecretBox) -> Crowd:
    """Three converted clicks ($1.50 with sub1 "top-b", $1.505 with "top-a" and "top-c")
    and 100,000 unconverted clicks, each with its own sub1 ("s000000" …), inserted in bulk;
    every other one started. 100 Gems per USD, no decimals."""
    game = make_game(engine, box, "Crowded").game_id
    mission = make_mission(engine, game, title="Crowded mission").id
    wall = make_paying_offerwall(engine, box, name="Crowd wall")
    make_conversion(
        engine, mission_id=mission, offerwall=wall, uid="t1", subs=("top-b", None, None)
    )
    for uid, sub in (("t2", "top-a"), ("t3", "top-c")):
        make_conversion(
            engine,
            mission_id=mission,
            offerwall=wall,
            uid=uid,
            subs=(sub, None, None),
            payout_micros=1_505_000,
        )
    player = make_click(
        engine, offer_id=mission, offerwall=wall, uid="crowd", subs=(None, None, None)
    ).platform_user_id
    now = utcnow()
    rows = [
        {
            "offerwall_id": wall.id,
            "mission_id": mission,
            "platform_user_id": player,
            "uid": "crowd",
            "sub1": f"s{i:06d}",
            "ip": "203.0.113.7",
            "user_agent": "test",
            "started": i % 2 == 0,
            "created_at": now,
        }
        for i in range(MANY)
    ]
    with write_session(engine) as session:
        session.execute(_click.insert(), rows)
    return Crowd(wall, mission)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def crowded(request, tmp_path_factory) -> Iterator[tuple[Engine, Crowd]]:
    """The crowd in a database of its own, built once for this module on each database
    (100,000 rows take 6 s on SQLite and 14 s on PostgreSQL): the tests that use it only
    read it, and `crowd` checks after each of them that every table holds the rows it held."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("crowd") / "crowd.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        engine = build_engine(f"sqlite:///{path}")
        yield engine, _build_crowd(engine, SecretBox([MASTER_KEY]))
        engine.dispose()
        return
    server = make_url(request.getfixturevalue("postgres_server_url"))
    name = f"questwall_crowd_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        migrate(url)
        engine = build_engine(url)
        yield engine, _build_crowd(engine, SecretBox([MASTER_KEY]))
        engine.dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            table.name: conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            for table in SQLModel.metadata.sorted_tables
        }


@pytest.fixture
def crowd(crowded: tuple[Engine, Crowd]) -> Iterator[tuple[Engine, Crowd]]:
    """The module's crowd; a test that wrote to it would fail here, before the next one
    reads what it left."""
    engine, _ = crowded
    before = _row_counts(engine)
    yield crowded
    assert _row_counts(engine) == before, "a test wrote to the shared crowd"


def _page(engine: Engine, wall: Offerwall, limit: int, offset: int, statements: list[str]):
    def record(*args) -> None:
        statements.append(args[2])

    query = reporting_api.ReportQuery(today(), today(), "sub1", limit, offset)
    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        with new_session(engine) as session:
            return reporting_api.report_page(session=session, offerwall_id=wall.id, query=query)
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def test_a_page_of_100000_sub_values_is_cut_in_sql_with_totals_over_every_row(crowd):
    engine, crowd = crowd
    statements: list[str] = []
    page = _page(engine, crowd.wall, 5, 0, statements)
    # Largest payout first, then clicks, then the label: the converted ones, then "(none)"
    # (the "crowd" player's own click has no sub1) and the first of the crowd.
    assert [(r["key"], r["payout"], r["payoutUsd"]) for r in page["data"]] == [
        ("top-a", 151.0, 1.505),
        ("top-c", 151.0, 1.505),
        ("top-b", 150.0, 1.5),
        ("", 0.0, 0.0),
        ("s000000", 0.0, 0.0),
    ]
    assert page["total"] == MANY + 4
    totals = page["totals"]
    assert (totals["clicks"], totals["conversions"], totals["payout"]) == (MANY + 4, 3, 452.0)
    assert totals["payoutUsd"] == pytest.approx(4.51)
    assert totals["conversionRate"] == round(100 * 3 / (MANY + 4), 1)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert any("LIMIT" in s.upper() for s in selects), "the page is not cut in SQL"

    deep = _page(engine, crowd.wall, 3, 60_004, [])
    assert [(r["key"], r["clicks"]) for r in deep["data"]] == [
        ("s060000", 1),
        ("s060001", 1),
        ("s060002", 1),
    ]
    assert (deep["total"], deep["totals"]) == (page["total"], totals)
    assert _page(engine, crowd.wall, 3, MANY + 4, [])["data"] == []


def _portal_page(engine: Engine, page: int, statements: list[str]) -> reports.ReportPage:
    """A page of the crowd's report per sub1 as the portal's reports page asks for it
    (staff, today)."""

    def record(*args) -> None:
        statements.append(args[2])

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        with new_session(engine) as session:
            return reports.paged_report(
                session=session,
                account=make_account(Role.STAFF),
                dimension="sub1",
                first=today(),
                last=today(),
                page=page,
            )
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def test_the_reports_page_opens_a_sub_value_of_100000_values_as_one_page(crowd):
    engine, _ = crowd
    statements: list[str] = []
    first = _portal_page(engine, 1, statements)
    rows, pages = MANY + 4, -(-(MANY + 4) // reports.PAGE_ROWS)
    assert (first.page, first.pages, first.report.count) == (1, pages, rows)
    assert len(first.report.rows) == reports.PAGE_ROWS
    assert [r.key for r in first.report.rows[:5]] == ["top-a", "top-c", "top-b", "", "s000000"]
    totals = first.report.totals
    assert (totals.clicks, totals.conversions, totals.payout_micros) == (rows, 3, 4_510_000)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert any("LIMIT" in s.upper() for s in selects), "the page is not cut in SQL"
    # The next page goes on where it ended; the last holds the rest; past it is the last.
    second = _portal_page(engine, 2, [])
    assert second.report.rows[0].key == f"s{reports.PAGE_ROWS - 4:06d}"
    last = _portal_page(engine, pages, [])
    assert len(last.report.rows) == rows - (pages - 1) * reports.PAGE_ROWS
    assert last.report.rows[-1].key == f"s{MANY - 1:06d}"
    beyond = _portal_page(engine, pages + 7, [])
    assert (beyond.page, beyond.report.rows) == (pages, last.report.rows)
    assert _portal_page(engine, 0, []).report.rows == first.report.rows
    assert second.report.totals == last.report.totals == totals


@pytest.fixture
def mixed(engine: Engine, box: SecretBox) -> Offerwall:
    """Ties to order: two missions named alike, one click each, sub values equal to a
    label ("(none)"), empty and missing ones, and conversions of two payouts."""
    game = make_game(engine, box, "Mixed").game_id
    same = [make_mission(engine, game, title="Same title").id for _ in range(2)]
    other = make_mission(engine, game, title="Another", payout="1.505").id
    wall = make_paying_offerwall(engine, box, name="Mixed wall")
    subs = [("(none)", None, None), ("", "x", None), (None, None, "z"), ("b", "x", None)]
    for n, mission in enumerate([*same, other, other]):
        make_click(engine, offer_id=mission, offerwall=wall, uid=f"m{n}", subs=subs[n])
    make_conversion(engine, mission_id=other, offerwall=wall, uid="c1", payout_micros=1_505_000)
    make_conversion(engine, mission_id=same[0], offerwall=wall, uid="c2", user_agent=ANDROID_UA)
    return wall


@pytest.mark.parametrize("role", [Role.STAFF, Role.PUBLISHER])
def test_pages_put_together_are_the_whole_report_in_its_order(engine, mixed, role):
    account: Account = make_account(role, offerwall_id=mixed.id)
    first = today() - timedelta(days=2)

    def build(dimension: str, **page: int) -> reports.Report:
        with new_session(engine) as session:
            return reports.build_report(
                session=session,
                account=account,
                dimension=dimension,
                first=first,
                last=today(),
                **page,
            )

    for dimension in reports.dimensions_for(role):
        whole = build(dimension)
        pages = [build(dimension, limit=2, offset=at) for at in range(0, len(whole.rows) + 2, 2)]
        assert [r for p in pages for r in p.rows] == whole.rows, dimension
        assert all(p.count == len(whole.rows) for p in pages), dimension
        assert all(p.totals == whole.totals for p in pages), dimension
