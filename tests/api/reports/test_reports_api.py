"""GET /offerwall/reports (docs/contract.md#reporting-api): a publisher's reports by API key,
with the portal's figures exactly (the same `build_report` for their portal account), every
grouping, paging with totals over every row, bad parameters as 400, 401 and 403, the rate
limit, in this process and shared through Redis (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from api.accounts import Account, IpThrottle, account_for, sign_in
from api.app import create_api
from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.core.money import format_money
from api.publishers import offerwalls
from api.reports import GROUP_BY
from api.reports import figures as reports
from models import ConversionStatus, Offerwall, OfferwallStatus, Role
from models.tables import click as _click
from models.tables import conversion as _conversion
from portal.reports.reports_state import report_line
from tests.api.conftest import PROXY
from tests.factories import (
    ANDROID_UA,
    IPHONE_UA,
    PASSWORD,
    WINDOWS_UA,
    FixedCountries,
    make_click,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_quest,
    make_user,
    mission_data,
    today,
)
from tests.live import ROOT


def first() -> date:
    """The first of the ten days most tests ask for."""
    return today() - timedelta(days=9)


def date_range() -> dict[str, str]:
    return {"from": first().isoformat(), "to": today().isoformat()}


US, DE, BR, NOWHERE = "203.0.113.7", "198.51.100.9", "192.0.2.44", "192.0.2.200"
FIGURES = {
    "clicks",
    "conversions",
    "conversionRate",
    "epc",
    "payout",
    "reversed",
    "reversedPayout",
    "netPayout",
    "epcUsd",
    "payoutUsd",
    "reversedPayoutUsd",
    "netPayoutUsd",
    "currencyGiven",
    "currencyGivenWithoutPromotions",
    "promotedConversions",
    "refusedClicks",
}


def _app(engine: Engine, settings: Any, box: SecretBox, **limits: Any) -> TestClient:
    app = create_api(
        engine=engine, settings=settings.model_copy(update=limits), box=box,
        countries=FixedCountries(),
    )  # fmt: skip
    return TestClient(app, client=(PROXY, 50000), follow_redirects=False)


@pytest.fixture
def client(engine, api_settings, box) -> TestClient:
    """The API with room for every request of a test (the rate limit has tests of its own)."""
    return _app(engine, api_settings, box, reports_rate_per_minute=60_000, reports_burst=1_000)


def _get(client: TestClient, key: str | None, **params: Any):
    headers = {"x-api-key": key} if key is not None else {}
    return client.get("/offerwall/reports", params=params, headers=headers)


def _ok(client: TestClient, key: str, **params: Any) -> dict[str, Any]:
    answer = _get(client, key, **params)
    assert answer.status_code == 200, answer.text
    return answer.json()


@dataclass(frozen=True)
class Traffic:
    """Wall A pays in Coins (1.2345 per USD, 1 decimal); wall B in US dollars."""

    wall_a: Offerwall
    key_a: str
    wall_b: Offerwall
    key_b: str
    mission_1: str
    quest: str


def _on_day(engine: Engine, uid: str, day: date) -> None:
    """Move a player's click and its conversion to noon of another day."""
    noon = datetime.combine(day, time(12), tzinfo=UTC)
    with write_session(engine) as session:
        ids = sa.select(_click.c.id).where(_click.c.uid == uid).scalar_subquery()
        session.execute(sa.update(_click).where(_click.c.uid == uid).values(created_at=noon))
        session.execute(
            sa.update(_conversion).where(_conversion.c.click_id.in_(ids)).values(created_at=noon)
        )


def _transaction_of(engine: Engine, uid: str) -> str:
    with new_session(engine) as session:
        return session.execute(
            sa.select(_conversion.c.transaction_id)
            .join(_click, _click.c.id == _conversion.c.click_id)
            .where(_click.c.uid == uid)
        ).scalar_one()


@pytest.fixture
def traffic(engine: Engine, box: SecretBox) -> Traffic:
    """Clicks from four countries (one unknown), four kinds of device (one unknown) and
    sub values (missing, empty, set); conversions of $1.50, $4 and $1.505 over several
    days, one of them reversed, one pending (counted nowhere); a click before the range;
    and wall B's own traffic, which wall A's report must not show."""
    game = make_game(engine, box, "Arena").game_id
    m1 = make_mission(engine, game, title="Win a match").id
    m2 = make_mission(engine, game, title="Reach level 10", payout="4.00").id
    m3 = make_mission(engine, game, title="Odd payout", payout="1.505").id
    quest = make_quest(engine, game, [mission_data(title="Step one")], name="Season").id
    wall_a, key_a = make_offerwall(engine, box, name="Wall A")
    wall_b, key_b = make_offerwall(engine, box, name="Wall B")
    assert key_a is not None and key_b is not None
    with write_session(engine) as session:
        coins = session.get(Offerwall, wall_a.id)
        assert coins is not None
        offerwalls.set_currency(
            session=session, offerwall=coins, name="Coins", code="CNS", exchange_rate=1.2345,
            decimals=1,
        )  # fmt: skip

    def conversion(uid, mission, micros, ua, ip, subs, days_ago=0, wall=wall_a):
        make_conversion(
            engine, mission_id=mission, offerwall=wall, uid=uid, payout_micros=micros,
            user_agent=ua, ip=ip, subs=subs,
        )  # fmt: skip
        if days_ago:
            _on_day(engine, uid, today() - timedelta(days=days_ago))

    def click(uid, offer, ua, ip, subs, days_ago=0, kind="mission"):
        make_click(
            engine, offer_id=offer, offerwall=wall_a, uid=uid, user_agent=ua, ip=ip,
            subs=subs, kind=kind,
        )  # fmt: skip
        if days_ago:
            _on_day(engine, uid, today() - timedelta(days=days_ago))

    conversion("a01", m1, 1_500_000, ANDROID_UA, US, ("camp1", "adset1", None))
    conversion("a02", m1, 1_500_000, ANDROID_UA, US, ("camp1", "adset2", "x"), days_ago=2)
    click("a03", m1, IPHONE_UA, DE, ("camp2", None, None))
    conversion("a04", m2, 4_000_000, IPHONE_UA, DE, ("camp2", "adset1", None), days_ago=5)
    conversion("a05", m2, 4_000_000, WINDOWS_UA, BR, ("", None, None))
    conversion("a06", m3, 1_505_000, ANDROID_UA, NOWHERE, (None, None, None), days_ago=1)
    conversion("a07", m3, 1_505_000, IPHONE_UA, US, ("camp1", None, None), days_ago=1)
    conversion("a08", m3, 1_505_000, "", BR, ("camp3", "adset3", "z"))
    click("a09", quest, ANDROID_UA, US, ("camp1", "adset1", None), kind="quest")
    click("a10", m1, WINDOWS_UA, US, ("camp2", None, None), days_ago=12)  # before the range
    conversion("b01", m1, 1_500_000, ANDROID_UA, US, ("camp1", None, None), wall=wall_b)
    conversion("b02", m2, 4_000_000, IPHONE_UA, DE, ("camp9", None, None), wall=wall_b)

    with write_session(engine) as session:  # a02's conversion is reversed (today)
        conversions.reverse(
            session=session, transaction_id=_transaction_of(engine, "a02"), reason="chargeback",
            actor="staff@example.com", studio_id=None,
        )  # fmt: skip
        session.execute(  # a08's waits for review
            sa.update(_conversion)
            .where(_conversion.c.transaction_id == _transaction_of(engine, "a08"))
            .values(status=ConversionStatus.PENDING)
        )
    return Traffic(wall_a, key_a, wall_b, key_b, m1, quest)


def _portal_account(engine: Engine, box: SecretBox, offerwall: Offerwall) -> Account:
    """The publisher's account as the portal resolves it from their session."""
    email = f"{offerwall.id[:8]}@publisher.example"
    make_user(engine, email, role=Role.PUBLISHER, offerwall_id=offerwall.id)
    signed_in = sign_in(
        engine=engine, box=box, email=email, password=PASSWORD, client_ip="192.0.2.1",
        ip_throttle=IpThrottle(),
    )  # fmt: skip
    account = account_for(engine=engine, token=signed_in.token)
    assert account is not None and account.role == Role.PUBLISHER
    return account


def _portal_report(engine: Engine, account: Account, dimension: str) -> reports.Report:
    """What the portal's reports page shows the account (`ReportState._build`)."""
    with new_session(engine) as session:
        return reports.build_report(
            session=session, account=account, dimension=dimension, first=first(), last=today()
        )


def _shown(text: str) -> Decimal | None:
    """An amount as the portal shows it ("1,234.5 CNS", "$3.01", "–") as a number."""
    if text == "–":
        return None
    return Decimal(text.split(" ")[0].lstrip("$").replace(",", ""))


def _number(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def _assert_same_figures(
    api: dict[str, Any], row: reports.ReportRow, local: bool, currency: reports.Currency | None
) -> None:
    """The API's figures of a row are the portal's, field by field; `local`: the portal
    shows the publisher's currency beside USD (`currency`, the report's)."""
    line = report_line(row, currency)
    assert set(api) - {"key", "label"} == FIGURES
    assert (api["clicks"], api["conversions"], api["reversed"]) == (
        row.clicks,
        row.conversions,
        row.reversed,
    )
    rate = api["conversionRate"]
    assert (f"{rate:.1f}%" if rate is not None else "–") == line.rate
    assert rate == row.rate_percent
    # In the offerwall's currency: the numbers the page's texts are made of, and the texts.
    assert _number(api["payout"]) == row.payout_amount
    assert _number(api["epc"]) == row.epc_amount
    assert _number(api["reversedPayout"]) == row.reversed_amount
    assert _number(api["netPayout"]) == row.net_amount
    assert _number(api["currencyGiven"]) == row.given_amount
    assert _number(api["currencyGivenWithoutPromotions"]) == row.payout_amount
    assert api["promotedConversions"] == row.promoted
    if local:
        assert _number(api["payout"]) == _shown(line.payout_local)
        assert _number(api["epc"]) == _shown(line.epc_local)
        assert _number(api["reversedPayout"]) == _shown(line.reversed_local)
        assert _number(api["netPayout"]) == _shown(line.net_local)
    # In USD: exactly the micros the portal rounds to cents, and the CSV's EPC.
    assert round(api["payoutUsd"] * 1_000_000) == row.payout_micros
    assert round(api["reversedPayoutUsd"] * 1_000_000) == row.reversed_micros
    assert round(api["netPayoutUsd"] * 1_000_000) == row.net_micros
    assert format_money(Decimal(str(api["payoutUsd"]))) == line.payout
    assert format_money(Decimal(str(api["netPayoutUsd"]))) == line.net_payout
    assert api["epcUsd"] == row.epc_usd
    assert api["refusedClicks"] == row.refused


@pytest.mark.parametrize("group_by", GROUP_BY)
def test_every_row_and_the_totals_are_the_portals_for_that_publisher(
    client, engine, box, traffic, group_by
):
    account = _portal_account(engine, box, traffic.wall_a)
    portal = _portal_report(engine, account, group_by)
    body = _ok(client, traffic.key_a, groupBy=group_by, limit=1000, **date_range())
    assert (body["groupBy"], body["from"], body["to"]) == (group_by, *date_range().values())
    assert body["total"] == len(portal.rows) == len(body["data"])
    # The same rows, in the portal's order.
    assert [(r["key"], r["label"]) for r in body["data"]] == [(r.key, r.label) for r in portal.rows]
    for api_row, portal_row in zip(body["data"], portal.rows, strict=True):
        _assert_same_figures(api_row, portal_row, local=True, currency=portal.currency)
    _assert_same_figures(body["totals"], portal.totals, local=True, currency=portal.currency)
    # Wall A's traffic in the range only: 9 clicks, 6 conversions (the pending one is a
    # click), 1 reversed.
    totals = body["totals"]
    assert (totals["clicks"], totals["conversions"], totals["reversed"]) == (9, 6, 1)


def test_wall_b_gets_its_own_report_in_usd_as_its_portal_shows_it(client, engine, box, traffic):
    account = _portal_account(engine, box, traffic.wall_b)
    for group_by in GROUP_BY:
        portal = _portal_report(engine, account, group_by)
        assert portal.currency is None  # USD at rate 1: the page shows USD only
        body = _ok(client, traffic.key_b, groupBy=group_by, **date_range())
        assert [r["key"] for r in body["data"] if r["clicks"]] == [
            r.key for r in portal.rows if r.clicks
        ]
        for api_row, portal_row in zip(body["data"], portal.rows, strict=True):
            _assert_same_figures(api_row, portal_row, local=False, currency=portal.currency)
            # Whole-cent payouts: the amounts are the USD the page shows.
            assert _number(api_row["payout"]) == _shown(report_line(portal_row).payout)
        assert body["totals"]["clicks"] == 2 and body["totals"]["payout"] == 5.5
    assert body["currency"] == {
        "code": "USD",
        "name": "US Dollar",
        "exchangeRate": 1.0,
        "decimals": 2,
    }
    per_offer = _ok(client, traffic.key_b, groupBy="offer", **date_range())["data"]
    assert traffic.quest not in {r["key"] for r in per_offer}  # wall A's click only


def test_amounts_are_in_the_offerwalls_currency_each_payout_rounded_as_postbacks_are(
    client, traffic
):
    body = _ok(client, traffic.key_a, **date_range())
    assert body["currency"] == {
        "code": "CNS",
        "name": "Coins",
        "exchangeRate": 1.2345,
        "decimals": 1,
    }
    # $1.50 → 1.9 (1.85175), $4 → 4.9 (4.938), $1.505 → 1.9 (1.8579…), each: 17.4 in
    # all, where converting the $14.01 total would give 17.3.
    assert body["totals"] == {
        "clicks": 9,
        "conversions": 6,
        "conversionRate": 66.7,
        "epc": 1.93,  # 17.4 / 9, to at least 2 decimals
        "payout": 17.4,
        "reversed": 1,
        "reversedPayout": 1.9,
        "netPayout": 15.5,
        "epcUsd": 1.5567,
        "payoutUsd": 14.01,
        "reversedPayoutUsd": 1.5,
        "netPayoutUsd": 12.51,
        "refusedClicks": 0,
        # No promotion: the currency given is the payout.
        "currencyGiven": 17.4,
        "currencyGivenWithoutPromotions": 17.4,
        "promotedConversions": 0,
    }


def test_a_reversal_shows_on_its_conversions_day_as_reversed_and_net(client, traffic):
    body = _ok(client, traffic.key_a, **date_range())
    days = {r["key"]: r for r in body["data"]}
    assert list(days) == [(first() + timedelta(days=n)).isoformat() for n in range(10)]
    reversed_day = days[(today() - timedelta(days=2)).isoformat()]
    assert {k: reversed_day[k] for k in ("conversions", "payout", "reversed")} == {
        "conversions": 1,
        "payout": 1.9,
        "reversed": 1,
    }
    assert (reversed_day["reversedPayout"], reversed_day["netPayout"]) == (1.9, 0.0)
    assert (reversed_day["reversedPayoutUsd"], reversed_day["netPayoutUsd"]) == (1.5, 0.0)
    quiet = days[first().isoformat()]  # a day without activity: zeros, no rate or EPC
    assert (quiet["clicks"], quiet["payout"], quiet["conversionRate"], quiet["epc"]) == (
        0,
        0.0,
        None,
        None,
    )


def test_each_grouping_names_its_keys(client, traffic):
    def keys(group_by: str) -> dict[str, str]:
        data = _ok(client, traffic.key_a, groupBy=group_by, **date_range())["data"]
        return {r["key"]: r["label"] for r in data}

    assert keys("country") == {"US": "US", "DE": "DE", "BR": "BR", "??": "unknown"}
    assert keys("os") == {"Android": "Android", "iOS": "iOS", "Windows": "Windows", "": "unknown"}
    assert keys("sub1") == {
        "camp1": "camp1",
        "camp2": "camp2",
        "camp3": "camp3",
        "": "(none)",
    }
    assert keys("sub2") == {
        "adset1": "adset1",
        "adset2": "adset2",
        "adset3": "adset3",
        "": "(none)",
    }
    assert keys("sub3") == {"x": "x", "z": "z", "": "(none)"}
    offers = keys("offer")
    assert offers[traffic.quest] == "Season (quest)" and offers[traffic.mission_1] == "Win a match"
    assert len(keys("day")) == 10


def test_the_defaults_are_the_last_30_days_per_day_100_rows(client, traffic):
    body = _ok(client, traffic.key_a)
    assert (body["from"], body["to"]) == ((today() - timedelta(days=29)).isoformat(), str(today()))
    assert (body["groupBy"], body["limit"], body["offset"], body["total"]) == ("day", 100, 0, 30)
    assert body["totals"]["clicks"] == 10  # a10's click, 12 days ago, is in it now
    only_to = _ok(client, traffic.key_a, to=str(today() - timedelta(days=1)))
    assert only_to["from"] == str(today() - timedelta(days=30))


def test_pages_cut_the_rows_and_the_totals_count_every_row(client, traffic):
    whole = _ok(client, traffic.key_a, groupBy="sub2", **date_range())
    assert whole["total"] == 4
    pages = [
        _ok(client, traffic.key_a, groupBy="sub2", limit=3, offset=offset, **date_range())
        for offset in (0, 3, 4, 99)
    ]
    assert [len(p["data"]) for p in pages] == [3, 1, 0, 0]
    assert pages[0]["data"] + pages[1]["data"] == whole["data"]
    for page in pages:
        assert (page["total"], page["limit"], page["totals"]) == (4, 3, whole["totals"])
    assert [p["offset"] for p in pages] == [0, 3, 4, 99]
    nothing = _ok(client, traffic.key_a, limit=0, **date_range())
    assert (nothing["data"], nothing["total"]) == ([], 10)
    assert nothing["totals"] == whole["totals"]


@pytest.mark.parametrize(
    ("params", "used"),
    [
        ({"limit": "1001"}, (1000, 0)),
        ({"limit": "9" * 5000}, (1000, 0)),
        ({"limit": "007", "offset": "0002"}, (7, 2)),
        ({"offset": "2147483647"}, (100, 2147483647)),
        ({"limit": "", "offset": ""}, (100, 0)),
    ],
)
def test_a_limit_over_the_maximum_is_clamped_like_the_offers_listings(client, wall, params, used):
    body = _ok(client, wall[1], **params)
    assert (body["limit"], body["offset"]) == used


def test_a_range_of_366_days_is_taken(client, wall):
    body = _ok(client, wall[1], **{"from": str(today() - timedelta(days=365)), "to": str(today())})
    assert body["total"] == 366


NUL = "\x00"


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"from": "2026-13-01"}, "from"),
        ({"from": "2026-02-30"}, "from"),
        ({"from": "20260105"}, "from"),  # ISO, but not the YYYY-MM-DD asked for
        ({"from": "2026-W01-1"}, "from"),
        ({"from": "yesterday"}, "from"),
        ({"from": "٢٠٢٦-٠١-٠١"}, "from"),  # digits, but not ASCII ones
        ({"from": "2026-01-01" + NUL}, "from"),
        ({"from": NUL}, "from"),
        ({"from": "2" * 5000}, "from"),
        ({"to": "2026-01-01T00:00:00"}, "to"),
        ({"to": "9999-12-31"}, "to"),
        ({"from": "0001-01-01", "to": "2000-01-02"}, "from"),
        ({"from": "1999-12-31"}, "from"),
        # After today, the default end (two days on: these are made when the module is
        # collected, and a run may cross midnight).
        ({"from": str(today() + timedelta(days=2))}, "from"),
        ({"from": "2026-01-10", "to": "2026-01-09"}, "from"),
        ({"from": str(today() - timedelta(days=366)), "to": str(today())}, "from"),  # 367 days
        ({"groupBy": "offerwall"}, "groupBy"),
        ({"groupBy": "DAY"}, "groupBy"),
        ({"groupBy": "day" + NUL}, "groupBy"),
        ({"groupBy": "g" * 5000}, "groupBy"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"limit": "abc"}, "limit"),
        ({"limit": NUL}, "limit"),
        ({"limit": "１０"}, "limit"),  # full-width digits
        ({"offset": "-1"}, "offset"),
        ({"offset": "2147483648"}, "offset"),
        ({"offset": "9" * 5000}, "offset"),
        ({"offset": " 1"}, "offset"),
    ],
)
def test_a_bad_parameter_is_400_naming_it(client, wall, params, path):
    answer = _get(client, wall[1], **params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert set(body) == {"statusCode", "error", "message", "code", "details"}
    assert (body["statusCode"], body["code"]) == (400, "invalid_parameter")
    assert body["details"][0]["path"] == path
    assert len(body["details"][0]["value"]) <= 50
    assert body["message"]


def test_bad_parameters_are_400_before_the_key_is_looked_at(client):
    assert _get(client, None, groupBy="week").status_code == 400
    assert _get(client, None).status_code == 401


@pytest.mark.parametrize("key", [None, "", "qw_ak_unknown", "qw_ak_" + NUL, "k" * 10_000])
def test_a_missing_or_unknown_key_is_401(client, key):
    answer = _get(client, key)
    assert answer.status_code == 401
    assert answer.json()["code"] == "invalid_api_key"


@pytest.mark.parametrize("status", [OfferwallStatus.SUSPENDED, OfferwallStatus.REJECTED])
def test_an_offerwall_not_approved_is_403(client, engine, box, status):
    wall, key = make_offerwall(engine, box)
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        if status == OfferwallStatus.REJECTED:
            offerwall.status = OfferwallStatus.REJECTED  # an approved key, rejected since
            session.add(offerwall)
        else:
            offerwalls.suspend(session=session, offerwall=offerwall)
    answer = _get(client, key)
    assert answer.status_code == 403
    assert answer.json()["code"] == "offerwall_not_approved"


def test_the_previous_key_reports_during_its_grace_and_a_rotated_one_stops(client, engine, box):
    wall, old = make_offerwall(engine, box)
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        new = offerwalls.rotate_key(session=session, box=box, offerwall=offerwall, grace="1h")
    assert _get(client, old).status_code == 200
    assert _get(client, new.api_key).status_code == 200
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall.id)
        offerwalls.rotate_key(session=session, box=box, offerwall=offerwall, grace="none")
    assert _get(client, new.api_key).status_code == 401


def _statuses(client: TestClient, key: str, n: int) -> list[int]:
    return [_get(client, key).status_code for _ in range(n)]


def test_over_the_rate_an_offerwall_gets_429_with_retry_after(engine, api_settings, box):
    limited = _app(engine, api_settings, box, reports_rate_per_minute=0.6, reports_burst=2)
    wall_1, key_1 = make_offerwall(engine, box, name="One")
    _wall_2, key_2 = make_offerwall(engine, box, name="Two")
    assert _statuses(limited, key_1, 2) == [200, 200]
    answer = _get(limited, key_1)
    assert answer.status_code == 429
    body = answer.json()
    assert (body["statusCode"], body["code"]) == (429, "rate_limited")
    assert "offerwall" in body["message"]
    assert 1 <= int(answer.headers["retry-after"]) <= 60
    # Per offerwall: another one has its own allowance, and a new key of this one none.
    assert _get(limited, key_2).status_code == 200
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=wall_1.id)
        new = offerwalls.rotate_key(session=session, box=box, offerwall=offerwall).api_key
    assert _get(limited, new).status_code == 429
    # Refused before the rate is counted: bad parameters and bad keys.
    assert _get(limited, key_2, groupBy="week").status_code == 400
    assert _get(limited, "qw_ak_unknown").status_code == 401


def test_processes_sharing_redis_share_an_offerwalls_allowance(
    engine, api_settings, box, redis_url, redis_prefix
):
    shared = {
        "reports_rate_per_minute": 0.6,
        "reports_burst": 3,
        "redis_url": redis_url,
        "redis_key_prefix": redis_prefix,
    }
    first, second = (
        _app(engine, api_settings, box, **shared),
        _app(engine, api_settings, box, **shared),
    )
    _wall, key = make_offerwall(engine, box)
    statuses = [_get((first, second)[i % 2], key).status_code for i in range(6)]
    assert statuses == [200, 200, 200, 429, 429, 429]


def test_the_openapi_document_describes_the_route(client):
    operation = client.get("/v2/openapi.json").json()["paths"]["/offerwall/reports"]["get"]
    assert operation["summary"] and "portal" in operation["description"]
    params = {p["name"] for p in operation["parameters"]}
    assert params == {"from", "to", "groupBy", "limit", "offset", "x-api-key"}
    assert {"200", "400", "401", "403", "429"} <= set(operation["responses"])
    assert "invalid_api_key" in operation["responses"]["401"]["description"]
    assert "rate_limited" in operation["responses"]["429"]["description"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema["$ref"].endswith("/ReportsResponse")


def test_the_guides_example_has_the_fields_of_a_real_answer(client, traffic):
    guide = (ROOT / "docs" / "publisher-integration.md").read_text()
    section = guide.split("## 5. Reporting API", 1)[1]
    example = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    real = _ok(client, traffic.key_a, groupBy="sub1", **date_range())
    assert set(example) == set(real)
    assert set(example["currency"]) == set(real["currency"])
    assert {frozenset(row) for row in example["data"]} == {frozenset(real["data"][0])}
    assert set(example["totals"]) == set(real["totals"]) == FIGURES
