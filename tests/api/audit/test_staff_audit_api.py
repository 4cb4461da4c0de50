"""GET /staff/audit and /staff/audit/export through the real app: staff's portal session
only (401, 403 otherwise), the filters as query parameters, pages by cursor, bad
parameters refused with 400 `invalid_parameter` naming them (never a 5xx), and every
export a download recorded as `audit.exported` by the staff account that made it."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api import audit
from api.accounts import SESSION_COOKIE, IpThrottle, sign_in
from api.core.db import new_session
from models import AuditEvent, Role
from tests.domain.audit.test_reading import ALICE, BOB, put
from tests.factories import PASSWORD, make_offerwall, make_user

PATH, EXPORT = "/staff/audit", "/staff/audit/export"


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
    client.cookies.set(SESSION_COOKIE, _token(engine, box, "staff@example.com", Role.STAFF))
    return client


@pytest.fixture
def trail(engine):
    put(engine, ALICE, "offerwall.approved", scope=("offerwall", "w-1"), status=["pending", "ok"])
    put(engine, BOB, "mission.changed", ("mission", "m-1"), scope=("studio", "s-1"))
    put(engine, ALICE, "offerwall.suspended", ("offerwall", "w-2"), scope=("offerwall", "w-2"))
    return engine


def test_staff_page_through_the_filtered_trail_newest_first(staff, trail):
    first = staff.get(PATH, params={"action": "offerwall.", "limit": "1"})
    assert first.status_code == 200, first.text
    body = first.json()
    assert [e["action"] for e in body["data"]] == ["offerwall.suspended"]
    assert body["data"][0]["actorEmail"] == "alice@example.com"
    assert body["data"][0]["targetId"] == "w-2" and body["data"][0]["at"].endswith("Z")
    second = staff.get(PATH, params={"action": "offerwall.", "limit": "1", "cursor": body["older"]})
    assert [e["action"] for e in second.json()["data"]] == ["offerwall.approved"]
    assert second.json()["older"] is None
    assert second.json()["data"][0]["changes"] == {"status": ["pending", "ok"]}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"actor": "bob@example.com"}, ["mission.changed"]),
        ({"targetType": "offerwall", "targetId": "w-1"}, ["offerwall.approved"]),
        ({"scopeType": "studio", "scopeId": "s-1"}, ["mission.changed"]),
        ({"since": "2000-01-01", "until": "2000-01-02"}, []),
    ],
)
def test_the_filters_are_query_parameters(staff, trail, params, expected):
    answer = staff.get(PATH, params=params)
    assert answer.status_code == 200, answer.text
    assert [e["action"] for e in answer.json()["data"]] == expected


@pytest.mark.parametrize(
    ("path", "params", "named"),
    [
        (PATH, {"since": "last tuesday"}, "since"),
        (PATH, {"until": "2026-02-30"}, "until"),
        (PATH, {"until": "9999-12-31"}, "until"),
        (PATH, {"since": "2026-11-02", "until": "2026-11-01"}, "since"),
        (PATH, {"action": "DROP TABLE"}, "action"),
        (PATH, {"actor": "a\x00b"}, "actor"),
        (PATH, {"targetId": "w-1"}, "targetId"),
        (PATH, {"scopeType": "planet"}, "scopeType"),
        (PATH, {"limit": "-1"}, "limit"),
        (PATH, {"limit": "ten"}, "limit"),
        (PATH, {"cursor": "abc"}, "cursor"),
        (PATH, {"actor": "x" * 5000}, "actor"),
        (EXPORT, {"format": "xlsx"}, "format"),
        (EXPORT, {"format": "csv", "since": "9999-99-99"}, "since"),
    ],
)
def test_bad_parameters_are_400_naming_them(staff, trail, path, params, named):
    answer = staff.get(path, params=params)
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert (body["statusCode"], body["code"]) == (400, "invalid_parameter")
    assert body["details"][0]["path"] == named
    with new_session(trail) as session:
        exported = audit.read_page(session, audit.filters(action="audit.exported")).rows
    assert exported == []


@pytest.mark.parametrize("path", [PATH, EXPORT])
def test_without_a_staff_session_401_or_403(client, engine, box, path):
    assert client.get(path).json()["code"] == "not_signed_in"
    assert client.get(path).status_code == 401
    wall, _ = make_offerwall(engine, box)
    token = _token(engine, box, "pub@example.com", Role.PUBLISHER, offerwall_id=wall.id)
    client.cookies.set(SESSION_COOKIE, token)
    answer = client.get(path, params={"format": "csv"} if path == EXPORT else {})
    assert (answer.status_code, answer.json()["code"]) == (403, "staff_only")


def test_a_csv_export_is_a_download_and_is_recorded(staff, trail):
    answer = staff.get(
        EXPORT,
        params={"format": "csv", "actor": "alice@example.com"},
        headers={"user-agent": "Audit/1.0"},
    )
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-disposition"].startswith("attachment; filename=")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [r["action"] for r in rows] == ["offerwall.approved", "offerwall.suspended"]
    assert json.loads(rows[0]["changes"]) == {"status": ["pending", "ok"]}
    latest = staff.get(PATH, params={"action": "audit.exported"}).json()["data"]
    assert len(latest) == 1
    assert latest[0]["actorEmail"] == "staff@example.com" and latest[0]["actorRole"] == "staff"
    assert latest[0]["userAgent"] == "Audit/1.0"
    assert latest[0]["changes"] == {
        "filters": [None, {"actor": "alice@example.com"}],
        "format": [None, "csv"],
        "rows": [None, 2],
    }


def test_a_json_lines_export_by_default(staff, trail):
    answer = staff.get(EXPORT, params={"scopeType": "studio"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert [e["action"] for e in lines] == ["mission.changed"]
    assert lines[0]["actor_ip"] == "2001:db8::1"


PARAMETERS = ("actor", "action", "targetType", "targetId", "scopeType", "scopeId", "since")
PARAMETERS += ("until", "cursor", "limit")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    params=st.dictionaries(
        st.sampled_from(PARAMETERS),
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(["2026-11-29", "0001-01-01", "9999-12-31T23:59:59-12:00", "1e9"]),
        ),
        max_size=4,
    )
)
def test_whatever_the_filters_say_the_answer_is_a_page_or_a_400(staff, params):
    answer = staff.get(PATH, params=params)
    assert answer.status_code in (200, 400), answer.text
    if answer.status_code == 400:
        assert answer.json()["code"] == "invalid_parameter"


def test_an_export_asks_for_the_password_entered_in_the_last_ten_minutes(
    staff, trail, engine, box, clock
):
    from datetime import UTC, datetime, timedelta

    from api.accounts import account_for, confirm_password
    from api.core.db import write_session

    clock.set(datetime.now(UTC) + timedelta(minutes=11))  # the sign-in's password is stale
    stale = staff.get(EXPORT, params={"format": "jsonl"})
    assert stale.status_code == 403
    assert stale.json()["code"] == "password_required"
    with new_session(engine) as session:
        assert session.query(AuditEvent).filter_by(action="audit.exported").count() == 0
    account = account_for(engine=engine, token=staff.cookies[SESSION_COOKIE])
    with write_session(engine) as session:  # entered again (the Audit log's dialog)
        confirm_password(session=session, box=box, account=account, password=PASSWORD)
    fresh = staff.get(EXPORT, params={"format": "jsonl"})
    assert fresh.status_code == 200, fresh.text
    actions = [json.loads(line)["action"] for line in fresh.text.splitlines()]
    assert {"offerwall.approved", "mission.changed", "offerwall.suspended"} <= set(actions)
