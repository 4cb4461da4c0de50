"""An offerwall's payout rules as staff set them on its page: staff only (designers and
publishers refused, whatever they send), the refusals staff read beside their inputs, and
every change reflected by `resolve`, which the listing and the conversions read."""

from __future__ import annotations

import pytest
from sqlmodel import select

from api.accounts import Forbidden
from api.core.db import new_session, write_session
from api.economics import EconomicsError, Resolved, Terms, payout_rules, resolve
from api.economics.terms import DEFAULT, OFFERWALL, SHARE
from api.publishers import staff_payouts
from models import Mission, PayoutRule, Role
from tests.factories import make_account, make_game, make_mission, make_offerwall

STAFF = make_account(Role.STAFF)


@pytest.fixture
def arena(engine, box):
    """An offerwall, and two missions of a game: one with revenue, one without."""
    game = make_game(engine, box, name="Arena")
    wall, _ = make_offerwall(engine, box, name="Rewards Wall")
    earning = make_mission(
        engine, game.game_id, title="Kill 10 players", payout="1.00", revenue="2.00"
    )
    plain = make_mission(engine, game.game_id, title="Reach level 5", payout="0.50")
    return wall.id, earning.id, plain.id


def _resolved(engine, wall_id: str, mission_id: str, country: str | None = None):
    with new_session(engine) as session:
        mission = session.get(Mission, mission_id)
        rules = payout_rules.for_mission(session, wall_id, mission_id)
        return resolve(Terms.of(mission), rules, country)


def _write(engine, use_case, *args, **kwargs):
    with write_session(engine) as session:
        return use_case(session, *args, **kwargs)


def test_staff_set_a_share_for_every_mission_and_resolve_follows(engine, arena):
    wall, earning, plain = arena
    assert _resolved(engine, wall, earning) == Resolved(1_000_000, DEFAULT)

    assert _write(engine, staff_payouts.set_share, STAFF, wall, "70") == 70.0
    assert _resolved(engine, wall, earning) == Resolved(1_400_000, SHARE)
    # A share needs revenue: the mission without it pays its own payout.
    assert _resolved(engine, wall, plain).rule == DEFAULT

    with new_session(engine) as session:
        shown = staff_payouts.payouts_of(session, STAFF, wall)
    assert (shown.share_percent, shown.share_by, shown.missions) == (70.0, STAFF.email, [])
    assert (shown.company, shown.status) == ("Rewards Wall", "approved")

    assert _write(engine, staff_payouts.clear_share, STAFF, wall) is True
    assert _resolved(engine, wall, earning).rule == DEFAULT
    assert _write(engine, staff_payouts.clear_share, STAFF, wall) is False  # a second click


def test_a_rule_for_one_mission_wins_over_the_share_and_is_removed(engine, arena):
    wall, earning, plain = arena
    _write(engine, staff_payouts.set_share, STAFF, wall, "70")
    rule = _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, payout="1.20")
    assert (rule.mission.title, rule.mission.game, rule.payout_micros) == (
        "Kill 10 players",
        "Arena",
        1_200_000,
    )
    assert _resolved(engine, wall, earning).payout_micros == 1_200_000
    assert _resolved(engine, wall, earning).rule == OFFERWALL

    # Saving the same mission again replaces its rule: one row, never two.
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, share="80")
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, share="80")
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, plain, payout="0.75")
    with new_session(engine) as session:
        shown = staff_payouts.payouts_of(session, STAFF, wall)
        stored = len(session.exec(select(PayoutRule).where(PayoutRule.offerwall_id == wall)).all())
    assert stored == 3  # the share for every mission and two missions' rules
    assert [(r.mission.title, r.payout_micros, r.share_percent) for r in shown.missions] == [
        ("Kill 10 players", None, 80.0),
        ("Reach level 5", 750_000, None),
    ]
    assert _resolved(engine, wall, earning).payout_micros == 1_600_000
    assert _resolved(engine, wall, plain).payout_micros == 750_000

    assert _write(engine, staff_payouts.remove_for_mission, STAFF, wall, earning) is True
    assert _write(engine, staff_payouts.remove_for_mission, STAFF, wall, earning) is False
    assert _resolved(engine, wall, earning).payout_micros == 1_400_000  # the share again


def test_a_countrys_payout_still_wins_over_the_offerwalls_rule(engine, box, arena):
    wall, _earning, _plain = arena
    game = make_game(engine, box, name="Global")
    mission = make_mission(
        engine,
        game.game_id,
        title="Win a ranked match",
        payout="1.00",
        revenue="2.00",
        payouts=[{"countries": ["US"], "payout": "3.00"}],
    )
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, mission.id, payout="1.20")
    assert _resolved(engine, wall, mission.id, "US").payout_micros == 3_000_000
    assert _resolved(engine, wall, mission.id, "DE").payout_micros == 1_200_000
    with new_session(engine) as session:
        shown = staff_payouts.preview(session, STAFF, wall, mission.id)
    assert (shown.payout_micros, shown.countries) == (1_200_000, {"US": 3_000_000})


def test_a_share_for_a_mission_without_revenue_is_refused_with_its_message(engine, arena):
    wall, _earning, plain = arena
    with pytest.raises(EconomicsError) as refused:
        _write(engine, staff_payouts.set_for_mission, STAFF, wall, plain, share="50")
    assert refused.value.field == "share"
    assert refused.value.message == (
        "“Reach level 5” has no revenue to share: set its revenue first, or a fixed payout."
    )
    with new_session(engine) as session:
        assert staff_payouts.payouts_of(session, STAFF, wall).missions == []


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"payout": ""}, "payout", "Enter an amount in USD."),
        ({"share": " "}, "share", "Enter a percentage from 0 to 100."),
        ({"payout": "-1"}, "payout", "A payout is an amount in USD from 0 to 100,000"),
        ({"share": "101"}, "share", "A revenue share is a percentage from 0 to 100"),
        ({"share": "abc"}, "share", "A revenue share is a percentage from 0 to 100"),
        ({}, "payout", "Give either a fixed payout or a revenue share."),
    ],
)
def test_bad_amounts_are_refused_beside_their_input(engine, arena, kwargs, field, message):
    wall, earning, _plain = arena
    with pytest.raises(EconomicsError) as refused:
        _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, **kwargs)
    assert refused.value.field == field and refused.value.message.startswith(message)


def test_a_mission_must_be_picked(engine, arena):
    wall, _earning, _plain = arena
    for mission in ("", "no-such-mission"):
        with pytest.raises(EconomicsError) as refused:
            _write(engine, staff_payouts.set_for_mission, STAFF, wall, mission, payout="1")
        assert refused.value.field == "mission"
    with pytest.raises(EconomicsError) as refused:
        _write(engine, staff_payouts.set_share, STAFF, wall, "")
    assert (refused.value.field, refused.value.message) == (
        "share",
        "Enter a percentage from 0 to 100.",
    )


def test_the_preview_shows_the_payout_next_to_the_default_revenue_and_margin(engine, arena):
    wall, earning, plain = arena
    with new_session(engine) as session:
        before = staff_payouts.preview(session, STAFF, wall, earning)
    assert (before.payout_micros, before.rule, before.margin_micros) == (
        1_000_000,
        DEFAULT,
        1_000_000,
    )
    assert (before.mission.payout_micros, before.mission.revenue_micros) == (1_000_000, 2_000_000)

    _write(engine, staff_payouts.set_share, STAFF, wall, "70")
    with new_session(engine) as session:
        after = staff_payouts.preview(session, STAFF, wall, earning)
        without_revenue = staff_payouts.preview(session, STAFF, wall, plain)
    assert (after.payout_micros, after.rule, after.margin_micros) == (1_400_000, SHARE, 600_000)
    assert after.own_rule is False  # the share for every mission
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, share="50")
    with new_session(engine) as session:
        own = staff_payouts.preview(session, STAFF, wall, earning)
    assert (own.payout_micros, own.rule, own.own_rule) == (1_000_000, SHARE, True)
    assert (without_revenue.payout_micros, without_revenue.margin_micros) == (500_000, None)


def test_the_picker_finds_missions_by_game_and_title(engine, box, arena):
    wall, _earning, _plain = arena
    other = make_game(engine, box, name="Kart Racer")
    make_mission(engine, other.game_id, title="Win a race", payout="0.30")
    with new_session(engine) as session:
        every, more = staff_payouts.find_missions(session, STAFF, wall)
        by_game, _ = staff_payouts.find_missions(session, STAFF, wall, "kart")
        by_title, _ = staff_payouts.find_missions(session, STAFF, wall, "LEVEL")
    assert [(m.game, m.title) for m in every] == [
        ("Arena", "Kill 10 players"),
        ("Arena", "Reach level 5"),
        ("Kart Racer", "Win a race"),
    ]
    assert more is False
    assert [m.title for m in by_game] == ["Win a race"]
    assert [m.title for m in by_title] == ["Reach level 5"]


@pytest.mark.parametrize("role", [Role.DESIGNER, Role.PUBLISHER])
def test_only_staff_see_or_change_an_offerwalls_payout_rules(engine, arena, role):
    wall, earning, _plain = arena
    someone = make_account(role, studio_id="studio", offerwall_id=wall)
    changes = [
        (staff_payouts.set_share, (someone, wall, "90"), {}),
        (staff_payouts.clear_share, (someone, wall), {}),
        (staff_payouts.set_for_mission, (someone, wall, earning), {"payout": "5"}),
        (staff_payouts.remove_for_mission, (someone, wall, earning), {}),
    ]
    reads = [
        (staff_payouts.payouts_of, (someone, wall)),
        (staff_payouts.find_missions, (someone, wall)),
        (staff_payouts.preview, (someone, wall, earning)),
    ]
    _write(engine, staff_payouts.set_for_mission, STAFF, wall, earning, payout="1.20")
    for use_case, args, kwargs in changes:
        with pytest.raises(Forbidden):
            _write(engine, use_case, *args, **kwargs)
    with new_session(engine) as session:
        for read, read_args in reads:
            with pytest.raises(Forbidden):
                read(session, *read_args)
    # Nothing changed: the staff's rule still decides.
    assert _resolved(engine, wall, earning).payout_micros == 1_200_000


def test_staff_are_refused_an_offerwall_that_does_not_exist(engine, arena):
    _wall, earning, _plain = arena
    with pytest.raises(Forbidden):
        _write(engine, staff_payouts.set_for_mission, STAFF, "no-such-wall", earning, payout="1")
