"""The game's budget of revenue on the missions page: its form (set or removed by the
studio's designers or staff) and the burn of every budget of the game this period."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import sqlalchemy as sa
from pydantic import BaseModel
from sqlmodel import Session, col

from api.accounts import Account, game_for
from api.economics import budgets
from api.missions.forms import form_values, from_form
from models import Mission
from models.offer_schemas import BudgetIn
from models.types import utcnow


class GameBudgetForm(BaseModel):
    """The game's budget form: `budget.amount`, `budget.every`, `budget.timeZone`; all
    left empty (or the amount emptied), the game has no budget."""

    budget: BudgetIn | None = None


def game_budget_values(
    *, session: Session, account: Account | None, game_id: str
) -> dict[str, str]:
    """The game's budget as its form's inputs (empty when it has none)."""
    game = game_for(session=session, account=account, game_id=game_id)
    return form_values(GameBudgetForm.model_validate({"budget": game.budget}))


def save_game_budget(
    *, session: Session, account: Account | None, game_id: str, form: Mapping[str, str]
) -> BudgetIn | None:
    """Set or remove a game's budget of revenue from its form: only on a game the account
    manages (its studio's for a designer; any for staff). Its missions reopen at once
    when the new budget has room."""
    game = game_for(session=session, account=account, game_id=game_id)
    budget = from_form(GameBudgetForm, form).budget
    budgets.set_game_budget(session, game.id, budget)
    return budget


def remove_game_budget(*, session: Session, account: Account | None, game_id: str) -> None:
    """Take a game's budget away (the account manages the game)."""
    game = game_for(session=session, account=account, game_id=game_id)
    budgets.set_game_budget(session, game.id, None)


def budget_burn(
    *, session: Session, game_id: str, now: datetime | None = None
) -> list[budgets.Burn]:
    """The game's budget and its missions' own, each with what its current period spent."""
    missions = session.execute(
        sa.select(Mission).where(col(Mission.game_id) == game_id).order_by(col(Mission.created_at))
    ).scalars()
    return budgets.burn(session.connection(), game_id, list(missions), now or utcnow())
