"""The rule builder's inputs, shared by the mission editor and the rule tester."""

from __future__ import annotations

from api.missions import designer, offers
from models import Mission
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
    # The rule in words (api/missions/rules.py: summary), of the saved or tested rule.
    rule_summary: str = ""
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
