"""The rule builder's inputs, shared by the mission editor and the rule tester.

The builder's inputs are uncontrolled and named after the rule's field paths
(`rule.event`, `rule.anyOf.1.conditions.0.value`, `rule.steps.2.event`, …), as
api/missions/forms.py reads them. `values` holds their text, kept up to date as the
designer leaves each input, so that a change of the rule's shape (a group added, a step
moved up, a condition removed) can renumber them and draw the builder again (`rule_key`)
without losing anything typed. A rule's matchers are drawn from `values` alone
(`matchers`): what the builder shows is what the form submits."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import reflex as rx

from api.missions import editor, offers
from models import Mission
from portal.state.game_scope import GameScoped

SHAPES = ("event", "anyOf", "steps")  # one event, any of several, steps in order
LIST_OPS = ("in", "not in")
STEP_MINIMUM = 2
MATCHER_LIMIT = 20
CONDITION_LIMIT = 10
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
CONDITION_PARTS = ("field", "op", "value")
# A ladder's rows (`stages.0.threshold`, `stages.0.payout`, …) and the country payouts'
# (`payouts.0.countries`, `payouts.0.payout`, …): kept like the builder's.
STAGES = "stages."
PAYOUTS = "payouts."


@dataclass(frozen=True)
class ConditionRow:
    """One condition's inputs: `name` is its path (`rule.anyOf.1.conditions.0`)."""

    name: str
    matcher: int  # its matcher's place, from 0
    n: int  # its place in its matcher, from 1
    op: str
    value: str
    chips: list[str]  # the values of an `in` / `not in` list
    listed: bool  # in / not in: its value is chips
    removable: bool  # False for the empty row drawn when a matcher has none
    label: str  # how its inputs are named to a screen reader: "Condition", "Step 2 condition"


@dataclass(frozen=True)
class MatcherRow:
    """An event name and its conditions: the rule's own (`rule`), or one of anyOf's or the
    steps' (`rule.anyOf.1`)."""

    prefix: str
    n: int  # from 1
    title: str  # "" for the rule's own event, "Group 2", "Step 2"
    conditions: list[ConditionRow] = field(default_factory=list)


Matcher = tuple[str, list[dict[str, str]]]  # (event, [{field, op, value}])


def shape_of(values: dict[str, str]) -> str:
    for shape in ("steps", "anyOf"):
        if any(name.startswith(f"rule.{shape}.") for name in values):
            return shape
    return "event"


def _prefixes(values: dict[str, str], shape: str) -> list[str]:
    if shape == "event":
        return ["rule"]
    found = {int(m.group(1)) for n in values if (m := re.match(rf"rule\.{shape}\.(\d+)\.", n))}
    return [f"rule.{shape}.{i}" for i in sorted(found)]


def _condition_numbers(values: dict[str, str], prefix: str) -> list[int]:
    pattern = re.compile(re.escape(prefix) + r"\.conditions\.(\d+)\.")
    return sorted({int(m.group(1)) for name in values if (m := pattern.match(name))})


def read_matchers(values: dict[str, str], shape: str) -> list[Matcher]:
    """The matchers the inputs hold, in order."""
    return [
        (
            values.get(f"{prefix}.event", ""),
            [
                {
                    part: values.get(f"{prefix}.conditions.{i}.{part}", "")
                    for part in CONDITION_PARTS
                }
                for i in _condition_numbers(values, prefix)
            ],
        )
        for prefix in _prefixes(values, shape)
    ]


def with_matchers(values: dict[str, str], shape: str, matchers: list[Matcher]) -> dict[str, str]:
    """`values` with its matchers replaced by `matchers` in `shape`, numbered afresh."""
    kept = {
        name: text
        for name, text in values.items()
        if not re.match(r"rule\.(event|conditions|anyOf|steps)(\.|$)", name)
    }
    prefixes = ["rule"] if shape == "event" else [f"rule.{shape}.{i}" for i in range(len(matchers))]
    for prefix, (event, conditions) in zip(prefixes, matchers, strict=False):
        kept[f"{prefix}.event"] = event
        for i, condition in enumerate(conditions):
            for part in CONDITION_PARTS:
                kept[f"{prefix}.conditions.{i}.{part}"] = condition.get(part, "")
    return kept


def chips(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _empty_condition() -> dict[str, str]:
    return {"field": "", "op": ">=", "value": ""}


def matcher_rows(values: dict[str, str]) -> list[MatcherRow]:
    """What the builder draws: each matcher, and each with at least one condition row."""
    shape = shape_of(values)
    rows = []
    for n, (prefix, (_event, conditions)) in enumerate(
        zip(_prefixes(values, shape), read_matchers(values, shape), strict=True), start=1
    ):
        title = "" if shape == "event" else f"{'Group' if shape == 'anyOf' else 'Step'} {n}"
        label = f"{title} condition" if title else "Condition"
        shown = conditions or [_empty_condition()]
        rows.append(
            MatcherRow(
                prefix=prefix,
                n=n,
                title=title,
                conditions=[
                    ConditionRow(
                        name=f"{prefix}.conditions.{i}",
                        matcher=n - 1,
                        n=i + 1,
                        op=c["op"] or ">=",
                        value=c["value"],
                        chips=chips(c["value"]),
                        listed=c["op"] in LIST_OPS,
                        label=label,
                        removable=bool(conditions),
                    )
                    for i, c in enumerate(shown)
                ],
            )
        )
    return rows


class RuleInputs(GameScoped):
    """The inputs of a definition, named by field path, shared by the editor and the tester
    (the rule builder reads `values`, `shape` and `matchers`)."""

    suggestions: list[str] = []
    values: dict[str, str] = {}
    errors: dict[str, str] = {}
    # The rule in words (api/missions/rules.py: summary), of the saved or tested rule.
    rule_summary: str = ""
    # Changes when the form is refilled, so its uncontrolled inputs take the new defaults;
    # `rule_key` when only the rule builder's inputs are drawn again (a change of shape).
    form_key: int = 0
    rule_key: int = 0
    # What the designer left in the builder's inputs since it was last drawn, kept on the
    # server only: leaving an input then sends and redraws nothing (each redraw of the
    # editor costs the browser a render). Merged into `values` before the builder is drawn
    # again; the completion kind, which decides the inputs shown, goes to `values` at once.
    _typed: dict[str, str] = {}

    @rx.var
    def shape(self) -> str:
        return shape_of(self.values)

    @rx.var
    def matchers(self) -> list[MatcherRow]:
        return matcher_rows(self.values)

    @rx.var
    def kind(self) -> str:
        return self.values.get("rule.completion.kind", "") or "count"

    def _fill_values(self, values: dict[str, str]) -> None:
        self.values, self._typed = values, {}
        self.form_key += 1

    def _merge_typed(self) -> None:
        if self._typed:
            self.values, self._typed = {**self.values, **self._typed}, {}

    def _reshaped(self, values: dict[str, str]) -> None:
        """New inputs for the builder: drawn again with these defaults (its messages were
        about inputs that may have moved)."""
        self.values, self._typed = values, {}
        self.errors = {k: v for k, v in self.errors.items() if not k.startswith("rule")}
        self.rule_key += 1

    def _list_fields(self) -> dict[str, str]:
        """The `in` / `not in` lists as the chips show them: newer than the form's hidden
        copies when Save follows the chip box's blur at once."""
        return {
            f"{c.name}.value": c.value
            for m in matcher_rows({**self.values, **self._typed})
            for c in m.conditions
            if c.listed
        }

    # --- the builder's events -------------------------------------------------------------

    @rx.event
    def keep(self, name: str, text: str):
        """An input left: its text kept for when the builder is drawn again."""
        if name == "rule.completion.kind":
            self._merge_typed()
            self.values = {**self.values, name: text}
        elif name.startswith(("rule.", "unit.rule.", STAGES, PAYOUTS)):
            self._typed = {**self._typed, name: text}

    @rx.event
    def choose_shape(self, shape: str):
        self._merge_typed()
        if shape not in SHAPES or shape == shape_of(self.values):
            return
        matchers = read_matchers(self.values, shape_of(self.values))
        if shape == "event":
            matchers = matchers[:1]
        while len(matchers) < (1 if shape == "event" else STEP_MINIMUM):
            matchers.append(("", []))
        self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def add_matcher(self):
        self._merge_typed()
        shape = shape_of(self.values)
        matchers = read_matchers(self.values, shape)
        if shape != "event" and len(matchers) < MATCHER_LIMIT:
            self._reshaped(with_matchers(self.values, shape, [*matchers, ("", [])]))

    @rx.event
    def remove_matcher(self, index: int):
        self._merge_typed()
        shape = shape_of(self.values)
        matchers = read_matchers(self.values, shape)
        least = STEP_MINIMUM if shape == "steps" else 1
        if shape != "event" and 0 <= index < len(matchers) and len(matchers) > least:
            del matchers[index]
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def move_matcher(self, index: int, delta: int):
        self._merge_typed()
        shape = shape_of(self.values)
        matchers = read_matchers(self.values, shape)
        other = index + delta
        if 0 <= index < len(matchers) and 0 <= other < len(matchers):
            matchers[index], matchers[other] = matchers[other], matchers[index]
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def add_condition(self, index: int):
        self._merge_typed()
        shape = shape_of(self.values)
        matchers = read_matchers(self.values, shape)
        if 0 <= index < len(matchers):
            event, conditions = matchers[index]
            shown = conditions or [_empty_condition()]  # the row drawn empty is one too
            if len(shown) < CONDITION_LIMIT:
                matchers[index] = (event, [*shown, _empty_condition()])
                self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def remove_condition(self, index: int, row: int):
        self._merge_typed()
        shape = shape_of(self.values)
        matchers = read_matchers(self.values, shape)
        if 0 <= index < len(matchers) and 0 <= row < len(matchers[index][1]):
            event, conditions = matchers[index]
            matchers[index] = (event, [c for i, c in enumerate(conditions) if i != row])
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def choose_op(self, name: str, op: str):
        """A condition's operator: a list's value shows as chips, any other as text."""
        if name.startswith("rule.") and name.endswith(".op"):
            self._merge_typed()
            self.values = {**self.values, name: op}

    @rx.event
    def add_chips(self, name: str, text: str):
        """What is typed in a list's box (one value, or several with commas) becomes chips;
        the box empties."""
        if not (name.startswith("rule.") and name.endswith(".value")) or not text.strip():
            return None
        self._merge_typed()
        listed = chips(self.values.get(name, ""))
        listed += [c for c in chips(text) if c not in listed]
        self.values = {**self.values, name: ", ".join(listed)}
        return rx.call_script(f"document.getElementById({json.dumps(name + '.chips')}).value=''")

    @rx.event
    def chip_key(self, name: str, key: str):
        """Enter in a list's box adds what is typed (through the box's blur, which sends
        it), and the box keeps the focus for the next value."""
        if key == "Enter":
            box = json.dumps(name + ".chips")
            return rx.call_script(
                f"(b => {{ b.blur(); b.focus(); }})(document.getElementById({box}))"
            )
        return None

    @rx.event
    def remove_chip(self, name: str, chip: str):
        if name.startswith("rule.") and name.endswith(".value"):
            self._merge_typed()
            kept = [c for c in chips(self.values.get(name, "")) if c != chip]
            self.values = {**self.values, name: ", ".join(kept)}

    # --- loading ------------------------------------------------------------------------

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
            lambda s, g, _a: editor.event_names(session=s, game_id=g.id)
        )
