"""The Promotions page's use cases (`api/publishers/promotions.py`): a promotion from the
form (local times in the chosen zone, countries by code or name), each refused input
named, the list in words, ending one now; a publisher only ever reaches their own
offerwall's, staff any (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from api.accounts import Forbidden
from api.core.db import new_session, write_session
from api.economics import EconomicsError
from api.missions.forms import FormError
from api.publishers import promotions
from models import Promotion, Role
from models.types import utcnow
from tests.domain.publishers.test_publisher_use_cases import _publisher
from tests.factories import make_account

FORM = {
    "name": "Double Gems Weekend",
    "multiplier": "2",
    "start": "2026-12-04T18:00",
    "end": "2026-12-06T23:00",
    "timeZone": "Europe/Berlin",
    "weekly": "on",
    "countries": "US, Germany",
    "excludeCountries": "false",
    "firstConversionOnly": "on",
}


def _add(engine, account, requested="", **changes):
    with write_session(engine) as session:
        row = promotions.add_promotion(
            session=session, account=account, requested=requested, form=FORM | changes
        )
        return row.id


def _list(engine, account, requested="", now=None):
    with new_session(engine) as session:
        return promotions.list_promotions(
            session=session, account=account, requested=requested, now=now or utcnow()
        )


def _end(engine, account, promotion_id, requested=""):
    with write_session(engine) as session:
        return promotions.end_promotion(
            session=session, account=account, requested=requested, promotion_id=promotion_id
        )


def test_a_weekly_promotion_from_the_form_keeps_its_local_times(engine, box):
    account = _publisher(engine, box)
    promotion_id = _add(engine, account)
    with new_session(engine) as session:
        row = session.get(Promotion, promotion_id)
        assert row is not None
        assert row.offerwall_id == account.offerwall_id
        assert row.created_by == account.email
        assert row.multiplier == 200
        assert row.weekly and row.time_zone == "Europe/Berlin"
        # 18:00 in Berlin in December is 17:00 UTC.
        assert row.starts_at.astimezone(UTC) == datetime(2026, 12, 4, 17, tzinfo=UTC)
        assert row.countries == ["DE", "US"] and not row.exclude_countries
        assert row.first_conversion_only
    (shown,) = _list(engine, account, now=datetime(2026, 12, 5, 12, tzinfo=UTC))
    assert shown.state == "running"
    assert shown.multiplier == "2×"
    assert shown.window == ("Every Friday 18:00–Sunday 23:00 (Europe/Berlin), from 4 Dec 2026")
    assert shown.countries == "Only DE, US"
    assert shown.first_only


def test_a_one_off_window_and_the_list_order(engine, box):
    account = _publisher(engine, box)
    _add(engine, account, name="Old", weekly="", start="2026-01-01T00:00", end="2026-01-02T00:00")
    _add(
        engine,
        account,
        name="Later",
        weekly="",
        timeZone="UTC",
        start="2026-12-24T18:00",
        end="2026-12-27T23:00",
        countries="US",
        excludeCountries="true",
        firstConversionOnly="",
        multiplier="1.5",
    )
    _add(engine, account, name="Now", weekly="", start="2026-06-01T00:00", end="2026-06-30T00:00")
    shown = _list(engine, account, now=datetime(2026, 6, 10, tzinfo=UTC))
    assert [(p.name, p.state) for p in shown] == [
        ("Now", "running"),
        ("Later", "scheduled"),
        ("Old", "ended"),
    ]
    later = shown[1]
    assert later.window == "24 Dec 2026, 18:00 – 27 Dec 2026, 23:00 (UTC)"
    assert later.countries == "Every country but US"
    assert later.multiplier == "1.5×"
    assert not later.first_only


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"name": "  "}, "name", "required"),
        ({"multiplier": "1"}, "multiplier", "Enter 1.01 or more."),
        ({"multiplier": "10.5"}, "multiplier", "Enter 10 or less."),
        ({"multiplier": "1.255"}, "multiplier", "at most 2 decimals"),
        ({"multiplier": "two"}, "multiplier", "Enter a number."),
        ({"start": ""}, "start", "required"),
        ({"end": "2026-12-04T17:00"}, "end", "The end must be after the start."),
        ({"end": "2026-12-12T18:00"}, "end", "less than a week"),
        ({"timeZone": "Mars/Olympus"}, "timeZone", "Unknown time zone"),
        ({"countries": "Atlantis"}, "countries", "No country is called “Atlantis”"),
        ({"countries": "", "excludeCountries": "true"}, "countries", "Name the countries"),
    ],
)
def test_each_refused_input_is_named(engine, box, changes, field, message):
    account = _publisher(engine, box)
    with pytest.raises(FormError) as refused:
        _add(engine, account, **changes)
    assert message in refused.value.errors[field]
    assert _list(engine, account) == []


def test_ending_one_stops_it_now(engine, box):
    account = _publisher(engine, box)
    now = utcnow()
    start = (now - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    end = (now + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    promotion_id = _add(engine, account, weekly="", timeZone="UTC", start=start, end=end)
    assert [p.state for p in _list(engine, account)] == ["running"]
    row = _end(engine, account, promotion_id)
    assert row.ended_at is not None
    (shown,) = _list(engine, account)
    assert shown.state == "ended"
    assert "; ended " in shown.window


def test_a_publisher_never_reaches_another_offerwalls_promotions(engine, box):
    mine = _publisher(engine, box)
    other = _publisher(engine, box, email="other@example.com", company="Other Games")
    theirs = _add(engine, other)
    with pytest.raises(Forbidden):
        _list(engine, mine, requested=other.offerwall_id)
    with pytest.raises(Forbidden):
        _add(engine, mine, requested=other.offerwall_id)
    with pytest.raises(Forbidden):
        _end(engine, mine, theirs, requested=other.offerwall_id)
    # Asked without naming the offerwall, their own is the one: not this promotion.
    with pytest.raises(EconomicsError, match="No such promotion"):
        _end(engine, mine, theirs)
    with new_session(engine) as session:
        row = session.get(Promotion, theirs)
        assert row is not None and row.ended_at is None
    assert _list(engine, mine) == []


def test_staff_manage_any_offerwalls_promotions(engine, box):
    publisher = _publisher(engine, box)
    staff = make_account(Role.STAFF)
    owid = publisher.offerwall_id
    promotion_id = _add(engine, staff, requested=owid, name="Staff sale")
    assert [p.name for p in _list(engine, publisher)] == ["Staff sale"]
    assert [p.created_by for p in _list(engine, staff, requested=owid)] == ["staff@example.com"]
    _end(engine, staff, promotion_id, requested=owid)
    # Staff name the offerwall: one of another's is no such promotion there.
    other = _publisher(engine, box, email="other@example.com", company="Other Games")
    theirs = _add(engine, other)
    with pytest.raises(EconomicsError, match="No such promotion"):
        _end(engine, staff, theirs, requested=owid)
    with pytest.raises(Forbidden):
        _list(engine, staff)  # staff without an offerwall named


def test_a_designer_is_refused(engine, box):
    publisher = _publisher(engine, box)
    designer = make_account(Role.DESIGNER, studio_id="studio")
    with pytest.raises(Forbidden):
        _add(engine, designer, requested=publisher.offerwall_id)


def test_ends_in_words():
    now = datetime(2026, 12, 4, tzinfo=UTC)
    assert promotions.ends_in(now + timedelta(days=2, hours=4, minutes=3), now) == "2d 4h"
    assert promotions.ends_in(now + timedelta(hours=3, minutes=5), now) == "3h 5m"
    assert promotions.ends_in(now + timedelta(minutes=4, seconds=59), now) == "4m"
    assert promotions.ends_in(now - timedelta(minutes=1), now) == "0m"
