"""The mission editor and the quest builder. Every handler works through
GameScoped._on_game (role and studio checked on the server); definitions go through the
same schemas and engine as imports. Saving keeps the designer in the editor, with the
saved offer's preview and a toast naming it; "Back to missions" sits beside the save."""

from __future__ import annotations

from typing import Any

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.missions import designer, form_values, summary
from models import Game, Mission, Quest
from models.offer_schemas import mission_in, quest_fields, rule_in
from portal import routes
from portal.state.auth import refusals
from portal.state.games import GameScoped
from portal.state.offer_editing import OfferEditing
from portal.state.rule_inputs import NEW_MISSION, RuleInputs


class EditorState(OfferEditing, RuleInputs):
    mission_id: str = ""

    @rx.event
    @refusals()
    async def load(self):
        async def fill() -> None:
            self._fill(await self._requested_mission())
            await self._load_suggestions()

        return await self._load_offer(fill)

    def _fill(self, mission: Mission | None) -> None:
        self.mission_id = mission.id if mission else ""
        self._show_offer(mission)
        self.rule_summary = summary(rule_in(mission)) if mission else ""
        values = form_values(mission_in(mission)) if mission else NEW_MISSION
        self._fill_targeting(values)
        self._fill_values(values)

    async def _save(self, fields: dict[str, str]) -> Any:
        self.errors = {}
        mission_id = self.mission_id or None
        fields = fields | self._list_fields()

        def work(session: Session, game: Game, _a: Account) -> Mission:
            return designer.save_mission_form(
                session=session, game_id=game.id, form=fields, mission_id=mission_id
            )

        mission = await self._on_game(work, write=True)
        created = not self.mission_id
        self._fill(mission)
        toast = rx.toast.success(f"Mission “{mission.title}” {'created' if created else 'saved'}.")
        if created:  # its own address, so a reload opens it
            return [rx.redirect(routes.mission(self.game_id, mission.id)), toast]
        return toast


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
            lambda s, g, _a: designer.quest_builder(session=s, game_id=g.id, quest_id=quest_id)
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
            quest = designer.save_quest_form(
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
