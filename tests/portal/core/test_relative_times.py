"""How long ago, as the System page writes it (`portal/components/formatting.py`): `age`
to its largest unit or two, `ago` with "just now" for the last few seconds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from portal.components.formatting import age, ago

NOW = datetime(2026, 11, 29, 14, 3, 9, tzinfo=UTC)


def test_age_writes_the_largest_unit_or_two():
    assert age(timedelta(seconds=45)) == "45 s"
    assert age(timedelta(minutes=12, seconds=30)) == "12 min"
    assert age(timedelta(hours=3)) == "3 h"
    assert age(timedelta(hours=3, minutes=5, seconds=2)) == "3 h 5 min"
    assert age(timedelta(days=1, hours=4)) == "1 day 4 h"
    assert age(timedelta(days=30)) == "30 days"


def test_a_moment_ahead_of_the_clock_is_no_age():
    assert age(timedelta(seconds=-20)) == "0 s"


def test_ago_says_just_now_for_the_last_seconds():
    assert ago(NOW - timedelta(seconds=2), NOW) == "just now"
    assert ago(NOW - timedelta(minutes=4), NOW) == "4 min ago"
    assert ago(None, NOW) == ""
