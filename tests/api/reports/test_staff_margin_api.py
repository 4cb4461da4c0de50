"""GET /staff/reports/margin through the real app: staff's portal session only, the margin
report's rows and totals (as the portal's Margin page has them), its CSV, and parameters
refused with 400 `invalid_parameter`, never a 5xx. And the publishers' reporting API: the
currency given with and without promotions, never revenue or margin."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest

from api.accounts import SESSION_COOKIE, IpThrottle, sign_in
from api.core.db import new_session
from api.reports import margin
from models import Role
from tests.domain.reports.test_margin import STAFF, Sales, first, make_sales
from tests.factories import PASSWORD, make_user, today

PATH = "/staff/reports/margin"


@pytest.fixture
def sales(engine, box) -> Sales:
    return make_sales(engine, box)


def _token(engine, box, email: str, role: Role, **fields) -> str:
    make_user(engine, email, role=role, **fields)
    return sign_in(
        engine=engine,
        box=box,
        email=email,
        password=PASSWORD,
        client_ip="203.0.113.5",
        ip_throttle=IpThrottle(),
    ).token


@pytest.fixture
def staff(client, engine, box):
    """The client with a staff account's portal session cookie."""
    client.cookies.set(SESSION_COOKIE, _token(engine, box, "staff@example.com", Role.STAFF))
    return client


def _range() -> dict[str, str]:
    return {"from": first().isoformat(), "to": today().isoformat()}


@pytest.mark.parametrize("by", margin.BY)
def test_staff_get_the_portals_rows_and_totals_that_are_their_sum(staff, engine, sales, by):
    answer = staff.get(PATH, params={**_range(), "by": by})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    with new_session(engine) as session:
        portal = margin.build_margin(
            session=session, account=STAFF, by=by, first=first(), last=today()
        )
    assert (body["by"], body["from"], body["to"]) == (by, *_range().values())
    assert [(r["key"], r["label"]) for r in body["data"]] == [(r.key, r.label) for r in portal.rows]
    assert body["total"] == len(body["data"])
    for field in ("conversions", "held", "revenueMicros", "payoutMicros", "marginMicros"):
        assert body["totals"][field] == sum(r[field] for r in body["data"])
    assert body["totals"] == {
        "conversions": 4,
        "held": 1,
        "revenueUsd": 6.533333,
        "payoutUsd": 4.7,
        "marginUsd": 1.833333,
        "marginPercent": 28.1,
        "revenueMicros": 6_533_333,
        "payoutMicros": 4_700_000,
        "marginMicros": 1_833_333,
    }


def test_a_row_without_revenue_has_a_null_share(staff, sales):
    body = staff.get(PATH, params={**_range(), "by": "country"}).json()
    unknown = next(r for r in body["data"] if r["key"] == "??")
    assert (unknown["revenueUsd"], unknown["marginUsd"], unknown["marginPercent"]) == (
        0.0,
        -0.5,
        None,
    )


def test_the_default_is_per_day_over_the_last_30_days(staff, sales):
    body = staff.get(PATH).json()
    assert body["by"] == "day" and len(body["data"]) == 30
    assert body["to"] == today().isoformat()
    assert body["totals"]["conversions"] == 5  # with the one of ten days ago


def test_format_csv_is_the_portals_download(staff, sales):
    answer = staff.get(PATH, params={**_range(), "by": "game", "format": "csv"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert "attachment" in answer.headers["content-disposition"]
    lines = list(csv.reader(io.StringIO(answer.text)))
    assert lines[0][0] == "game"
    assert lines[-1] == ["Total", "4", "1", "6.533333", "4.700000", "1.833333", "28.1"]
    assert sum(Decimal(line[3]) for line in lines[1:-1]) == Decimal("6.533333")


def test_without_a_session_the_answer_is_401(client, sales):
    answer = client.get(PATH)
    assert answer.status_code == 401
    assert answer.json()["code"] == "not_signed_in"
    client.cookies.set(SESSION_COOKIE, "qw_s_not-a-session")
    assert client.get(PATH).json()["code"] == "not_signed_in"


def test_designers_and_publishers_are_refused_with_403(client, engine, box, sales):
    designer = _token(engine, box, "designer@example.com", Role.DESIGNER, studio_id=sales.studio_a)
    publisher = _token(
        engine,
        box,
        "publisher@example.com",
        Role.PUBLISHER,
        offerwall_id=sales.dollar_wall.id,
    )
    for token in (designer, publisher):
        client.cookies.set(SESSION_COOKIE, token)
        answer = client.get(PATH, params={"by": "game"})
        assert answer.status_code == 403
        assert answer.json()["code"] == "staff_only"
        assert "revenue" not in answer.text.lower().replace("margin reports", "")


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"by": "os"}, "by"),
        ({"by": ""}, None),  # empty: the default, per day
        ({"format": "xml"}, "format"),
        ({"from": "2026-13-01"}, "from"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-02-30"}, "to"),
        ({"from": "1999-12-31"}, "from"),
        ({"from": "0001-01-01", "to": "9999-12-31"}, "from"),
        ({"from": "2026-03-02", "to": "2026-03-01"}, "from"),
        ({"from": "2024-01-01", "to": "2025-12-31"}, "from"),
        ({"from": "2026-01-01\x00"}, "from"),
        ({"by": "day" * 1000}, "by"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(staff, sales, params, path):
    answer = staff.get(PATH, params=params)
    if path is None:
        assert answer.status_code == 200
        return
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert (body["statusCode"], body["error"], body["code"]) == (
        400,
        "Bad Request",
        "invalid_parameter",
    )
    assert body["details"][0]["path"] == path
    assert len(body["details"][0]["value"]) <= 50


def test_the_openapi_document_describes_the_endpoint_and_its_cookie(client):
    schema = client.get("/v2/openapi.json").json()
    get = schema["paths"][PATH]["get"]
    assert "questwall_session" in get["description"]
    assert {"200", "400", "401", "403"} <= set(get["responses"])
    assert {p["name"] for p in get["parameters"]} == {"from", "to", "by", "format"}


def test_the_publishers_reporting_api_has_currency_given_and_no_revenue(client, sales):
    answer = client.get(
        "/offerwall/reports",
        params={**_range(), "groupBy": "offer"},
        headers={"x-api-key": sales.dollar_key},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    totals = body["totals"]
    # Conquer's $2.00 at 2.5× and Win's $0.50 without a promotion.
    assert (
        totals["currencyGiven"],
        totals["currencyGivenWithoutPromotions"],
        totals["promotedConversions"],
    ) == (5.5, 2.5, 1)
    assert totals["currencyGivenWithoutPromotions"] == totals["payout"]
    for word in ("revenue", "margin", "spend"):
        assert word not in answer.text.lower()
    two_days_ago = (today() - timedelta(days=2)).isoformat()
    per_day = client.get(
        "/offerwall/reports",
        params={**_range(), "groupBy": "day"},
        headers={"x-api-key": sales.dollar_key},
    ).json()
    day = next(r for r in per_day["data"] if r["key"] == two_days_ago)
    assert (day["currencyGiven"], day["promotedConversions"]) == (5.0, 1)
