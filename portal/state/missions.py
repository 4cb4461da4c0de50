"""A game's missions and quests: the list, the mission editor, the quest builder and the
rule tester. Every handler works through GameScoped._on_game (role and studio checked on
the server); definitions go through the same schemas and engine as imports."""

from __future__ import annotations

from typing import Any

import reflex as rx
from sqlmodel import Session

from api.services import designer, offers
from api.services.access import Account
from api.services.offer_forms import form_values
from api.services.offers import OfferError
from models import Game, Mission
from models.offer_schemas import OPERATING_SYSTEMS, mission_in, quest_fields
from portal import routes
from portal.state.auth import refusals
from portal.state.games import GameScoped

CONDITION_ROWS = 3
SAMPLE_EVENTS = (
    "MATCH_END 1200\nMATCH_END 1500\nMATCH_END 300\nMATCH_END 1100\nMATCH_END 1000\nMATCH_END 2500"
)
# A new mission's inputs (every other input starts empty).
NEW_MISSION = {
    "isActive": "true",
    "allowMultipleConversions": "false",
    "rule.completion.kind": "count",
    "rule.completion.threshold": "1",
}
# The tester's example rule: three matches of 1000 or more in a row.
SAMPLE_RULE = {
    **NEW_MISSION,
    "rule.event": "MATCH_END",
    "rule.conditions.0.field": "value",
    "rule.conditions.0.op": ">=",
    "rule.conditions.0.value": "1000",
    "rule.completion.kind": "consecutive",
    "rule.completion.threshold": "3",
}


def _condition_rows(values: dict[str, str]) -> list[dict[str, str]]:
    return [
        {
            part: values.get(f"rule.conditions.{n}.{part}", ">=" if part == "op" else "")
            for part in ("field", "op", "value")
        }
        for n in range(CONDITION_ROWS)
    ]


class RuleInputs(GameScoped):
    """The inputs of a definition, named by field path, shared by the editor and the tester
    (the rule builder reads `values` and `conditions`)."""

    suggestions: list[str] = []
    values: dict[str, str] = {}
    conditions: list[dict[str, str]] = _condition_rows({})
    errors: dict[str, str] = {}
    # Changes when the form is refilled, so its uncontrolled inputs take the new defaults.
    form_key: int = 0

    def _fill_values(self, values: dict[str, str]) -> None:
        self.values = values
        self.conditions = _condition_rows(values)
        self.form_key += 1

    async def _requested_mission(self) -> Mission | None:
        """The mission `?mission=` names, if any; OfferError when it is not this game's."""
        requested = self.router.url.query_parameters.get("mission", "")
        if not requested:
            return None
        return await self._on_game(
            lambda s, g, _a: offers.mission_of_game(session=s, game_id=g.id, mission_id=requested)
        )

    async def _load_suggestions(self) -> None:
        self.suggestions = await self._on_game(
            lambda s, g, _a: designer.event_names(session=s, game_id=g.id)
        )


class MissionsState(GameScoped):
    rows: list[designer.OfferRow] = []

    @rx.event
    @refusals()
    async def load(self):
        return await self._load_game_page()

    async def _fetch(self) -> None:
        self.rows = await self._on_game(
            lambda s, g, _a: designer.game_offers(session=s, game_id=g.id)
        )

    @rx.event
    @refusals()
    async def set_active(self, kind: str, offer_id: str, active: bool):
        def work(session: Session, game: Game, _a: Account) -> None:
            offers.set_active(
                session=session, kind=kind, offer_id=offer_id, active=bool(active), game_id=game.id
            )

        await self._on_game(work, write=True)
        await self._fetch()
        return rx.toast.success(
            "Activated." if active else "Deactivated: it starts and converts no one."
        )


class EditorState(RuleInputs):
    mission_id: str = ""
    operating_systems: list[str] = []
    preview: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.errors, self.preview = {}, ""
        redirect = await self._open()
        if redirect is not None:
            return redirect
        try:
            mission = await self._requested_mission()
        except OfferError as exc:
            return [rx.redirect(routes.missions(self.game_id)), rx.toast.error(str(exc))]
        self._fill(mission)
        await self._load_suggestions()
        return None

    def _fill(self, mission: Mission | None) -> None:
        self.mission_id = mission.id if mission else ""
        self.preview = designer.offer_preview(mission) if mission else ""
        values = form_values(mission_in(mission)) if mission else NEW_MISSION
        self.operating_systems = _items(values.get("operatingSystem", ""))
        self._fill_values(values)

    @rx.event
    @refusals(into="errors")
    async def save(self, form: dict[str, Any]):
        self.errors = {}
        fields = {k: str(v) for k, v in form.items()}
        mission_id = self.mission_id or None

        def work(session: Session, game: Game, _a: Account) -> Mission:
            return designer.save_mission_form(
                session=session, game_id=game.id, form=fields, mission_id=mission_id
            )

        mission = await self._on_game(work, write=True)
        created = not self.mission_id
        self._fill(mission)
        if created:
            return [
                rx.redirect(routes.mission(self.game_id, mission.id)),
                rx.toast.success("Mission created."),
            ]
        return rx.toast.success("Mission saved.")


def _items(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class RuleTesterState(RuleInputs):
    events: str = SAMPLE_EVENTS
    repeatable: bool = False
    steps: list[designer.RuleStep] = []
    completed_at: int = 0

    @rx.event
    @refusals()
    async def load(self):
        self.errors, self.steps = {}, []
        redirect = await self._open()
        if redirect is not None:
            return redirect
        try:
            mission = await self._requested_mission()
        except OfferError:
            mission = None  # the tester opens blank for a mission it cannot show
        self._fill_values(form_values(mission_in(mission)) if mission else SAMPLE_RULE)
        self.repeatable = bool(mission and mission.allow_multiple_conversions)
        await self._load_suggestions()
        return None

    @rx.event
    @refusals(into="errors")
    async def run(self, form: dict[str, Any]):
        """Pure computation, but only for accounts that manage the game."""
        self.errors, self.steps = {}, []
        fields = {k: str(v) for k, v in form.items()}
        await self._on_game(lambda _s, _g, _a: None)
        rule = designer.rule_from_form(fields)
        events = designer.parse_events(fields.get("events", ""))
        self.events = fields.get("events", "")
        self.repeatable = fields.get("repeatable") in ("on", "true")
        self.steps = designer.try_rule(rule, events, repeatable=self.repeatable)
        self.completed_at = next((s.n for s in self.steps if s.completed), 0)
        return None


OS_CHOICES = list(OPERATING_SYSTEMS)


class QuestState(GameScoped):
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
        self.errors = {}
        redirect = await self._open()
        if redirect is not None:
            return redirect
        requested = self.router.url.query_parameters.get("quest", "")

        def work(session: Session, game: Game, _a: Account):
            quest = (
                offers.quest_of_game(session=session, game_id=game.id, quest_id=requested)
                if requested
                else None
            )
            return quest, designer.game_offers(session=session, game_id=game.id)

        try:
            quest, rows = await self._on_game(work)
        except OfferError as exc:
            return [rx.redirect(routes.missions(self.game_id)), rx.toast.error(str(exc))]
        self.quest_id = quest.id if quest else ""
        self.values = form_values(quest_fields(quest)) if quest else {"isActive": "true"}
        missions = [r for r in rows if r.kind == "mission"]
        self.chosen = [
            {"id": r.id, "title": r.title} for r in missions if quest and r.quest_id == quest.id
        ]
        self.available = [{"id": r.id, "title": r.title} for r in missions if not r.quest_id]
        self.form_key += 1
        return None

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

    @rx.event
    @refusals(into="errors")
    async def save(self, form: dict[str, Any]):
        self.errors = {}
        fields = {k: str(v) for k, v in form.items()}
        quest_id, mission_ids = self.quest_id or None, [m["id"] for m in self.chosen]

        def work(session: Session, game: Game, _a: Account) -> str:
            return designer.save_quest_form(
                session=session,
                game_id=game.id,
                form=fields,
                quest_id=quest_id,
                mission_ids=mission_ids,
            ).id

        saved = await self._on_game(work, write=True)
        return [
            rx.redirect(routes.missions(self.game_id)),
            rx.toast.success("Quest saved." if quest_id else f"Quest created ({saved[:8]}…)."),
        ]
