"""A game's missions and quests: the list, the mission editor, the quest builder and the
rule tester. Every handler works through GameScoped._on_game (role and studio checked on
the server); definitions go through the same schemas and engine as imports."""

from __future__ import annotations

from typing import Any

import reflex as rx
from sqlmodel import Session

from api.services import access, designer, offers
from api.services.access import Account, Forbidden
from models import Game, Mission
from models.offer_schemas import OPERATING_SYSTEMS
from portal import routes
from portal.state.auth import refusals
from portal.state.games import GameScoped

CONDITION_ROWS = 3
SAMPLE_EVENTS = (
    "MATCH_END 1200\nMATCH_END 1500\nMATCH_END 300\nMATCH_END 1100\nMATCH_END 1000\nMATCH_END 2500"
)


def _blank_conditions() -> list[dict[str, str]]:
    return [{"field": "", "op": ">=", "value": ""} for _ in range(CONDITION_ROWS)]


class RuleInputs(GameScoped):
    """The rule builder's inputs, shared by the editor and the tester."""

    suggestions: list[str] = []
    rule_event: str = ""
    conditions: list[dict[str, str]] = _blank_conditions()
    completion: str = "count"
    threshold: str = "1"
    sum_field: str = ""
    errors: dict[str, str] = {}
    # Changes when the form is refilled, so its uncontrolled inputs take the new defaults.
    form_key: int = 0

    def _fill_rule(self, mission: Mission | None) -> None:
        rows = _blank_conditions()
        if mission is not None:
            for n, c in enumerate(mission.rule_conditions[:CONDITION_ROWS]):
                rows[n] = {"field": c["field"], "op": c["op"], "value": str(c.get("value", ""))}
        self.conditions = rows
        self.rule_event = mission.rule_event if mission else ""
        self.completion = mission.rule_completion if mission else "count"
        self.threshold = f"{mission.rule_threshold:g}" if mission else "1"
        self.sum_field = (mission.rule_sum_field or "") if mission else ""
        self.form_key += 1

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
            access.offer_of(session=session, game=game, kind=kind, offer_id=offer_id)
            offers.set_active(session=session, kind=kind, offer_id=offer_id, active=bool(active))

        await self._on_game(work, write=True)
        await self._fetch()
        return rx.toast.success(
            "Activated." if active else "Deactivated: it starts and converts no one."
        )


class EditorState(RuleInputs):
    mission_id: str = ""
    values: dict[str, str] = {}
    operating_systems: list[str] = []
    is_active: bool = True
    allow_multiple: bool = False
    preview: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.errors, self.preview = {}, ""
        redirect = await self._open()
        if redirect is not None:
            return redirect
        requested = self.router.url.query_parameters.get("mission", "")

        def work(session: Session, game: Game, _a: Account) -> tuple[Mission | None, str]:
            if not requested:
                return None, ""
            mission = access.mission_of(session=session, game=game, mission_id=requested)
            return mission, designer.offer_preview(mission)

        try:
            mission, self.preview = await self._on_game(work)
        except Forbidden as exc:
            return [rx.redirect(f"{routes.MISSIONS}?game={self.game_id}"), rx.toast.error(str(exc))]
        self._fill(mission)
        await self._load_suggestions()
        return None

    def _fill(self, m: Mission | None) -> None:
        self.mission_id = m.id if m else ""
        self.values = {
            "title": m.title if m else "",
            "description": (m.description or "") if m else "",
            "destination_url": m.destination_url if m else "",
            "preview_url": m.preview_url if m else "",
            "thumbnail": m.thumbnail if m else "",
            "payout": f"{m.payout_micros / 1_000_000:g}" if m else "",
            "cap": str(m.cap or "") if m else "",
            "time_limit_hours": f"{m.time_limit_seconds / 3600:g}"
            if m and m.time_limit_seconds
            else "",
            "expiration_date": designer.utc_date(m.expiration_date) if m else "",
            "countries_include": ", ".join(m.countries_include) if m else "",
            "countries_exclude": ", ".join(m.countries_exclude) if m else "",
            "tags": ", ".join(m.tags) if m else "",
            "instructions": m.instructions if m else "",
            "requirements": m.requirements if m else "",
        }
        self.operating_systems = list(m.operating_systems) if m else []
        self.is_active = m.is_active if m else True
        self.allow_multiple = m.allow_multiple_conversions if m else False
        self._fill_rule(m)

    @rx.event
    @refusals(into="errors")
    async def save(self, form: dict[str, Any]):
        self.errors = {}
        fields = {k: str(v) for k, v in form.items()}
        mission_id = self.mission_id or None

        def work(session: Session, game: Game, _a: Account) -> tuple[Mission, str]:
            if mission_id:
                existing = access.mission_of(session=session, game=game, mission_id=mission_id)
            data = designer.mission_from_form(fields, mission_id=mission_id)
            quest_id = existing.quest_id if mission_id and existing else None
            position = existing.quest_position if mission_id and existing else 0
            mission = offers.save_mission(
                session=session, game_id=game.id, data=data, quest_id=quest_id, position=position
            )
            return mission, designer.offer_preview(mission)

        mission, self.preview = await self._on_game(work, write=True)
        created = not self.mission_id
        self._fill(mission)
        if created:
            return [
                rx.redirect(f"{routes.MISSION}?game={self.game_id}&mission={mission.id}"),
                rx.toast.success("Mission created."),
            ]
        return rx.toast.success("Mission saved.")


class TesterState(RuleInputs):
    events: str = SAMPLE_EVENTS
    repeatable: bool = False
    steps: list[designer.TestStep] = []
    completed_at: int = 0

    @rx.event
    @refusals()
    async def load(self):
        self.errors, self.steps = {}, []
        redirect = await self._open()
        if redirect is not None:
            return redirect
        requested = self.router.url.query_parameters.get("mission", "")

        def work(session: Session, game: Game, _a: Account) -> Mission | None:
            try:
                return access.mission_of(session=session, game=game, mission_id=requested)
            except Forbidden:
                return None  # the tester opens blank for a mission it cannot show

        mission = await self._on_game(work)
        self._fill_rule(mission)
        if mission is None:
            self.rule_event, self.completion, self.threshold = "MATCH_END", "consecutive", "3"
            self.conditions = [
                {"field": "value", "op": ">=", "value": "1000"},
                *_blank_conditions()[1:],
            ]
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
        self.steps = designer.test_rule(rule, events, repeatable=self.repeatable)
        self.completed_at = next((s.n for s in self.steps if s.completed), 0)
        return None


OS_CHOICES = list(OPERATING_SYSTEMS)


class QuestState(GameScoped):
    """The quest builder: the quest's fields and its missions, in order."""

    quest_id: str = ""
    values: dict[str, str] = {}
    is_active: bool = True
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
                access.quest_of(session=session, game=game, quest_id=requested)
                if requested
                else None
            )
            return quest, designer.game_offers(session=session, game_id=game.id)

        try:
            quest, rows = await self._on_game(work)
        except Forbidden as exc:
            return [rx.redirect(f"{routes.MISSIONS}?game={self.game_id}"), rx.toast.error(str(exc))]
        self.quest_id = quest.id if quest else ""
        self.values = {
            "name": quest.name if quest else "",
            "destination_url": quest.destination_url if quest else "",
            "description": (quest.description or "") if quest else "",
            "instructions": quest.instructions if quest else "",
            "start_cap": str(quest.start_cap or "") if quest else "",
        }
        self.is_active = quest.is_active if quest else True
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
            data = designer.quest_from_form(fields, quest_id=quest_id)
            return designer.save_quest(
                session=session, game_id=game.id, data=data, mission_ids=mission_ids
            ).id

        saved = await self._on_game(work, write=True)
        return [
            rx.redirect(f"{routes.MISSIONS}?game={self.game_id}"),
            rx.toast.success("Quest saved." if quest_id else f"Quest created ({saved[:8]}…)."),
        ]
