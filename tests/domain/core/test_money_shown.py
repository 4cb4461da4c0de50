"""Money as people read it (`api/core/money.py`): one function writes every amount
shown, rounded half-up as postbacks round, so a $1.505 payout reads $1.51 on the offer
preview, the publisher's catalog and delivery log, the conversions list, the reports and
their CSV, and the wall (SQLite and PostgreSQL)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from decimal import Decimal

import pytest
from sqlalchemy import Engine

from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.core.money import format_money, format_usd, in_currency
from api.listing import catalog, offer_preview
from api.postbacks import delivery_log as deliveries
from api.publishers import offerwalls
from api.reports import figures as reports
from api.reports import to_csv
from api.wall.i18n import Language
from models import Mission, Offerwall, Role
from models.types import utcnow
from portal.listing.state import catalog_card
from portal.missions.offer_editing import preview_card
from portal.postbacks.state import delivery_line
from portal.reports.reports_state import report_line
from portal.state.rows import conversion_line
from tests.factories import (
    make_account,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    today,
)


def test_a_half_cent_rounds_up_as_postbacks_round_it():
    assert format_usd(1_505_000) == "$1.51"
    assert format_money(Decimal("1.505")) == "$1.51"
    assert format_money(Decimal("1234.505")) == "$1,234.51"
    assert format_money(Decimal("-1.505")) == "-$1.51"
    assert format_money(Decimal("1234.505"), plain=True) == "1234.51"
    # A one-decimal currency: 15.05 is 15.1, as the postback's {payout} is.
    assert in_currency(1_505_000, exchange_rate=10, decimals=1) == Decimal("15.1")
    assert format_money(Decimal("15.05"), decimals=1, code="TKN") == "15.1 TKN"
    assert format_money(Decimal("1502.25"), decimals=1, code="TKN") == "1,502.3 TKN"
    assert format_money(Decimal("150"), decimals=0, code="GEM") == "150 GEM"


def test_the_wall_rounds_as_postbacks_do_and_groups_the_languages_way():
    # Babel alone would round half to even: 15.0 and 1.502,2.
    assert Language("en").amount(Decimal("15.05"), 1) == "15.1"
    assert Language("de").amount(Decimal("1502.25"), 1) == "1.502,3"


@dataclass(frozen=True)
class Odd:
    mission: Mission
    wall: Offerwall


@pytest.fixture
def odd(engine: Engine, box: SecretBox) -> Odd:
    """A $1.505 mission converted once through an offerwall paying 10 tokens per USD,
    rounded to one decimal (15.05 tokens: the postback carries 15.1)."""
    game = make_game(engine, box, "Odd game").game_id
    mission = make_mission(engine, game, title="Odd payout", payout="1.505")
    wall, _ = make_offerwall(engine, box, name="Token wall")
    with write_session(engine) as session:
        wall = offerwalls.set_currency(
            session=session,
            offerwall=offerwalls.get_offerwall(session=session, ref=wall.id),
            name="Tokens",
            code="TKN",
            exchange_rate=10,
            decimals=1,
        )
    make_conversion(
        engine, mission_id=mission.id, offerwall=wall, uid="o1", payout_micros=1_505_000
    )
    return Odd(mission, wall)


def test_the_editors_preview_shows_the_payout_rounded_up(odd):
    preview = offer_preview(odd.mission, base_url="https://qw.example")
    assert preview_card(preview).payout == "$1.51"


def test_the_publishers_catalog_and_delivery_log_round_as_the_postback(engine, odd):
    publisher = make_account(Role.PUBLISHER, offerwall_id=odd.wall.id)
    with new_session(engine) as session:
        (offer,) = catalog.offer_catalog(
            session=session, account=publisher, base_url="https://qw.example", now=utcnow()
        )
        (delivery,) = deliveries.delivery_log(session=session, offerwall=odd.wall).rows
    card = catalog_card(offer)
    assert (card.payout, card.payout_usd) == ("15.1 TKN", "$1.51")
    assert delivery_line(delivery).payout == "15.1 TKN"


def test_the_conversions_list_shows_dollars_rounded_up(engine, odd):
    with new_session(engine) as session:
        (row,) = conversions.search(session=session, studio_id=None).rows
    assert conversion_line(row).payout == "$1.51"


def test_the_report_and_its_csv_round_a_half_cent_up(engine, odd):
    publisher = make_account(Role.PUBLISHER, offerwall_id=odd.wall.id)
    with new_session(engine) as session:
        report = reports.build_report(
            session=session, account=publisher, dimension="offer", first=today(), last=today()
        )
    (row,) = [report_line(r, report.currency) for r in report.rows]
    assert (row.payout, row.epc, row.net_payout) == ("$1.51", "$1.51", "$1.51")
    assert (row.payout_local, row.epc_local) == ("15.1 TKN", "15.10 TKN")
    (line, total) = csv.DictReader(io.StringIO(to_csv(report, "offer")))
    assert (line["payout_usd"], line["epc_usd"], line["net_payout_usd"]) == (
        "1.51",
        "1.5050",
        "1.51",
    )
    assert (line["payout_tkn"], line["epc_tkn"], total["net_payout_tkn"]) == (
        "15.1",
        "15.10",
        "15.1",
    )
