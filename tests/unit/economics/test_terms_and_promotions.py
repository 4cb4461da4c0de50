"""The payout precedence and the promotions' windows (docs/economics.md,
docs/publisher-integration.md#promotions), as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from pydantic import ValidationError

from api.core.money import in_currency, multiplier_text
from api.economics import PromotionIn, Sale, Terms, WallRules, best, resolve
from api.economics.terms import portion, stage_payouts

TERMS = Terms("m1", 1_000_000, 2_000_000, {"US": 1_500_000, "CA": 1_500_000})


@pytest.mark.parametrize(
    ("rules", "country", "expected"),
    [
        (WallRules(), None, (1_000_000, "default")),
        (WallRules(), "US", (1_500_000, "country")),
        (WallRules(share_percent=40), "BR", (800_000, "share")),
        (WallRules(share_percent=40), "US", (1_500_000, "country")),  # country first
        (WallRules({"m1": (700_000, None)}, 40), "BR", (700_000, "offerwall")),
        (WallRules({"m1": (None, 75.5)}, 40), "BR", (1_510_000, "share")),  # own share first
        (WallRules({"m2": (700_000, None)}), "BR", (1_000_000, "default")),  # another mission's
    ],
)
def test_the_most_specific_rule_wins(rules, country, expected):
    found = resolve(TERMS, rules, country)
    assert (found.payout_micros, found.rule) == expected


def test_a_share_without_revenue_falls_through_to_the_next_rule():
    no_revenue = Terms("m1", 1_000_000)
    assert resolve(no_revenue, WallRules(share_percent=70), None).rule == "default"
    rules = WallRules({"m1": (None, 70.0)}, 50)
    assert resolve(no_revenue, rules, None).payout_micros == 1_000_000


def test_a_ladders_stages_share_a_resolved_payout_in_proportion_exactly():
    ladder = Terms("m1", 1_500_000, stages=(100_000, 400_000, 1_000_000))
    assert stage_payouts(3_000_000, ladder) == [200_000, 800_000, 2_000_000]
    assert stage_payouts(1_500_000, ladder) == [100_000, 400_000, 1_000_000]
    odd = stage_payouts(1_000_001, Terms("m", 3, stages=(1, 1, 1)))
    assert sum(odd) == 1_000_001 and odd == [333_333, 333_333, 333_335]
    assert [portion(10, [0, 0], i) for i in range(2)] == [5, 5]  # free stages: equal parts


def test_a_multiplier_boosts_the_currency_amount_rounded_once():
    assert in_currency(1_000_000, exchange_rate=100, decimals=0, multiplier=250) == Decimal(250)
    assert in_currency(1_005_000, exchange_rate=1, decimals=2, multiplier=150) == Decimal("1.51")
    assert [multiplier_text(m) for m in (100, 200, 250, 125)] == ["1", "2", "2.5", "1.25"]


def sale(**fields) -> Sale:
    base = {
        "id": "s1",
        "name": "Sale",
        "multiplier": 200,
        "starts_at": datetime(2026, 12, 1, tzinfo=UTC),
        "ends_at": datetime(2026, 12, 2, tzinfo=UTC),
    }
    return Sale(**(base | fields))


def test_a_window_holds_from_its_start_until_its_end_or_an_early_end():
    s = sale()
    assert s.window(datetime(2026, 11, 30, 23, 59, tzinfo=UTC)) is None
    assert s.window(datetime(2026, 12, 1, tzinfo=UTC)) == (s.starts_at, s.ends_at)
    assert s.window(datetime(2026, 12, 2, tzinfo=UTC)) is None
    stopped = sale(ended_at=datetime(2026, 12, 1, 12, tzinfo=UTC))
    assert stopped.window(datetime(2026, 12, 1, 11, tzinfo=UTC))[1] == stopped.ended_at
    assert stopped.window(datetime(2026, 12, 1, 12, tzinfo=UTC)) is None


def test_a_weekly_window_keeps_its_local_hours_across_the_dst_change():
    # Fridays 18:00-23:00 in Berlin, from 2026-10-16 (CEST, UTC+2); on 2026-10-25 Berlin
    # goes to CET (UTC+1): the window then runs 17:00-22:00 UTC.
    weekly = sale(
        starts_at=datetime(2026, 10, 16, 16, tzinfo=UTC),
        ends_at=datetime(2026, 10, 16, 21, tzinfo=UTC),
        weekly=True,
        zone="Europe/Berlin",
    )
    assert weekly.window(datetime(2026, 10, 23, 16, 30, tzinfo=UTC)) is not None  # CEST
    assert weekly.window(datetime(2026, 10, 30, 16, 30, tzinfo=UTC)) is None  # 17:30 CET
    start, end = weekly.window(datetime(2026, 10, 30, 21, 30, tzinfo=UTC))
    assert (start, end) == (
        datetime(2026, 10, 30, 17, tzinfo=UTC),
        datetime(2026, 10, 30, 22, tzinfo=UTC),
    )
    assert weekly.window(datetime(2026, 10, 31, 17, 30, tzinfo=UTC)) is None  # a Saturday
    assert weekly.window(datetime(2026, 10, 9, 17, tzinfo=UTC)) is None  # before the first


def test_countries_and_the_first_conversion_decide_who_a_sale_reaches():
    us_only = sale(countries=frozenset({"US"}))
    assert us_only.reaches("US", None) and not us_only.reaches("DE", None)
    assert not us_only.reaches(None, None)  # an unknown country is not in the list
    not_us = sale(countries=frozenset({"US"}), exclude=True)
    assert not_us.reaches("DE", None) and not_us.reaches(None, None)
    assert not not_us.reaches("US", None)
    first = sale(first_only=True)
    assert first.reaches("US", True) and first.reaches("US", None)
    assert not first.reaches("US", False)


def test_overlapping_sales_never_stack_the_largest_wins_and_a_tie_goes_to_the_first():
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)
    small = sale(id="a", multiplier=150, starts_at=now - timedelta(hours=3))
    large = sale(id="b", multiplier=300, name="Triple")
    late_tie = sale(id="c", multiplier=300, starts_at=now - timedelta(hours=1), name="Late")
    found = best([small, late_tie, large], now, country="US", first=None)
    assert (found.name, found.multiplier) == ("Triple", 300)
    assert best([small, large], now - timedelta(hours=13), country=None, first=None) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"multiplier": "1"}, "greater than or equal to 1.01"),
        ({"multiplier": "10.5"}, "less than or equal to 10"),
        ({"multiplier": "1.555"}, "decimal places"),
        ({"end": "2026-11-30T00:00:00Z"}, "The end must be after the start."),
        ({"start": "2026-12-01T00:00:00"}, "with its zone"),
        ({"weekly": True, "end": "2026-12-09T00:00:00Z"}, "less than a week"),
        ({"countries": ["USA"]}, "not a country: USA"),
        ({"excludeCountries": True}, "Name the countries to exclude."),
        ({"timeZone": "Mars/Olympus"}, "Unknown time zone"),
        ({"name": "   "}, "Give the promotion a name."),
    ],
)
def test_a_promotion_is_refused_with_a_clear_message(change, message):
    data = {
        "name": "Double Gems",
        "multiplier": "2",
        "start": "2026-12-01T00:00:00Z",
        "end": "2026-12-02T00:00:00Z",
    }
    with pytest.raises(ValidationError) as refused:
        PromotionIn.model_validate(data | change)
    assert message in str(refused.value)
