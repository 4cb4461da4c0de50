"""A game's missions and quests list and the rule tester. Every handler works through
GameScoped._on_game (role and studio checked on the server). The mission editor and the
quest builder live in offer_editors.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.economics import Burn
from api.missions import (
    OfferError,
    form_values,
    game_budget,
    live_badges,
    offer_rows,
    offers,
    rule_tester,
    tester_replay,
)
from models import Game, Mission, Quest
from models.offer_schemas import OPERATING_SYSTEMS, mission_in
from models.types import utcnow
from portal.components.formatting import usd, when
from portal.missions.offer_editors_state import EditorState, QuestState
from portal.missions.rule_inputs import SAMPLE_EVENTS, SAMPLE_RULE, RuleInputs
from portal.state.auth import SUBMITTED, refusals
from portal.state.game_scope import GameScoped

__all__ = ["OS_CHOICES", "EditorState", "MissionsState", "QuestState", "RuleTesterState"]

OS_CHOICES = list(OPERATING_SYSTEMS)


@dataclass(frozen=True)
class OfferLine:
    """A mission or quest as the list shows it (`offer_rows.OfferRow` with its payout
    written; "" for a quest)."""

    id: str
    kind: str
    title: str
    payout: str
    active: bool
    cap: str
    rule: str
    quest: str
    quest_id: str
    clicks: str
    started: str
    in_progress: str
    completed: str
    median_time: str
    live: list[live_badges.LiveBadge]
    periods: list[offer_rows.PeriodLine]
    revenue: str = ""  # "$1.60"; "" without revenue (designers and staff only)


def offer_line(row: offer_rows.OfferRow) -> OfferLine:
    return OfferLine(
        id=row.id,
        kind=row.kind,
        title=row.title,
        payout="" if row.payout_micros is None else usd(row.payout_micros),
        active=row.active,
        cap=row.cap,
        rule=row.rule,
        quest=row.quest,
        quest_id=row.quest_id,
        clicks=row.clicks,
        started=row.started,
        in_progress=row.in_progress,
        completed=row.completed,
        median_time=row.median_time,
        live=row.live,
        periods=row.periods,
        revenue="" if row.revenue_micros is None else usd(row.revenue_micros),
    )


@dataclass(frozen=True)
class BurnLine:
    """A budget's burn as the missions page shows it (`economics.Burn`, written)."""

    label: str  # "Game budget · daily", "Win 3 ranked · total"
    spent: str  # "$120.00"
    amount: str  # "$500.00"
    percent: int
    turns: str  # "Turns over on 2026-11-29 05:00 UTC (midnight in America/New_York)"


EVERY_WORDS = {"day": "daily", "week": "weekly", "month": "monthly", "total": "total"}


def burn_line(burn: Burn) -> BurnLine:
    whose = "Game budget" if burn.scope.startswith("game:") else f"“{burn.label}”"
    budget = burn.budget
    if burn.turns is None:
        turns = "In total: it never turns over; raise it to spend more."
    else:
        turns = f"Turns over on {when(burn.turns)} (midnight in {budget.zone})"
    return BurnLine(
        label=f"{whose} · {EVERY_WORDS.get(budget.every, budget.every)}",
        spent=usd(burn.spent_micros),
        amount=usd(budget.amount_micros),
        percent=burn.percent,
        turns=turns,
    )


class MissionsState(GameScoped):
    rows: list[OfferLine] = []
    # The game's budgets and their burn, and the game's budget form.
    burns: list[BurnLine] = []
    budget_values: dict[str, str] = {}
    budget_errors: dict[str, str] = {}
    budget_form_key: int = 0
    has_game_budget: bool = False

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_game_page()

    async def _fetch(self) -> None:
        found = await self._on_game(
            lambda s, g, _a: offer_rows.game_offers(session=s, game_id=g.id)
        )
        self.rows = [offer_line(row) for row in found]
        await self._fetch_budgets()

    async def _fetch_budgets(self) -> None:
        def work(session: Session, game: Game, account: Account) -> tuple[Any, Any]:
            values = game_budget.game_budget_values(
                session=session, account=account, game_id=game.id
            )
            return values, game_budget.budget_burn(session=session, game_id=game.id)

        values, burns = await self._on_game(work)
        self.burns = [burn_line(b) for b in burns]
        self.budget_values = values
        self.has_game_budget = bool(values.get("budget.amount"))
        self.budget_form_key += 1

    @rx.event
    @refusals(into="budget_errors")
    async def save_budget(self, form: dict[str, Any]):
        """Set the game's budget (an empty amount removes it)."""
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        self.budget_errors = {}
        fields = {k: str(v) for k, v in form.items() if k != SUBMITTED}
        saved = await self._on_game(
            lambda s, g, a: game_budget.save_game_budget(
                session=s, account=a, game_id=g.id, form=fields
            ),
            write=True,
        )
        await self._fetch()
        if saved is None:
            return rx.toast.success("The game has no budget now.")
        return rx.toast.success("Game budget saved.")

    @rx.event
    @refusals()
    async def remove_budget(self):
        self.budget_errors = {}
        await self._on_game(
            lambda s, g, a: game_budget.remove_game_budget(session=s, account=a, game_id=g.id),
            write=True,
        )
        await self._fetch()
        return rx.toast.success("The game has no budget now.")

    @rx.event
    @refusals()
    async def set_active(self, kind: str, offer_id: str, active: bool):
        def work(session: Session, game: Game, _a: Account) -> str:
            offer: Mission | Quest = offers.set_active(
                session=session, kind=kind, offer_id=offer_id, active=bool(active), game_id=game.id
            )
            return offer.title if isinstance(offer, Mission) else offer.name

        name = await self._on_game(work, write=True)
        await self._fetch()
        what = f"{'Mission' if kind == 'mission' else 'Quest'} “{name}”"
        if active:
            return rx.toast.success(f"{what} is active: players can start it.")
        return rx.toast.success(f"{what} is inactive: no one can start or complete it.")


class RuleTesterState(RuleInputs):
    """The rule tester: the rule builder's rule over typed events or over a player's
    stored ones (`source`), event by event."""

    events: str = SAMPLE_EVENTS
    source: str = "typed"  # "typed" | "player"
    player: str = ""
    day_from: str = ""
    day_to: str = ""
    players: list[str] = []  # the game's user ids that sent events, as suggestions
    repeatable: bool = False
    steps: list[rule_tester.RuleStep] = []
    completed_at: int = 0
    note: str = ""  # which stored events ran

    @rx.event
    @refusals()
    async def load(self):
        self.errors, self.steps, self.rule_summary, self.note = {}, [], "", ""
        redirect = await self._open()
        if redirect is not None:
            return redirect
        try:
            mission = await self._requested_mission()
        except OfferError:
            mission = None  # the tester opens blank for a mission it cannot show
        self._fill_values(form_values(mission_in(mission)) if mission else SAMPLE_RULE)
        self.repeatable = bool(mission and mission.allow_multiple_conversions)
        now = utcnow()
        self.day_from, self.day_to = tester_replay.default_range(now.date())
        await self._load_suggestions()
        self.players = await self._on_game(
            lambda s, g, _a: tester_replay.player_ids(session=s, game_id=g.id, now=now)
        )
        return None

    @rx.event
    @refusals(into="errors")
    async def run(self, form: dict[str, Any]):
        """Typed events are pure computation, but only for accounts that manage the game; a
        player's events are the game's, read through the same check."""
        self.errors, self.steps, self.rule_summary, self.note = {}, [], "", ""
        fields = self._rule_fields({k: str(v) for k, v in form.items()})
        self.events = fields.get("events", "")
        self.source = "player" if fields.get("source") == "player" else "typed"
        self.player = fields.get("player", "")
        self.day_from, self.day_to = fields.get("from", ""), fields.get("to", "")
        self.repeatable = fields.get("repeatable") in ("on", "true")
        repeatable = self.repeatable
        if self.source == "player":
            tested = await self._on_game(
                lambda s, g, _a: tester_replay.replay_player(
                    session=s, game_id=g.id, form=fields, repeatable=repeatable
                )
            )
        else:
            await self._on_game(lambda _s, _g, _a: None)
            tested = rule_tester.run_rule_test(form=fields, repeatable=repeatable)
        self.rule_summary, self.steps, self.completed_at, self.note = (
            tested.summary,
            tested.steps,
            tested.completed_at,
            tested.note,
        )
        return None
