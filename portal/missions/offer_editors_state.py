"""The mission editor and the quest builder. Every handler works through
GameScoped._on_game (role and studio checked on the server); definitions go through the
same schemas and engine as imports. Saving keeps the designer in the editor, with the
saved offer's preview and a toast naming it; "Back to missions" sits beside the save."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.core.refusals import DomainError
from api.missions import editor, form_values, summary
from api.missions.backtest import Backtest, run_backtest
from api.missions.funnels import duration_words
from models import Game, Mission, Quest
from models.offer_schemas import MissionIn, mission_in, quest_fields, rule_in
from models.types import utcnow
from portal import routes
from portal.backend import engine, off_loop, settings
from portal.components.formatting import usd
from portal.missions.offer_editing import OfferEditing
from portal.missions.rule_inputs import NEW_MISSION, PAYOUTS, STAGES, RuleInputs
from portal.state.auth import refusals
from portal.state.game_scope import GameScoped

logger = logging.getLogger(__name__)
# One backtest at a time in this process: each reads a game's history in a thread.
BACKTESTS = threading.BoundedSemaphore(1)


@dataclass(frozen=True)
class HistoryLine:
    """One figure of a backtest, as the editor shows it."""

    label: str
    figure: str


def history_lines(result: Backtest) -> tuple[list[HistoryLine], list[HistoryLine]]:
    """A one-mission backtest in words: its figures, and its completions per day."""
    [mission] = result.missions
    times = sorted(mission.seconds_to_complete)
    share = f" ({mission.reached / result.players:.0%})" if result.players else ""
    cap = f", {mission.paid:,} paid under the cap of {mission.cap:,}" if mission.cap else ""
    figures = [
        HistoryLine("Players with events", f"{result.players:,} ({result.events:,} events)"),
        HistoryLine("Players who would complete it", f"{mission.reached:,}{share}"),
        HistoryLine("Completions, with repeats", f"{mission.completions:,}"),
        HistoryLine(
            "Time to complete, median",
            duration_words(mission.as_json()["medianSecondsToComplete"] if times else None),
        ),
        HistoryLine(
            "Time to complete, 90% within",
            duration_words(mission.as_json()["p90SecondsToComplete"] if times else None),
        ),
        HistoryLine("Cost", usd(mission.paid * mission.payout_micros) + cap),
        HistoryLine("Events its anti-cheat limits set aside", f"{mission.set_aside:,}"),
    ]
    days = [HistoryLine(day, f"{n:,}") for day, n in sorted(mission.per_day.items())]
    return figures, days


STAGE_PARTS = ("threshold", "payout")
STAGE_LIMIT = 20
# The country payouts' rows (`payouts.0.countries`, `payouts.0.payout`, …).
PAYOUT_PARTS = ("countries", "payout")
PAYOUT_LIMIT = 50


def stage_numbers(values: dict[str, str], prefix: str = STAGES) -> list[int]:
    """The rows of a list of rows (the ladder's by default) the inputs hold, in order."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.")
    found = {int(m.group(1)) for n in values if (m := pattern.match(n))}
    return sorted(found)


def with_stages(
    values: dict[str, str],
    rows: list[dict[str, str]],
    prefix: str = STAGES,
    parts: tuple[str, ...] = STAGE_PARTS,
) -> dict[str, str]:
    """`values` with the rows of a list (the ladder's by default) replaced by `rows`,
    numbered afresh."""
    kept = {k: v for k, v in values.items() if not k.startswith(prefix)}
    for n, row in enumerate(rows):
        for part in parts:
            kept[f"{prefix}{n}.{part}"] = row.get(part, "")
    return kept


class EditorState(OfferEditing, RuleInputs):
    mission_id: str = ""
    # The game's pools (the pool input's list), and the name the pool input holds: one
    # the game does not have shows the new pool's inputs.
    pools: list[editor.PoolChoice] = []
    pool_name: str = ""
    # The recurrence chosen ("" for none): a weekly one shows the week's first day.
    every: str = ""
    # Changes when the ladder's rows are drawn again (a row added or removed).
    stages_key: int = 0
    # Changes when the country payouts' rows are drawn again.
    payouts_key: int = 0
    # "Try on history": the draft over the game's stored events of the last days.
    history_days: str = "30"
    history_running: bool = False
    history_progress: str = ""
    history: list[HistoryLine] = []
    history_per_day: list[HistoryLine] = []
    _history_draft: dict[str, Any] = {}
    _history_span: int = 30

    @rx.event
    @refusals()
    async def load(self):
        async def fill() -> None:
            self._fill(await self._requested_mission())
            await self._load_suggestions()
            await self._load_pools()

        return await self._load_offer(fill)

    async def _load_pools(self) -> None:
        self.pools = await self._on_game(
            lambda s, g, _a: editor.pool_choices(session=s, game_id=g.id)
        )

    def _fill(self, mission: Mission | None) -> None:
        self.mission_id = mission.id if mission else ""
        self._show_offer(mission)
        self.rule_summary = summary(rule_in(mission)) if mission else ""
        values = form_values(mission_in(mission)) if mission else NEW_MISSION
        self._fill_targeting(values)
        self._fill_values(values)
        self.pool_name = values.get("pool", "")
        self.every = values.get("recurrence.every", "")

    # --- live operations ------------------------------------------------------------------

    @rx.var
    def pool_names(self) -> list[str]:
        return [p.name for p in self.pools]

    @rx.var
    def new_pool(self) -> bool:
        """The pool input names a pool the game does not have: it is made with the save."""
        name = self.pool_name.strip()
        return bool(name) and name not in {p.name for p in self.pools}

    @rx.var
    def stage_rows(self) -> list[str]:
        """The ladder's row numbers, as the inputs' names have them."""
        return [str(n) for n in stage_numbers(self.values)]

    @rx.event
    def choose_pool(self, name: str):
        self.pool_name = name.strip()

    @rx.event
    def choose_every(self, every: str):
        self.every = every

    def _stages(self) -> list[dict[str, str]]:
        self._merge_typed()
        return [
            {part: self.values.get(f"{STAGES}{n}.{part}", "") for part in STAGE_PARTS}
            for n in stage_numbers(self.values)
        ]

    def _restaged(self, rows: list[dict[str, str]]) -> None:
        """The ladder's rows drawn again with these defaults (its messages were about
        rows that may have moved)."""
        self.values = with_stages(self.values, rows)
        self.errors = {k: v for k, v in self.errors.items() if not k.startswith("stages")}
        self.stages_key += 1

    @rx.event
    def add_stage(self):
        """A row more; the first makes two, since a ladder has two stages at least."""
        rows = self._stages()
        blank = {part: "" for part in STAGE_PARTS}
        rows += [blank] * (2 if not rows else 1)
        self._restaged(rows[:STAGE_LIMIT])

    @rx.event
    def remove_stage(self, index: int):
        rows = self._stages()
        if 0 <= index < len(rows):
            del rows[index]
            self._restaged(rows)

    # --- revenue and payouts -----------------------------------------------------------------

    @rx.var
    def payout_rows(self) -> list[str]:
        """The country payouts' row numbers, as the inputs' names have them."""
        return [str(n) for n in stage_numbers(self.values, PAYOUTS)]

    def _payouts(self) -> list[dict[str, str]]:
        self._merge_typed()
        return [
            {part: self.values.get(f"{PAYOUTS}{n}.{part}", "") for part in PAYOUT_PARTS}
            for n in stage_numbers(self.values, PAYOUTS)
        ]

    def _repaid(self, rows: list[dict[str, str]]) -> None:
        """The country payouts' rows drawn again with these defaults."""
        self.values = with_stages(self.values, rows, PAYOUTS, PAYOUT_PARTS)
        self.errors = {k: v for k, v in self.errors.items() if not k.startswith("payouts")}
        self.payouts_key += 1

    @rx.event
    def add_payout(self):
        rows = [*self._payouts(), {part: "" for part in PAYOUT_PARTS}]
        self._repaid(rows[:PAYOUT_LIMIT])

    @rx.event
    def remove_payout(self, index: int):
        rows = self._payouts()
        if 0 <= index < len(rows):
            del rows[index]
            self._repaid(rows)

    async def _save(self, fields: dict[str, str]) -> Any:
        self.errors = {}
        mission_id = self.mission_id or None
        fields = self._rule_fields(fields)

        def work(session: Session, game: Game, _a: Account) -> Mission:
            return editor.save_mission_form(
                session=session, game_id=game.id, form=fields, mission_id=mission_id
            )

        mission = await self._on_game(work, write=True)
        created = not self.mission_id
        self._fill(mission)
        await self._load_pools()  # a pool made with the save is the game's now
        toast = rx.toast.success(f"Mission “{mission.title}” {'created' if created else 'saved'}.")
        if created:  # its own address, so a reload opens it
            return [rx.redirect(routes.mission(self.game_id, mission.id)), toast]
        return toast

    async def _act(self, intent: str, fields: dict[str, str]) -> Any:
        """Try on history: the form's mission, checked as a save would, then backtested off
        the request (`run_history`), which shows its progress as it reads."""
        if intent != "history":
            return None
        self.errors = {}
        fields = self._rule_fields(fields)
        self.history_days = fields.get("historyDays", "").strip()
        if self.history_running:
            return rx.toast.info("The mission is being tried already; its figures come here.")
        days = _days(self.history_days, settings().event_retention_days)
        if isinstance(days, str):
            self.errors = {"historyDays": days}
            return None
        mission_id = self.mission_id or None

        def draft(session: Session, game: Game, _a: Account) -> MissionIn:
            return editor.mission_draft(
                session=session, game_id=game.id, form=fields, mission_id=mission_id
            )

        self._history_draft = (await self._on_game(draft)).model_dump(mode="json")
        self._history_span = days
        self.history, self.history_per_day = [], []
        self.history_running, self.history_progress = True, "Starting…"
        return EditorState.run_history

    @rx.event(background=True)
    async def run_history(self):
        async with self:
            data, days = self._history_draft, self._history_span
            try:  # the account still manages the game
                game_id = await self._on_game(lambda _s, game, _a: game.id)
            except DomainError:
                self.history_running, self.history_progress = False, ""
                return
        if not BACKTESTS.acquire(blocking=False):
            async with self:
                self.history_running = False
                self.history_progress = "Another mission is being tried: try again in a minute."
            return
        read = [0, 0]

        def backtest() -> Backtest:
            with engine().connect() as conn:
                return run_backtest(
                    conn,
                    game_id=game_id,
                    missions=[MissionIn.model_validate(data)],
                    days=days,
                    now=utcnow(),
                    on_progress=lambda done, total: read.__setitem__(slice(None), [done, total]),
                )

        task = asyncio.ensure_future(off_loop(backtest))
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=0.5)
                async with self:
                    self.history_progress = f"{read[0]:,} of {read[1]:,} events read"
        finally:
            if task.done():
                BACKTESTS.release()
            else:  # the page went away: the pass ends on its own, then frees its place
                task.add_done_callback(lambda _: BACKTESTS.release())
        async with self:
            self.history_running = False
            if task.exception() is not None:
                logger.error("backtest failed", exc_info=task.exception())
                self.history_progress = "The mission could not be tried: please try again."
                return
            self.history_progress = f"The last {days} days, as if every player had started it"
            self.history, self.history_per_day = history_lines(task.result())


def _days(text: str, most: int) -> int | str:
    """The days a backtest reads, or what is wrong with the text."""
    try:
        days = int(text)
    except ValueError:
        return f"Enter a whole number of days, 1 to {most}."
    if not 1 <= days <= most:
        return f"Enter a whole number of days, 1 to {most} (events are kept {most} days)."
    return days


def _titles(missions: list[Mission]) -> list[dict[str, str]]:
    return [{"id": m.id, "title": m.title} for m in missions]


class QuestState(OfferEditing, GameScoped):
    """The quest builder: the quest's fields and its missions, in order."""

    quest_id: str = ""
    values: dict[str, str] = {}
    chosen: list[dict[str, str]] = []
    available: list[dict[str, str]] = []
    errors: dict[str, str] = {}
    form_key: int = 0

    @rx.event
    @refusals()
    async def load(self):
        quest_id = self.router.url.query_parameters.get("quest", "") or None
        return await self._load_offer(lambda: self._load_quest(quest_id))

    async def _load_quest(self, quest_id: str | None) -> None:
        built = await self._on_game(
            lambda s, g, _a: editor.quest_builder(session=s, game_id=g.id, quest_id=quest_id)
        )
        quest: Quest | None = built.quest
        self.quest_id = quest.id if quest else ""
        self._show_offer(quest, built.chosen)
        self.values = form_values(quest_fields(quest)) if quest else {"isActive": "true"}
        self._fill_targeting(self.values)
        self.chosen, self.available = _titles(built.chosen), _titles(built.available)
        self.form_key += 1

    @rx.event
    def add(self, mission_id: str):
        found = [m for m in self.available if m["id"] == mission_id]
        self.available = [m for m in self.available if m["id"] != mission_id]
        self.chosen = self.chosen + found
        if found:  # "needs at least one mission" no longer holds
            self.errors = {k: v for k, v in self.errors.items() if k != "missions"}

    @rx.event
    def remove(self, mission_id: str):
        found = [m for m in self.chosen if m["id"] == mission_id]
        self.chosen = [m for m in self.chosen if m["id"] != mission_id]
        self.available = self.available + found

    @rx.event
    def move(self, index: int, delta: int):
        other = index + delta
        if 0 <= index < len(self.chosen) and 0 <= other < len(self.chosen):
            chosen = list(self.chosen)
            chosen[index], chosen[other] = chosen[other], chosen[index]
            self.chosen = chosen

    async def _save(self, fields: dict[str, str]) -> Any:
        self.errors = {}
        quest_id, mission_ids = self.quest_id or None, [m["id"] for m in self.chosen]

        def work(session: Session, game: Game, _a: Account) -> tuple[str, str]:
            quest = editor.save_quest_form(
                session=session,
                game_id=game.id,
                form=fields,
                quest_id=quest_id,
                mission_ids=mission_ids,
            )
            return quest.id, quest.name

        saved_id, name = await self._on_game(work, write=True)
        toast = rx.toast.success(f"Quest “{name}” {'saved' if quest_id else 'created'}.")
        if quest_id is None:  # its own address, so a reload opens it
            return [rx.redirect(routes.quest(self.game_id, saved_id)), toast]
        await self._load_quest(saved_id)
        return toast
