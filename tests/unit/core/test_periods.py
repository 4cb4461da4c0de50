"""Periods of live operations and a pool's picks (api/core/periods.py)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from api.core.periods import Period, in_draw, period_picks, picks


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


@pytest.mark.parametrize(
    ("zone", "moment", "key", "start", "end"),
    [
        # New York leaves DST on 2026-11-01: a 25-hour day.
        (
            "America/New_York",
            "2026-11-01T12:00:00-05:00",
            "2026-11-01",
            "2026-11-01T04:00:00+00:00",
            "2026-11-02T05:00:00+00:00",
        ),
        # …and enters it on 2026-03-08: a 23-hour day.
        (
            "America/New_York",
            "2026-03-08T12:00:00-04:00",
            "2026-03-08",
            "2026-03-08T05:00:00+00:00",
            "2026-03-09T04:00:00+00:00",
        ),
        # 23:30 EST is already the next day in UTC: the period is New York's.
        (
            "America/New_York",
            "2026-11-01T23:30:00-05:00",
            "2026-11-01",
            "2026-11-01T04:00:00+00:00",
            "2026-11-02T05:00:00+00:00",
        ),
        # Santiago skips its midnight on 2026-09-06 (00:00 → 01:00): the day starts at 01:00.
        (
            "America/Santiago",
            "2026-09-06T12:00:00-03:00",
            "2026-09-06",
            "2026-09-06T04:00:00+00:00",
            "2026-09-07T03:00:00+00:00",
        ),
        (
            "UTC",
            "2026-12-31T23:59:59+00:00",
            "2026-12-31",
            "2026-12-31T00:00:00+00:00",
            "2027-01-01T00:00:00+00:00",
        ),
    ],
)
def test_a_day_is_midnight_to_midnight_in_its_zone(zone, moment, key, start, end):
    period = Period("day", zone)
    assert period.key(utc(moment)) == key
    assert period.bounds(utc(moment)) == (utc(start), utc(end))
    assert period.bounds_of(key) == (utc(start), utc(end))


def test_a_week_starts_on_monday_unless_told_and_a_month_on_the_first():
    saturday = utc("2026-11-28T12:00:00+00:00")
    assert Period("week").key(saturday) == "2026-11-23"  # a Monday
    assert Period("week", week_starts_on="sunday").key(saturday) == "2026-11-22"
    assert Period("week", week_starts_on="saturday").key(saturday) == "2026-11-28"
    assert Period("week").ends(saturday) == utc("2026-11-30T00:00:00+00:00")
    assert Period("month", "Europe/Berlin").bounds(saturday) == (
        utc("2026-11-01T00:00:00+01:00"),
        utc("2026-12-01T00:00:00+01:00"),
    )
    # December into January, and February of a leap year.
    assert Period("month").ends(utc("2026-12-15T00:00:00+00:00")) == utc(
        "2027-01-01T00:00:00+00:00"
    )
    assert Period("month").ends(utc("2028-02-29T12:00:00+00:00")) == utc(
        "2028-03-01T00:00:00+00:00"
    )


def test_consecutive_periods_meet_without_a_gap_across_a_year_of_days():
    period = Period("day", "Europe/London")
    moment = utc("2026-01-01T12:00:00+00:00")
    for _ in range(366):
        start, end = period.bounds(moment)
        assert period.bounds(end)[0] == end
        assert start <= moment < end
        moment = end + timedelta(hours=12)


POOL = [f"mission-{n}" for n in range(6)]


def test_a_player_keeps_the_same_picks_within_a_period_and_gets_others_across_periods():
    chosen = picks(POOL, 3, pool="daily", offerwall_id="ow", uid="anna", key="2026-12-10")
    assert len(chosen) == 3
    again = picks(POOL, 3, pool="daily", offerwall_id="ow", uid="anna", key="2026-12-10")
    assert again == chosen
    # The order the members come in does not matter.
    assert picks(POOL[::-1], 3, pool="daily", offerwall_id="ow", uid="anna", key="2026-12-10") == (
        chosen
    )
    days = {
        picks(POOL, 3, pool="daily", offerwall_id="ow", uid="anna", key=f"2026-12-{d:02d}")
        for d in range(1, 31)
    }
    assert len(days) > 5


def test_each_mission_of_a_pool_of_6_goes_to_about_half_of_1000_players():
    shown = Counter(
        mission
        for n in range(1000)
        for mission in picks(
            POOL, 3, pool="daily", offerwall_id="ow", uid=f"player-{n}", key="2026-12-10"
        )
    )
    assert set(shown) == set(POOL)
    # Binomial(1000, 0.5): 4.5 standard deviations either side of 500.
    assert all(430 <= count <= 570 for count in shown.values()), shown


def test_a_pool_no_larger_than_its_size_shows_every_mission():
    assert picks(POOL[:2], 3, pool="p", offerwall_id="ow", uid="u", key="k") == frozenset(POOL[:2])


NEW_YORK = Period("day", "America/New_York")
# New York leaves DST on 2026-11-01: that day runs 04:00 UTC to 05:00 UTC the next day.
NOV_1 = utc("2026-11-01T04:00:00+00:00")


def _order(members: list[str], uid: str, key: str) -> list[str]:
    """A player's order of the members: the n-th is the one the n picks add to n-1."""
    order: list[str] = []
    for size in range(1, len(members) + 1):
        chosen = picks(members, size, pool="ny", offerwall_id="ow", uid=uid, key=key)
        order += sorted(chosen - set(order))
    return order


def test_a_member_that_ends_mid_period_gives_its_place_to_the_next_of_each_players_order():
    members = [(m, None) for m in POOL]
    now = utc("2026-11-01T18:00:00+00:00")
    for uid in (f"player-{n}" for n in range(50)):
        order = _order(POOL, uid, "2026-11-01")
        chosen = period_picks(members, 3, NEW_YORK, pool="ny", offerwall_id="ow", uid=uid, now=now)
        assert chosen == frozenset(order[:3])
        left = [m for m in members if m[0] != order[1]]  # the second pick ends
        assert period_picks(
            left, 3, NEW_YORK, pool="ny", offerwall_id="ow", uid=uid, now=now
        ) == frozenset([order[0], order[2], order[3]])


def test_a_member_that_joins_mid_period_waits_for_the_next_period_across_the_dst_change():
    late = utc("2026-11-02T04:30:00+00:00")  # 23:30 on 1 November in New York
    members = [(m, None) for m in POOL[:4]] + [("joined", late), ("started", late)]
    assert in_draw(members, NOV_1) == POOL[:4]
    assert in_draw(members, utc("2026-11-02T05:00:00+00:00")) == [m for m, _ in members]
    for uid in (f"player-{n}" for n in range(50)):
        for now in (late, utc("2026-11-02T04:59:59+00:00")):
            chosen = period_picks(
                members, 2, NEW_YORK, pool="ny", offerwall_id="ow", uid=uid, now=now
            )
            assert chosen == picks(
                POOL[:4], 2, pool="ny", offerwall_id="ow", uid=uid, key="2026-11-01"
            )
    # From midnight in New York on, the draw has all six.
    turned = {
        uid: period_picks(
            members,
            2,
            NEW_YORK,
            pool="ny",
            offerwall_id="ow",
            uid=uid,
            now=utc("2026-11-02T05:00:00+00:00"),
        )
        for uid in (f"player-{n}" for n in range(50))
    }
    assert any("joined" in chosen for chosen in turned.values())


def test_a_new_pool_draws_from_the_members_it_had_when_its_first_one_joined():
    first = utc("2026-11-01T15:00:00+00:00")
    members = [("a", first), ("b", first), ("c", first + timedelta(hours=1))]
    assert in_draw(members, NOV_1) == ["a", "b"]
    # Once "a" and "b" end, what is left is drawn from.
    assert in_draw(members[2:], NOV_1) == ["c"]
    assert in_draw([], NOV_1) == []
