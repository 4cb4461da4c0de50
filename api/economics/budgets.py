"""Budgets: at most so much revenue a day, a week, a month or in total, for one mission or
for a whole game (docs/economics.md#budgets).

Each conversion with revenue raises its mission's budget and its game's, atomically: a
conditional upsert that refuses to pass the budget, in the conversion's transaction, so a
budget holds under any concurrency (PostgreSQL locks the row; SQLite has one writer). A
held conversion counts as spent; a rejected or reversed one gives its revenue back. When
what is left is less than a mission's revenue, the mission is closed (off the listing,
its clicks refused) until the period turns. A ladder's stage draws its part of the
revenue, so a ladder is judged by the stage a player would be paid next: a new player's
is the first. The studio's designers get one mail at 80% and one when the budget closes,
per budget and period."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from api import audit
from api.core.catalog import bump
from api.core.money import format_usd as usd_text
from api.core.periods import Period
from api.core.sql import dialect_insert
from api.economics.errors import EconomicsError
from api.economics.terms import micros, revenue_parts
from api.mail import outbox as mail
from models import Game, Role, User, tables

_spend = tables.budget_spend
_game = tables.game
_conversion = tables.conversion
WARN_AT = 80  # percent


@dataclass(frozen=True)
class Budget:
    """A budget: `amount` USD micros `every` day, week, month (in `zone`) or in total."""

    amount_micros: int
    every: str = "day"
    zone: str = "UTC"

    @classmethod
    def of(cls, stored: dict[str, Any] | None) -> Budget | None:
        """From a stored `budget` {amount, every, timeZone}; None for none."""
        if not stored:
            return None
        return cls(
            micros(stored["amount"]),
            str(stored.get("every") or "day"),
            str(stored.get("timeZone") or "UTC"),
        )

    def period(self, now: datetime) -> str:
        """The counter's period: "day:2026-11-28", …, or "total"."""
        if self.every == "total":
            return "total"
        return f"{self.every}:{Period(self.every, self.zone).key(now)}"

    def turns(self, now: datetime) -> datetime | None:
        """When the period holding `now` ends (None: a total budget never turns)."""
        return None if self.every == "total" else Period(self.every, self.zone).ends(now)


def mission_scope(mission_id: str) -> str:
    return f"mission:{mission_id}"


def game_scope(game_id: str) -> str:
    return f"game:{game_id}"


@dataclass(frozen=True)
class Charge:
    """One budget a conversion draws on, with the revenues of the conversions that draw on
    it (a mission's budget: its own; a game's: each paying mission's; a ladder's: each
    stage's part), which say when what is left closes one of them."""

    scope: str
    budget: Budget
    game_id: str
    label: str  # for the mail: "the budget of Kill 10"
    revenues: tuple[int, ...] = ()

    def crossed(self, before: int, after: int) -> bool:
        """Whether raising the spend from `before` to `after` closes a mission or a
        ladder's stage (its next conversion fitted before and does not now)."""
        limit = self.budget.amount_micros
        return any(before + r <= limit < after + r for r in self.revenues)


def charges(mission: Any, game_budget: dict[str, Any] | None, *, game_id: str) -> list[Charge]:
    """The budgets a conversion of `mission` (with its `budget`, `title`) draws on: its own,
    then its game's."""
    found = []
    own = Budget.of(mission.budget)
    if own is not None:
        title = getattr(mission, "title", "")
        revenues = tuple(sorted(set(parts(mission))))
        found.append(Charge(mission_scope(mission.id), own, game_id, f"“{title}”", revenues))
    shared = Budget.of(game_budget)
    if shared is not None:
        found.append(Charge(game_scope(game_id), shared, game_id, "the game"))
    return found


def parts(mission: Any) -> tuple[int, ...]:
    """What each conversion of `mission` (a row with revenue_micros and stages) draws: its
    revenue, or each of a ladder's stages its part of it; () without revenue."""
    stages = [micros(stage["payout"]) for stage in mission.stages or ()]
    return revenue_parts(mission.revenue_micros, stages)


def game_budget(db: Any, game_id: str) -> dict[str, Any] | None:
    return db.execute(sa.select(_game.c.budget).where(_game.c.id == game_id)).scalar()


def spend(session: Session, charge: Charge, revenue_micros: int, now: datetime) -> int | None:
    """Raise a budget's spend by a conversion's revenue unless that passes it: the new
    total, or None (nothing raised)."""
    period = charge.budget.period(now)
    limit = charge.budget.amount_micros
    if revenue_micros > limit:
        return None
    dialect = session.get_bind().dialect.name
    statement = dialect_insert(dialect, _spend).values(
        scope=charge.scope, period=period, spent_micros=revenue_micros, warned=0
    )
    statement = statement.on_conflict_do_update(
        index_elements=("scope", "period"),
        set_={"spent_micros": _spend.c.spent_micros + revenue_micros},
        where=_spend.c.spent_micros + revenue_micros <= limit,
    ).returning(_spend.c.spent_micros)
    return session.execute(statement).scalar()


def give_back(session: Session, scope: str, period: str, revenue_micros: int) -> None:
    """Lower a budget's spend in one period by a conversion's revenue."""
    left = _spend.c.spent_micros - revenue_micros
    session.execute(
        sa.update(_spend)
        .where(_spend.c.scope == scope, _spend.c.period == period)
        .values(spent_micros=sa.case((left < 0, 0), else_=left))
    )


def warn(session: Session, charge: Charge, spent: int, now: datetime) -> None:
    """Mail the studio's designers once when a budget passes 80% and once when it is spent
    (what is left is less than any of its missions' revenue)."""
    limit = charge.budget.amount_micros
    if spent + min(charge.revenues, default=1) > limit:
        level = 100
    elif spent * 100 >= limit * WARN_AT:
        level = WARN_AT
    else:
        return
    raised = session.execute(
        sa.update(_spend)
        .where(
            _spend.c.scope == charge.scope,
            _spend.c.period == charge.budget.period(now),
            _spend.c.warned < level,
        )
        .values(warned=level)
        .returning(_spend.c.warned)
    ).first()
    if not raised:
        return
    game = session.execute(
        sa.select(_game.c.name, _game.c.studio_id).where(_game.c.id == charge.game_id)
    ).first()
    if game is None or game.studio_id is None:
        return
    designers = session.execute(
        sa.select(col(User.email)).where(
            col(User.studio_id) == game.studio_id, col(User.role) == Role.DESIGNER
        )
    ).scalars()
    turns = charge.budget.turns(now)
    when = "for good (a total budget)" if turns is None else f"until {turns:%Y-%m-%d %H:%M} UTC"
    for email in designers:
        if level == 100:
            subject = f"{game.name}: {charge.label} budget is spent"
            body = (
                f"The {_every(charge.budget)} budget of {charge.label} in {game.name} "
                f"({usd_text(limit)}) is spent: {usd_text(spent)}. Its offers are off the "
                f"offerwalls {when}. Raise the budget in the portal to reopen them.\n"
            )
        else:
            subject = f"{game.name}: {charge.label} budget is at {WARN_AT}%"
            body = (
                f"The {_every(charge.budget)} budget of {charge.label} in {game.name} has "
                f"spent {usd_text(spent)} of {usd_text(limit)}.\n"
            )
        mail.enqueue(session, to=email, subject=subject, body=body)


def _every(budget: Budget) -> str:
    return {"day": "daily", "week": "weekly", "month": "monthly"}.get(budget.every, "total")


# --- reading ------------------------------------------------------------------------------


def closed(db: Any, missions: Sequence[Any], now: datetime) -> dict[str, datetime | None]:
    """Of these missions (rows with id, game_id, revenue_micros, stages, budget), those
    whose own budget or game's cannot take what a new player is paid next at `now` (a
    ladder's first stage), with when they open again (None: a total budget; only raising
    it opens them)."""
    return {
        mission_id: stages[0]
        for mission_id, stages in short_stages(db, missions, now).items()
        if 0 in stages
    }


def short_stages(
    db: Any, missions: Sequence[Any], now: datetime
) -> dict[str, dict[int, datetime | None]]:
    """Of these missions (as for `closed`), the conversions their own budget or game's
    cannot take at `now`: by mission, the number from 0 of each such ladder stage (0 for a
    mission without stages), with when it fits again (None: only raising a total budget
    makes it fit)."""
    paying = [m for m in missions if m.revenue_micros]
    if not paying:
        return {}
    games = {
        row.id: row.budget
        for row in db.execute(
            sa.select(_game.c.id, _game.c.budget).where(
                _game.c.id.in_(sorted({m.game_id for m in paying}))
            )
        )
    }
    wanted: dict[tuple[str, str], list[tuple[str, int, tuple[int, ...], datetime | None]]] = {}
    for m in paying:
        for charge in charges(m, games.get(m.game_id), game_id=m.game_id):
            key = (charge.scope, charge.budget.period(now))
            wanted.setdefault(key, []).append(
                (m.id, charge.budget.amount_micros, parts(m), charge.budget.turns(now))
            )
    if not wanted:
        return {}
    spent = dict(((r.scope, r.period), r.spent_micros) for r in _rows(db, wanted))
    found: dict[str, dict[int, datetime | None]] = {}
    for key, items in wanted.items():
        for mission_id, limit, revenues, turns in items:
            for stage, revenue in enumerate(revenues):
                if spent.get(key, 0) + revenue <= limit:
                    continue
                stages = found.setdefault(mission_id, {})
                reopen = turns
                if stage in stages:
                    earlier = stages[stage]
                    reopen = None if earlier is None or turns is None else max(earlier, turns)
                stages[stage] = reopen
    return found


def _rows(db: Any, wanted: Iterable[tuple[str, str]]) -> Any:
    keys = list(wanted)
    return db.execute(
        sa.select(_spend).where(
            _spend.c.scope.in_(sorted({k[0] for k in keys})),
            _spend.c.period.in_(sorted({k[1] for k in keys})),
        )
    )


@dataclass(frozen=True)
class Burn:
    """A budget as staff and designers read it."""

    scope: str
    label: str
    budget: Budget
    period: str
    spent_micros: int
    turns: datetime | None

    @property
    def percent(self) -> int:
        return min(100, self.spent_micros * 100 // max(1, self.budget.amount_micros))


def burn(db: Any, game_id: str, missions: Sequence[Any], now: datetime) -> list[Burn]:
    """The game's budget and its missions' own, each with what its current period spent."""
    items: list[tuple[str, str, Budget]] = []
    shared = Budget.of(game_budget(db, game_id))
    if shared is not None:
        items.append((game_scope(game_id), "The whole game", shared))
    for m in missions:
        own = Budget.of(m.budget)
        if own is not None:
            items.append((mission_scope(m.id), m.title, own))
    if not items:
        return []
    keys = [(scope, budget.period(now)) for scope, _, budget in items]
    spent = dict(((r.scope, r.period), r.spent_micros) for r in _rows(db, keys))
    return [
        Burn(scope, label, budget, key[1], spent.get(key, 0), budget.turns(now))
        for (scope, label, budget), key in zip(items, keys, strict=True)
    ]


# --- setting --------------------------------------------------------------------------------


def set_game_budget(session: Session, game_id: str, budget: Any | None) -> None:
    """Give a game a budget of revenue over all its missions (a `BudgetIn`; None removes
    it). Its offers reopen at once when the new budget has room."""
    row = session.get(Game, game_id)
    if row is None:
        raise EconomicsError("No such game.", field="game")
    wanted = None if budget is None else budget.model_dump(mode="json")
    target = audit.Target.of_studio("game", row.id, row.name, row.studio_id)
    audit.note_changed(
        session, "game.budget_changed", target, {"budget": row.budget}, {"budget": wanted}
    )
    row.budget = wanted
    session.add(row)
    bump(session)  # listings open or close its offers


def refund(session: Session, conversion_ids: Sequence[int]) -> None:
    """Give the revenue of conversions taken back (rejected or reversed) back to exactly
    the budgets and periods each drew on, in (scope, period) order as conversions take
    them. The caller bumps the catalog afterwards (a closed mission may open again)."""
    if not conversion_ids:
        return
    rows = session.execute(
        sa.select(_conversion.c.revenue_micros, _conversion.c.budget_charges).where(
            _conversion.c.id.in_(list(conversion_ids)),
            _conversion.c.budget_charges.is_not(None),
        )
    ).all()
    owed: dict[tuple[str, str], int] = {}
    for row in rows:
        for scope, period in row.budget_charges or ():
            owed[(scope, period)] = owed.get((scope, period), 0) + int(row.revenue_micros or 0)
    for (scope, period), amount in sorted(owed.items()):
        give_back(session, scope, period, amount)
