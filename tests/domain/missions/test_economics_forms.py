"""The editor's revenue, country payouts and budget (api/missions/forms.py, editor.py),
and the game's budget on its missions page (game_budget.py): saved and opened again
unchanged, each problem under its input, set only by the game's own studio or staff, and
the burn and the badges the missions list shows (docs/economics.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from sqlmodel import Session

from api.accounts import Forbidden
from api.core.db import write_session
from api.core.refusals import SignedOut
from api.economics.budgets import game_scope, mission_scope
from api.missions import editor, form_values, game_budget, offer_rows
from api.missions.forms import FormError, country_code, from_form
from models import BudgetSpend, Game, Mission, Role
from models.offer_schemas import MissionIn, mission_in
from tests.factories import make_account, make_game, make_mission, make_studio

FORM = {
    "title": "Win 3 ranked matches",
    "payout": "1.00",
    "destinationUrl": "https://game.example/ranked",
    "rule.event": "RANKED_WIN",
    "rule.completion.kind": "count",
    "rule.completion.threshold": "3",
    "isActive": "true",
    "allowMultipleConversions": "false",
    "revenue": "1.60",
    "payouts": "",
    "payouts.0.countries": "US, Canada",
    "payouts.0.payout": "1.20",
    "payouts.1.countries": "",  # a row left empty is no row
    "payouts.1.payout": "",
    "payouts.2.countries": "brazil; IN",
    "payouts.2.payout": "0.50",
    "budget.amount": "500",
    "budget.every": "day",
    "budget.timeZone": "America/New_York",
}


def errors(form: dict[str, str]) -> dict[str, str]:
    with pytest.raises(FormError) as refused:
        from_form(MissionIn, form)
    return refused.value.errors


def test_revenue_payouts_and_a_budget_are_saved_and_opened_again_unchanged(engine, box):
    game = make_game(engine, box).game_id
    with write_session(engine) as session:
        saved = editor.save_mission_form(session=session, game_id=game, form=FORM, mission_id=None)
        mission_id = saved.id
    with Session(engine) as session:
        stored = session.get(Mission, mission_id)
        assert stored is not None
        assert stored.revenue_micros == 1_600_000
        assert stored.payouts == [
            {"countries": ["CA", "US"], "payout": "1.20"},
            {"countries": ["BR", "IN"], "payout": "0.50"},
        ]
        assert stored.budget == {"amount": "500", "every": "day", "timeZone": "America/New_York"}
        values = form_values(mission_in(stored))
    assert {k: v for k, v in values.items() if k.startswith(("revenue", "payouts", "budget"))} == {
        "revenue": "1.6",
        "payouts.0.countries": "CA, US",
        "payouts.0.payout": "1.20",
        "payouts.1.countries": "BR, IN",
        "payouts.1.payout": "0.50",
        "budget.amount": "500",
        "budget.every": "day",
        "budget.timeZone": "America/New_York",
    }
    # The editor's form as it opens saves the same mission again.
    with write_session(engine) as session:
        again = editor.save_mission_form(
            session=session, game_id=game, form=values, mission_id=mission_id
        )
        assert mission_in(again) == mission_in(stored)


def test_rows_removed_and_a_budget_emptied_are_gone_after_the_save(engine, box):
    game = make_game(engine, box).game_id
    with write_session(engine) as session:
        mission_id = editor.save_mission_form(
            session=session, game_id=game, form=FORM, mission_id=None
        ).id
    emptied = {k: v for k, v in FORM.items() if not k.startswith("payouts.")}
    # A budget whose amount is emptied is none, whatever its period and zone say.
    emptied |= {"budget.amount": "", "budget.every": "week", "revenue": ""}
    with write_session(engine) as session:
        saved = editor.save_mission_form(
            session=session, game_id=game, form=emptied, mission_id=mission_id
        )
        assert (saved.revenue_micros, saved.payouts, saved.budget) == (None, None, None)


@pytest.mark.parametrize(
    ("changes", "where", "message"),
    [
        (
            {"revenue": ""},
            "revenue",
            "A budget counts revenue: set the mission's revenue first.",
        ),
        (
            {"payouts.2.countries": "BR, us"},
            "payouts.2.countries",
            "A country has one payout: US is in two rows.",
        ),
        ({"payouts.2.countries": "Korea"}, "payouts.2.countries", "No country is called “Korea”"),
        ({"payouts.2.countries": "UX"}, "payouts.2.countries", "No country is called “UX”"),
        ({"payouts.1.payout": "2"}, "payouts.1.countries", "Name the countries"),
        ({"payouts.0.payout": ""}, "payouts.0.payout", "Enter the payout for these countries"),
        ({"payouts.0.payout": "-1"}, "payouts.0.payout", "0"),
        ({"budget.amount": "0"}, "budget.amount", "above 0"),
        ({"budget.timeZone": "Mars/Base"}, "budget.timeZone", "Unknown time zone Mars/Base"),
        ({"revenue": "lots"}, "revenue", "Enter a number."),
    ],
)
def test_each_problem_is_named_under_its_input(changes, where, message):
    found = errors(FORM | changes)
    assert where in found, found
    assert message in found[where]


def test_every_problem_of_the_card_is_named_at_once():
    found = errors(
        FORM | {"payouts.0.payout": "", "payouts.2.countries": "Atlantis", "budget.amount": "x"}
    )
    assert set(found) == {"payouts.0.payout", "payouts.2.countries", "budget.amount"}


@pytest.mark.parametrize(
    ("typed", "code"),
    [("us", "US"), ("DEU", "DE"), ("UK", "GB"), ("Deutschland", "DE"), ("south korea", "KR")],
)
def test_a_payouts_countries_are_codes_or_whole_names(typed, code):
    assert country_code(typed) == code


@pytest.mark.parametrize("typed", ["UX", "XYZ", "germ", "Korea"])
def test_a_part_of_a_name_or_an_unknown_code_is_no_country(typed):
    assert country_code(typed) is None


BUDGET = {"budget.amount": "250.5", "budget.every": "week", "budget.timeZone": "Europe/Berlin"}


def test_a_designer_sets_and_removes_their_games_budget(engine, box):
    studio = make_studio(engine)
    game = make_game(engine, box, studio_id=studio).game_id
    designer_account = make_account(Role.DESIGNER, studio_id=studio)
    with write_session(engine) as session:
        game_budget.save_game_budget(
            session=session, account=designer_account, game_id=game, form=BUDGET
        )
    with Session(engine) as session:
        row = session.get(Game, game)
        assert row is not None
        assert row.budget == {"amount": "250.5", "every": "week", "timeZone": "Europe/Berlin"}
        assert game_budget.game_budget_values(
            session=session, account=designer_account, game_id=game
        ) == {"budget.amount": "250.5", "budget.every": "week", "budget.timeZone": "Europe/Berlin"}
    # An emptied amount removes it, like the remove button.
    with write_session(engine) as session:
        assert (
            game_budget.save_game_budget(
                session=session,
                account=designer_account,
                game_id=game,
                form=BUDGET | {"budget.amount": ""},
            )
            is None
        )
    with write_session(engine) as session:
        game_budget.save_game_budget(
            session=session, account=make_account(Role.STAFF), game_id=game, form=BUDGET
        )
        game_budget.remove_game_budget(session=session, account=designer_account, game_id=game)
    with Session(engine) as session:
        row = session.get(Game, game)
        assert row is not None and row.budget is None


def test_a_games_budget_form_names_its_problems():
    with pytest.raises(FormError) as refused:
        from_form(
            game_budget.GameBudgetForm, BUDGET | {"budget.amount": "-3", "budget.timeZone": "X"}
        )
    assert set(refused.value.errors) == {"budget.amount", "budget.timeZone"}


@pytest.mark.parametrize(
    "account",
    [
        make_account(Role.DESIGNER, studio_id="another-studio"),
        make_account(Role.DESIGNER, studio_id=None),
        make_account(Role.PUBLISHER, offerwall_id="wall"),
        None,
    ],
    ids=["designer of another studio", "designer without a studio", "publisher", "signed out"],
)
def test_only_the_games_studio_and_staff_set_its_budget(engine, box, account):
    studio = make_studio(engine)
    game = make_game(engine, box, studio_id=studio).game_id
    with pytest.raises((Forbidden, SignedOut)), write_session(engine) as session:
        game_budget.save_game_budget(session=session, account=account, game_id=game, form=BUDGET)
    with pytest.raises((Forbidden, SignedOut)), write_session(engine) as session:
        game_budget.remove_game_budget(session=session, account=account, game_id=game)
    with pytest.raises((Forbidden, SignedOut)), Session(engine) as session:
        game_budget.game_budget_values(session=session, account=account, game_id=game)
    with Session(engine) as session:
        row = session.get(Game, game)
        assert row is not None and row.budget is None


NOW = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)


def test_the_missions_list_shows_revenue_burn_and_missions_whose_budget_is_spent(engine, box):
    studio = make_studio(engine)
    game = make_game(engine, box, studio_id=studio).game_id
    daily = make_mission(
        engine,
        game,
        title="Daily spender",
        revenue="2.00",
        budget={"amount": "10", "every": "day", "timeZone": "UTC"},
    )
    total = make_mission(
        engine,
        game,
        title="Launch week",
        revenue="3.00",
        budget={"amount": "30", "every": "total"},
    )
    free = make_mission(engine, game, title="No budget")
    with write_session(engine) as session:
        game_budget.save_game_budget(
            session=session,
            account=make_account(Role.STAFF),
            game_id=game,
            form={"budget.amount": "1000", "budget.every": "month", "budget.timeZone": "UTC"},
        )
        session.add(
            BudgetSpend(
                scope=mission_scope(daily.id),
                period="day:2026-11-28",
                spent_micros=9_000_000,
                warned=80,
            )
        )
        session.add(
            BudgetSpend(
                scope=mission_scope(total.id), period="total", spent_micros=30_000_000, warned=100
            )
        )
        session.add(
            BudgetSpend(
                scope=game_scope(game), period="month:2026-11-01", spent_micros=39_000_000, warned=0
            )
        )
    with Session(engine) as session:
        rows = {r.title: r for r in offer_rows.game_offers(session=session, game_id=game, now=NOW)}
        burns = game_budget.budget_burn(session=session, game_id=game, now=NOW)
    assert rows["Daily spender"].revenue_micros == 2_000_000
    assert rows["No budget"].revenue_micros is None
    badges = {title: [b.text for b in r.live if b.kind == "budget"] for title, r in rows.items()}
    assert badges == {
        "Daily spender": ["Budget spent · reopens 29 Nov"],
        "Launch week": ["Budget spent · raise it to reopen"],
        "No budget": [],
    }
    assert [(b.label, b.spent_micros, b.percent, b.turns) for b in burns] == [
        ("The whole game", 39_000_000, 3, datetime(2026, 12, 1, tzinfo=UTC)),
        ("Daily spender", 9_000_000, 90, datetime(2026, 11, 29, tzinfo=UTC)),
        ("Launch week", 30_000_000, 100, None),
    ]
    assert free.budget is None
    assert Decimal(rows["Launch week"].revenue_micros or 0) / 1_000_000 == Decimal(3)
