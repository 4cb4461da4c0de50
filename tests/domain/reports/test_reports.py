"""What a report shows (`api/reports/figures.py`): every day of the range (zeros
included), totals that are the sums of the rows, EPC, reversed and net payout, the game and
offer filters and who may use them, the publisher's own currency, the date presets and the
CSV (SQLite and PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.accounts import Account, Forbidden, NotApproved
from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.publishers import offerwalls
from api.reports import figures as reports
from api.reports import ranges, to_csv
from models import ConversionStatus, Offerwall, Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from portal.reports.reports_state import ReportLine, report_line
from tests.factories import (
    make_account,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_paying_offerwall,
    make_quest,
    make_studio,
    mission_data,
    today,
)


def first() -> date:
    """The reports' first day: four days before today."""
    return today() - timedelta(days=4)


STAFF = make_account(Role.STAFF)


@dataclass(frozen=True)
class Traffic:
    """Studio A's game: a $1.50 mission (3 clicks, 2 conversions, one of them two days
    ago) and a quest (1 click); studio B's game: a $4 mission (1 click, converted). All
    through one offerwall paying 100 Gems per USD without decimals."""

    studio_a: str
    studio_b: str
    game_a: str
    game_b: str
    mission_a: str
    quest_a: str
    step_a: str  # a mission inside the quest
    mission_b: str
    wall: Offerwall


def _move_to(engine: Engine, day: date, *, uid: str) -> None:
    """Move a player's click and its conversion to noon of another day."""
    noon = datetime.combine(day, time(12), tzinfo=UTC)
    with write_session(engine) as session:
        ids = sa.select(_click.c.id).where(_click.c.uid == uid).scalar_subquery()
        session.execute(sa.update(_click).where(_click.c.uid == uid).values(created_at=noon))
        session.execute(
            sa.update(_conversion).where(_conversion.c.click_id.in_(ids)).values(created_at=noon)
        )


@pytest.fixture
def traffic(engine: Engine, box: SecretBox) -> Traffic:
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Arena A", studio_id=studio_a).game_id
    game_b = make_game(engine, box, "Arena B", studio_id=studio_b).game_id
    mission_a = make_mission(engine, game_a, title="Mission of A").id
    mission_b = make_mission(engine, game_b, title="Mission of B", payout="4.00").id
    quest = make_quest(engine, game_a, [mission_data(title="Step of A")], name="Quest of A")
    from api.missions.offers import list_offers

    with new_session(engine) as session:
        step = next(m for m in list_offers(session=session)[0] if m.quest_id == quest.id)
    wall = make_paying_offerwall(engine, box, name="Wall")
    make_conversion(engine, mission_id=mission_a, offerwall=wall, uid="a1")
    make_conversion(engine, mission_id=mission_a, offerwall=wall, uid="a2")
    _move_to(engine, today() - timedelta(days=2), uid="a2")
    make_click(engine, offer_id=mission_a, offerwall=wall, uid="a3")
    make_click(engine, kind="quest", offer_id=quest.id, offerwall=wall, uid="a4")
    make_conversion(engine, mission_id=mission_b, offerwall=wall, uid="b1", payout_micros=4_000_000)
    return Traffic(
        studio_a, studio_b, game_a, game_b, mission_a, quest.id, step.id, mission_b, wall
    )


def _conversion_of(engine: Engine, uid: str) -> str:
    """The transaction id of a player's conversion."""
    with new_session(engine) as session:
        return session.execute(
            sa.select(_conversion.c.transaction_id)
            .join(_click, _click.c.id == _conversion.c.click_id)
            .where(_click.c.uid == uid)
        ).scalar_one()


@pytest.fixture
def reversal(engine: Engine, traffic: Traffic) -> str:
    """Two days ago, a2's $1.50 conversion is reversed (today, as reversals are); today
    one conversion of B waits for review and another was rejected. Returns a2's day."""
    with write_session(engine) as session:
        conversions.reverse(
            session=session,
            transaction_id=_conversion_of(engine, "a2"),
            reason="chargeback",
            actor="staff@example.com",
            studio_id=None,
        )
    for uid, status in (("b2", ConversionStatus.PENDING), ("b3", ConversionStatus.REJECTED)):
        make_conversion(
            engine,
            mission_id=traffic.mission_b,
            offerwall=traffic.wall,
            uid=uid,
            payout_micros=4_000_000,
        )
        with write_session(engine) as session:
            session.execute(
                sa.update(_conversion)
                .where(_conversion.c.transaction_id == _conversion_of(engine, uid))
                .values(status=status)
            )
    return (today() - timedelta(days=2)).isoformat()


def _money(row: ReportLine) -> tuple[int, str, int, str, str]:
    return row.conversions, row.payout, row.reversed, row.reversed_payout, row.net_payout


def _lines(report: reports.Report) -> dict[str, ReportLine]:
    """The report's rows as the reports page shows them, by key."""
    return {r.key: report_line(r, report.currency) for r in report.rows}


def _total(report: reports.Report) -> ReportLine:
    """The report's totals as the reports page shows them."""
    return report_line(report.totals, report.currency)


def _report(engine: Engine, account: Account, dimension: str = "day", **kwargs):
    with new_session(engine) as session:
        return reports.build_report(
            session=session,
            account=account,
            dimension=dimension,
            first=kwargs.pop("first", first()),
            last=kwargs.pop("last", today()),
            **kwargs,
        )


def _totals(report: reports.Report) -> tuple[int, int, int, str, str]:
    t = _total(report)
    return t.clicks, t.starts, t.conversions, t.payout, t.epc


def test_a_report_per_day_has_every_day_of_the_range_with_zeros(engine, traffic):
    report = _report(engine, STAFF)
    days = [(first() + timedelta(days=n)).isoformat() for n in range(5)]
    assert [r.key for r in report.rows] == days
    by_day = {
        k: (r.clicks, r.conversions, r.payout, r.rate, r.epc) for k, r in _lines(report).items()
    }
    assert by_day[days[0]] == (0, 0, "$0.00", "–", "–")
    assert by_day[days[1]] == (0, 0, "$0.00", "–", "–")
    assert by_day[days[2]] == (1, 1, "$1.50", "100.0%", "$1.50")
    assert by_day[days[3]] == (0, 0, "$0.00", "–", "–")
    assert by_day[days[4]] == (4, 2, "$5.50", "50.0%", "$1.38")


def test_a_one_day_range_has_that_day_even_without_activity(engine, traffic):
    empty = today() - timedelta(days=40)
    report = _report(engine, STAFF, first=empty, last=empty)
    assert [(r.key, r.clicks, r.conversions) for r in report.rows] == [(empty.isoformat(), 0, 0)]


@pytest.mark.parametrize("dimension", reports.DIMENSIONS)
@pytest.mark.parametrize("who", ["staff", "designer a", "publisher", "game a", "quest a"])
def test_the_totals_are_the_sums_of_the_rows(engine, traffic, reversal, dimension, who):
    account, narrow = {
        "staff": (STAFF, {}),
        "designer a": (make_account(Role.DESIGNER, studio_id=traffic.studio_a), {}),
        "publisher": (make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id), {}),
        "game a": (STAFF, {"game_id": traffic.game_a}),
        "quest a": (STAFF, {"offer_id": traffic.quest_a}),
    }[who]
    report = _report(engine, account, dimension, **narrow)
    rows, t = report.rows, report.totals
    assert t.clicks == sum(r.clicks for r in rows)
    assert t.starts == sum(r.starts for r in rows)
    assert t.conversions == sum(r.conversions for r in rows)
    assert t.payout_micros == sum(r.payout_micros for r in rows)
    assert t.reversed == sum(r.reversed for r in rows)
    assert t.reversed_micros == sum(r.reversed_micros for r in rows)
    assert t.net_micros == sum(r.net_micros for r in rows) == t.payout_micros - t.reversed_micros
    if report.currency is not None:
        lines = [report_line(r, report.currency) for r in rows]
        for shown in ("payout_local", "reversed_local", "net_local"):
            amounts = [_amount(getattr(line, shown)) for line in lines]
            assert _amount(getattr(_total(report), shown)) == sum(amounts), shown
    # Whatever the grouping, the same traffic.
    assert _totals(report) == _totals(_report(engine, account, "day", **narrow))


def _amount(shown: str) -> Decimal:
    """An amount as the report shows it in a currency ("1,002 GEM")."""
    return Decimal(shown.split()[0].replace(",", ""))


def test_a_reversal_counts_on_the_conversions_day_as_reversed_and_net(engine, traffic, reversal):
    report = _report(engine, STAFF)
    by_day = _lines(report)
    # Still a conversion and its payout, with the same rate and EPC; reversed, so net nil.
    assert _money(by_day[reversal]) == (1, "$1.50", 1, "$1.50", "$0.00")
    assert (by_day[reversal].rate, by_day[reversal].epc) == ("100.0%", "$1.50")
    # Today: the reversal is not counted again; pending and rejected count nowhere.
    assert _money(by_day[today().isoformat()]) == (2, "$5.50", 0, "$0.00", "$5.50")
    assert _money(_total(report)) == (3, "$7.00", 1, "$1.50", "$5.50")
    # Their clicks count as clicks: 3 conversions of 7 clicks.
    assert (_total(report).rate, _total(report).epc) == ("42.9%", "$1.00")
    # Per offer too: the reversed payout is the mission's.
    by_offer = _lines(_report(engine, STAFF, "offer"))
    assert _money(by_offer[traffic.mission_a]) == (2, "$3.00", 1, "$1.50", "$1.50")
    assert _money(by_offer[traffic.mission_b]) == (1, "$4.00", 0, "$0.00", "$4.00")


def test_a_publisher_sees_reversed_and_net_payout_in_their_currency(engine, traffic, reversal):
    publisher = make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
    report = _report(engine, publisher)
    day = _lines(report)[reversal]
    assert (day.payout_local, day.reversed_local, day.net_local) == ("150 GEM", "150 GEM", "0 GEM")
    t = _total(report)
    assert (t.payout_local, t.reversed_local, t.net_local) == ("700 GEM", "150 GEM", "550 GEM")


def test_a_report_is_one_grouped_statement_each_for_clicks_conversions_and_refused_clicks(
    engine, traffic, reversal
):
    statements: list[str] = []

    def record(*args) -> None:
        statements.append(args[2])

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        report = _report(engine, STAFF)
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    assert report.totals.reversed == 1
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3 and all("GROUP BY" in s for s in selects)


def test_epc_is_the_payout_per_click_beside_the_conversion_rate(engine, traffic):
    report = _report(engine, STAFF, "offer")
    by_offer = _lines(report)
    mission_a = by_offer[traffic.mission_a]
    assert (mission_a.clicks, mission_a.rate, mission_a.payout, mission_a.epc) == (
        3,
        "66.7%",
        "$3.00",
        "$1.00",
    )
    assert by_offer[traffic.quest_a].epc == "$0.00"
    assert _totals(report) == (5, 5, 3, "$7.00", "$1.40")


def test_staff_narrow_the_report_to_one_game(engine, traffic):
    report = _report(engine, STAFF, "offer", game_id=traffic.game_a)
    assert {r.key for r in report.rows} == {traffic.mission_a, traffic.quest_a}
    assert _totals(report) == (4, 4, 2, "$3.00", "$0.75")


def test_staff_narrow_the_report_to_one_offer_a_mission_or_a_quest(engine, traffic):
    mission = _report(engine, STAFF, "day", offer_id=traffic.mission_a)
    assert _totals(mission) == (3, 3, 2, "$3.00", "$1.00")
    quest = _report(engine, STAFF, "offer", game_id=traffic.game_a, offer_id=traffic.quest_a)
    assert [r.key for r in quest.rows] == [traffic.quest_a]
    assert _totals(quest) == (1, 1, 0, "$0.00", "$0.00")


def test_an_offer_of_another_game_or_inside_a_quest_is_refused(engine, traffic):
    for narrow in (
        {"game_id": traffic.game_a, "offer_id": traffic.mission_b},
        {"offer_id": traffic.step_a},
        {"offer_id": "no-such-offer"},
    ):
        with pytest.raises(ranges.ReportError) as refused:
            _report(engine, STAFF, **narrow)
        assert refused.value.field_errors() == {"offer": "No such offer."}


def test_a_designer_filters_only_their_studios_games_and_offers(engine, traffic):
    designer_a = make_account(Role.DESIGNER, studio_id=traffic.studio_a)
    own = _report(engine, designer_a, "offer", game_id=traffic.game_a)
    assert _totals(own)[:3] == (4, 4, 2)
    with pytest.raises(Forbidden, match="No such game"):
        _report(engine, designer_a, game_id=traffic.game_b)
    with pytest.raises(ranges.ReportError, match="No such offer"):
        _report(engine, designer_a, offer_id=traffic.mission_b)


def test_a_publisher_may_not_filter_by_game_or_offer(engine, traffic):
    publisher = make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
    for narrow in ({"game_id": traffic.game_a}, {"offer_id": traffic.mission_a}):
        with pytest.raises(Forbidden, match="may not do this"):
            _report(engine, publisher, **narrow)


def test_a_publisher_sees_payouts_in_their_currency_as_postbacks_round_them(engine, box, traffic):
    # $1.505 is 150.5 Gems: each postback carries 151 (half up), so two make 302, not
    # the 301 that converting the $3.01 total would give.
    odd = make_mission(engine, traffic.game_a, title="Odd payout", payout="1.505").id
    make_conversion(
        engine, mission_id=odd, offerwall=traffic.wall, uid="o1", payout_micros=1_505_000
    )
    make_conversion(
        engine, mission_id=odd, offerwall=traffic.wall, uid="o2", payout_micros=1_505_000
    )
    publisher = make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
    report = _report(engine, publisher, "offer")
    row = _lines(report)[odd]
    assert (row.payout, row.payout_local, row.epc_local) == ("$3.01", "302 GEM", "151.00 GEM")
    assert _total(report).payout_local == "1,002 GEM"  # 2 × 150 + 400 + 302
    assert report.currency is not None
    assert report.currency.note() == (
        "Payouts in Gems (GEM): 100 per USD, each payout rounded to 0 decimals, "
        "as in your postbacks."
    )
    # Staff and designers see USD only.
    assert _report(engine, STAFF).currency is None
    assert _total(_report(engine, STAFF)).payout_local == ""


def test_a_publisher_not_approved_gets_no_report(engine, box):
    wall, _ = make_offerwall(engine, box, name="Waiting", approve=False)
    with pytest.raises(NotApproved):
        _report(engine, make_account(Role.PUBLISHER, offerwall_id=wall.id))
    with write_session(engine) as session:
        pending = session.get(Offerwall, wall.id)
        offerwalls.approve(session=session, box=box, offerwall=pending)
        offerwalls.suspend(session=session, offerwall=pending)
    with pytest.raises(NotApproved):
        _report(engine, make_account(Role.PUBLISHER, offerwall_id=wall.id))


def test_the_presets_are_utc_day_ranges():
    today = date(2026, 11, 23)
    assert ranges.preset_range("today", today=today) == (today, today)
    assert ranges.preset_range("7d", today=today) == (date(2026, 11, 17), today)
    assert ranges.preset_range("30d", today=today) == (date(2026, 10, 25), today)
    assert ranges.preset_range("month", today=today) == (date(2026, 11, 1), today)
    with pytest.raises(ranges.ReportError):
        ranges.preset_range("forever", today=today)


def test_a_wrong_range_is_refused_beside_its_input():
    refusals = {}
    for start, end in (("2026-13-01", ""), ("", "yesterday"), ("2026-11-05", "2026-11-01")):
        with pytest.raises(ranges.ReportError) as refused:
            ranges.parse_range(start, end)
        refusals[(start, end)] = refused.value.field_errors()
    assert refusals == {
        ("2026-13-01", ""): {"start": "Enter a date (YYYY-MM-DD)."},
        ("", "yesterday"): {"end": "Enter a date (YYYY-MM-DD)."},
        ("2026-11-05", "2026-11-01"): {"start": "The range starts after it ends."},
    }


def test_the_filter_choices_are_the_accounts_games_and_the_chosen_games_offers(engine, traffic):
    designer_a = make_account(Role.DESIGNER, studio_id=traffic.studio_a)
    with new_session(engine) as session:
        games = reports.filter_choices(session=session, account=designer_a)
        chosen = reports.filter_choices(session=session, account=designer_a, game_id=traffic.game_a)
        everything = reports.filter_choices(session=session, account=STAFF)
        publisher = reports.filter_choices(
            session=session, account=make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
        )
        with pytest.raises(Forbidden):
            reports.filter_choices(session=session, account=designer_a, game_id=traffic.game_b)
    assert [(c.value, c.label) for c in games.games] == [(traffic.game_a, "Arena A")]
    assert games.offers == []
    assert [(c.value, c.label) for c in chosen.offers] == [
        (traffic.mission_a, "Mission of A"),
        (traffic.quest_a, "Quest of A (quest)"),
    ]
    assert {c.label for c in everything.games} == {"Arena A", "Arena B"}
    assert publisher == reports.FilterChoices()


def test_the_csv_of_a_publisher_has_epc_reversals_and_their_currency(engine, traffic, reversal):
    publisher = make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
    text = to_csv(_report(engine, publisher, "offer"), "offer")
    lines = text.splitlines()
    assert lines[0] == (
        "offer,clicks,starts,conversions,conversion_rate,payout_usd,epc_usd,"
        "reversed,reversed_payout_usd,net_payout_usd,"
        "payout_gem,epc_gem,reversed_payout_gem,net_payout_gem,refused_clicks,"
        "currency_given,currency_given_without_promotions,promoted_conversions"
    )
    assert (
        "Mission of A,3,3,2,66.7%,3.00,1.0000,1,1.50,1.50,300,100.00,150,150,0,300,300,0" in lines
    )
    # B's pending and rejected conversions are clicks without a conversion.
    assert "Mission of B,3,3,1,33.3%,4.00,1.3333,0,0.00,4.00,400,133.33,0,400,0,400,400,0" in lines
    assert lines[-1] == "Total,7,7,3,42.9%,7.00,1.0000,1,1.50,5.50,700,100.00,150,550,0,700,700,0"


@pytest.fixture
def devices(engine: Engine, box: SecretBox) -> Offerwall:
    """One mission ($1.50), five clicks through a GEM offerwall: Android with sub1 "s1"
    (converted), Android with sub1 "b" and sub2 "x", an iPhone with sub1 "a" and sub3 "z"
    (converted), an iPhone with an empty sub1 and one without user agent or sub values."""
    from tests.factories import ANDROID_UA, IPHONE_UA

    game = make_game(engine, box, "Devices").game_id
    mission = make_mission(engine, game, title="Device mission").id
    wall = make_paying_offerwall(engine, box, name="Devices wall")
    make_conversion(engine, mission_id=mission, offerwall=wall, uid="d1", user_agent=ANDROID_UA)
    make_click(
        engine, offer_id=mission, offerwall=wall, uid="d2", user_agent=ANDROID_UA,
        subs=("b", "x", None),
    )  # fmt: skip
    make_conversion(
        engine, mission_id=mission, offerwall=wall, uid="d3", user_agent=IPHONE_UA,
        subs=("a", None, "z"),
    )  # fmt: skip
    make_click(
        engine, offer_id=mission, offerwall=wall, uid="d4", user_agent=IPHONE_UA,
        subs=("", None, None),
    )  # fmt: skip
    make_click(engine, offer_id=mission, offerwall=wall, uid="d5", user_agent="", subs=(None,) * 3)
    return wall


def test_a_report_per_operating_system_or_sub_value_joins_conversions_to_their_click(
    engine, devices
):
    publisher = make_account(Role.PUBLISHER, offerwall_id=devices.id)

    def rows(dimension: str) -> list[tuple[str, str, int, int, str]]:
        return [
            (r.key, r.label, r.clicks, r.conversions, r.payout_local)
            for r in _lines(_report(engine, publisher, dimension)).values()
        ]

    assert rows("os") == [
        ("Android", "Android", 2, 1, "150 GEM"),
        ("iOS", "iOS", 2, 1, "150 GEM"),
        ("", "unknown", 1, 0, "0 GEM"),
    ]
    # The missing value and the empty one are one group.
    assert rows("sub1") == [
        ("a", "a", 1, 1, "150 GEM"),
        ("s1", "s1", 1, 1, "150 GEM"),
        ("", "(none)", 2, 0, "0 GEM"),
        ("b", "b", 1, 0, "0 GEM"),
    ]
    assert rows("sub2") == [("", "(none)", 4, 2, "300 GEM"), ("x", "x", 1, 0, "0 GEM")]
    assert rows("sub3") == [("", "(none)", 4, 1, "150 GEM"), ("z", "z", 1, 1, "150 GEM")]


def test_the_csv_keeps_a_sub_value_that_looks_like_a_formula_as_text(engine, box, devices):
    mission = make_mission(engine, make_game(engine, box, "Formulas").game_id).id
    make_click(
        engine, offer_id=mission, offerwall=devices, uid="f1", subs=("=HYPERLINK(1)", None, None)
    )
    publisher = make_account(Role.PUBLISHER, offerwall_id=devices.id)
    text = to_csv(_report(engine, publisher, "sub1"), "sub1")
    assert "\n'=HYPERLINK(1),1," in text


def test_a_publisher_is_offered_every_grouping_but_per_offerwall():
    assert reports.dimensions_for(Role.PUBLISHER) == reports.PUBLISHER_DIMENSIONS
    assert "offerwall" not in reports.PUBLISHER_DIMENSIONS
    assert reports.dimensions_for(Role.STAFF) == reports.DIMENSIONS
    assert reports.dimensions_for(Role.DESIGNER) == reports.DIMENSIONS
    assert set(reports.DIMENSION_LABELS) == set(reports.DIMENSIONS)


def test_every_figure_shown_is_made_from_its_number(engine, traffic, reversal):
    publisher = make_account(Role.PUBLISHER, offerwall_id=traffic.wall.id)
    for dimension in reports.DIMENSIONS:
        report = _report(engine, publisher, dimension)
        assert report.currency == report.amounts_in and report.currency is not None
        for r in [*report.rows, report.totals]:
            line = report_line(r, report.currency)
            if r.clicks:
                assert line.rate == f"{r.rate_percent:.1f}%"
                assert r.epc_usd == round(r.payout_micros / 1e6 / r.clicks, 4)
                assert line.epc_local == f"{r.epc_amount:,.2f} GEM"
            else:
                assert (r.rate_percent, r.epc_usd, r.epc_amount) == (None, None, None)
            assert line.payout_local == f"{r.payout_amount:,f} GEM"
            assert line.reversed_local == f"{r.reversed_amount:,f} GEM"
            assert line.net_local == f"{r.net_amount:,f} GEM"


def test_a_publisher_paid_in_usd_sees_usd_and_gets_the_amounts_as_postbacks_round_them(
    engine, box, traffic
):
    wall, _ = make_offerwall(engine, box, name="Dollar wall")
    odd = make_mission(engine, traffic.game_a, title="Odd payout", payout="1.505").id
    for uid in ("u1", "u2"):
        make_conversion(engine, mission_id=odd, offerwall=wall, uid=uid, payout_micros=1_505_000)
    report = _report(engine, make_account(Role.PUBLISHER, offerwall_id=wall.id))
    assert report.currency is None  # the page and the CSV show the USD columns only
    assert report.amounts_in is not None and report.amounts_in.is_usd
    t = report.totals
    assert (_total(report).payout, _total(report).payout_local) == ("$3.01", "")
    # Each postback carries $1.51 (half up to the offerwall's 2 decimals).
    assert (t.payout_amount, t.epc_amount, t.net_amount) == (
        Decimal("3.02"),
        Decimal("1.51"),
        Decimal("3.02"),
    )
    assert _report(engine, STAFF).amounts_in is None
    assert _report(engine, STAFF).totals.payout_amount is None


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        ("1999-12-31", "2000-01-05", "start"),
        ("", "9999-12-31", "end"),
        ("0001-01-01", "2000-01-02", "start"),
        ("9998-12-31", "9999-01-01", "end"),
    ],
)
def test_a_date_at_the_ends_of_the_calendar_is_refused_not_a_crash(start, end, field):
    with pytest.raises(ranges.ReportError) as refused:
        ranges.parse_range(start, end)
    assert refused.value.field_errors() == {field: "Enter a date from 2000-01-01 to 9998-12-31."}
    # The last day allowed still has a next day, and the first 30 days before it.
    assert ranges.parse_range("", "9998-12-31")[1] == date(9998, 12, 31)
    assert ranges.parse_range("", "2000-01-01")[0] == date(1999, 12, 3)
