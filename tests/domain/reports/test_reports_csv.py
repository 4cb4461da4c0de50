"""The reports' CSV read back as a spreadsheet reads it: by column name (csv.DictReader),
every row and the totals, for staff, a designer and a publisher, against the conversions
made (SQLite and PostgreSQL). Columns may move; their names and values may not."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Account
from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.reports import figures as reports
from api.reports import to_csv
from models import Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from tests.factories import (
    make_account,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_paying_offerwall,
    make_studio,
    today,
)

USD_COLUMNS = ["payout_usd", "epc_usd", "reversed_payout_usd", "net_payout_usd"]
GEM_COLUMNS = ["payout_gem", "epc_gem", "reversed_payout_gem", "net_payout_gem"]


@dataclass(frozen=True)
class Sales:
    studio_a: str
    wall_id: str


@pytest.fixture
def sales(engine: Engine, box: SecretBox) -> Sales:
    """Studio A: "Plain" ($1.50) clicked by a1–a3, a1 and a2 converted and a2's reversed
    since; "Odd" ($1.505) clicked and converted by a4. Studio B: "Big" ($4) converted by
    b1. All through one offerwall paying 100 Gems per USD without decimals."""
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Game A", studio_id=studio_a).game_id
    game_b = make_game(engine, box, "Game B", studio_id=studio_b).game_id
    plain = make_mission(engine, game_a, title="Plain", payout="1.50").id
    odd = make_mission(engine, game_a, title="Odd", payout="1.505").id
    big = make_mission(engine, game_b, title="Big", payout="4.00").id
    wall = make_paying_offerwall(engine, box, name="Gem wall")
    for uid in ("a1", "a2"):
        make_conversion(engine, mission_id=plain, offerwall=wall, uid=uid)
    make_click(engine, offer_id=plain, offerwall=wall, uid="a3")
    make_conversion(engine, mission_id=odd, offerwall=wall, uid="a4", payout_micros=1_505_000)
    make_conversion(engine, mission_id=big, offerwall=wall, uid="b1", payout_micros=4_000_000)
    with write_session(engine) as session:
        reversed_one = session.execute(
            sa.select(_conversion.c.transaction_id)
            .join(_click, _click.c.id == _conversion.c.click_id)
            .where(_click.c.uid == "a2")
        ).scalar_one()
        conversions.reverse(
            session=session,
            transaction_id=reversed_one,
            reason="chargeback",
            actor="staff@example.com",
            studio_id=None,
        )
    return Sales(studio_a, wall.id)


def _csv(engine: Engine, account: Account) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The per-offer CSV's column names and its rows by label (the totals as "Total")."""
    with new_session(engine) as session:
        report = reports.build_report(
            session=session, account=account, dimension="offer", first=today(), last=today()
        )
    reader = csv.DictReader(io.StringIO(to_csv(report, "offer")))
    rows = {row["offer"]: row for row in reader}
    assert reader.fieldnames is not None
    return list(reader.fieldnames), rows


def _figures(row: dict[str, str], columns: list[str]) -> tuple[str, ...]:
    return tuple(row[c] for c in ["clicks", "conversions", "reversed", *columns])


def test_staff_read_every_offer_and_the_totals_in_usd_by_column_name(engine, sales):
    names, rows = _csv(engine, make_account(Role.STAFF))
    assert not set(GEM_COLUMNS) & set(names)  # staff see USD only
    assert set(rows) == {"Plain", "Odd", "Big", "Total"}
    # clicks, conversions, reversed, payout, EPC, reversed payout, net payout (USD)
    assert _figures(rows["Plain"], USD_COLUMNS) == ("3", "2", "1", "3.00", "1.0000", "1.50", "1.50")
    # $1.505 is $1.51 in cents, as postbacks round; EPC keeps 4 decimals.
    assert _figures(rows["Odd"], USD_COLUMNS) == ("1", "1", "0", "1.51", "1.5050", "0.00", "1.51")
    assert _figures(rows["Big"], USD_COLUMNS) == ("1", "1", "0", "4.00", "4.0000", "0.00", "4.00")
    # $8.505 of payout over 5 clicks; $1.50 of it reversed.
    assert _figures(rows["Total"], USD_COLUMNS) == (
        "5", "4", "1", "8.51", "1.7010", "1.50", "7.01",
    )  # fmt: skip
    assert rows["Total"]["conversion_rate"] == "80.0%"
    assert rows["Plain"]["refused_clicks"] == "0"


def test_a_designer_reads_only_their_studios_offers(engine, sales):
    designer = make_account(Role.DESIGNER, studio_id=sales.studio_a)
    names, rows = _csv(engine, designer)
    assert not set(GEM_COLUMNS) & set(names)
    assert set(rows) == {"Plain", "Odd", "Total"}
    assert _figures(rows["Total"], USD_COLUMNS) == (
        "4", "3", "1", "4.51", "1.1263", "1.50", "3.01",
    )  # fmt: skip


def test_a_publisher_reads_usd_and_gems_as_their_postbacks_carried_them(engine, sales):
    publisher = make_account(Role.PUBLISHER, offerwall_id=sales.wall_id)
    names, rows = _csv(engine, publisher)
    assert set(USD_COLUMNS + GEM_COLUMNS) <= set(names)
    both = USD_COLUMNS + GEM_COLUMNS
    assert _figures(rows["Plain"], both) == (
        "3", "2", "1", "3.00", "1.0000", "1.50", "1.50", "300", "100.00", "150", "150",
    )  # fmt: skip
    # 150.5 Gems: the postback carried 151.
    assert _figures(rows["Odd"], both) == (
        "1", "1", "0", "1.51", "1.5050", "0.00", "1.51", "151", "151.00", "0", "151",
    )  # fmt: skip
    assert _figures(rows["Big"], both) == (
        "1", "1", "0", "4.00", "4.0000", "0.00", "4.00", "400", "400.00", "0", "400",
    )  # fmt: skip
    assert _figures(rows["Total"], both) == (
        "5", "4", "1", "8.51", "1.7010", "1.50", "7.01", "851", "170.20", "150", "701",
    )  # fmt: skip
