"""The rule builder's inputs, shared by the mission editor and the rule tester.

The builder's inputs are uncontrolled and named after the rule's field paths
(`rule.event`, `rule.anyOf.1.conditions.0.value`, `rule.steps.2.event`, …), as
api/missions/forms.py reads them. `values` holds their text, kept up to date as the
designer leaves each input, so that a change of the rule's shape (a group added, a step
moved up, a condition removed) can renumber them without losing anything typed. A rule's
matchers are drawn from `values` alone (`matchers`): what the builder shows is what the
form submits.

Each matcher and condition has a key (`ROW_KEY`) that no change of shape alters: its
inputs are drawn under it, so a change renames them but never draws them afresh, and what
is typed while the server answers an add or a remove stays in them. The builder's events
name a row by its key, never by its place, which may have moved by the time the server
handles them; the form submits each row's key too, so a form read before a change reached
the browser is still read row by row (`_rule_fields`)."""

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
# A row's key, stored in `values` beside its inputs (`rule.anyOf.1._key`,
# `rule.anyOf.1.conditions.0._key`) and submitted by a hidden input; one never stored is
# the name the row had when first drawn. New rows get "new-1", "new-2", …
ROW_KEY = "_key"
# The names of the rows' inputs (and keys), as against the rule's other inputs.
ROW_NAME = re.compile(r"rule\.(_key|event|conditions|anyOf|steps)(\.|$)")
# A ladder's rows (`stages.0.threshold`, `stages.0.payout`, …) and the country payouts'
# (`payouts.0.countries`, `payouts.0.payout`, …): kept like the builder's.
STAGES = "stages."
PAYOUTS = "payouts."


@dataclass(frozen=True)
class ConditionRow:
    """One condition's inputs: `name` is its path (`rule.anyOf.1.conditions.0`)."""

    key: str
    name: str
    n: int  # its place in its matcher, from 1
    op: str
    value: str
    chips: list[str]  # the values of an `in` / `not in` list
    listed: bool  # in / not in: its value is chips
    removable: bool  # False for a matcher's one row while it is empty
    label: str  # how its inputs are named to a screen reader: "Condition", "Step 2 condition"


@dataclass(frozen=True)
class MatcherRow:
    """An event name and its conditions: the rule's own (`rule`), or one of anyOf's or the
    steps' (`rule.anyOf.1`)."""

    key: str
    prefix: str
    n: int  # from 1
    title: str  # "" for the rule's own event, "Group 2", "Step 2"
    conditions: list[ConditionRow] = field(default_factory=list)


@dataclass
class Matcher:
    """An event name and its conditions as `values` hold them, with the rows' keys."""

    key: str
    event: str = ""
    conditions: list[dict[str, str]] = field(default_factory=list)  # {_key, field, op, value}


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


def _condition_key(values: dict[str, str], matcher_key: str, prefix: str, i: int) -> str:
    """A condition's key: the stored one, or else its place in its matcher's key (the
    empty row drawn for a matcher with none is its first, before and after it is typed in)."""
    return values.get(f"{prefix}.conditions.{i}.{ROW_KEY}") or f"{matcher_key}.conditions.{i}"


def read_matchers(values: dict[str, str], shape: str) -> list[Matcher]:
    """The matchers the inputs hold, in order."""
    matchers = []
    for prefix in _prefixes(values, shape):
        key = values.get(f"{prefix}.{ROW_KEY}") or prefix
        conditions = [
            {
                ROW_KEY: _condition_key(values, key, prefix, i),
                **{p: values.get(f"{prefix}.conditions.{i}.{p}", "") for p in CONDITION_PARTS},
            }
            for i in _condition_numbers(values, prefix)
        ]
        matchers.append(Matcher(key, values.get(f"{prefix}.event", ""), conditions))
    return matchers


def with_matchers(values: dict[str, str], shape: str, matchers: list[Matcher]) -> dict[str, str]:
    """`values` with its matchers replaced by `matchers` in `shape`, numbered afresh, each
    row with its key."""
    kept = {name: text for name, text in values.items() if not ROW_NAME.match(name)}
    prefixes = ["rule"] if shape == "event" else [f"rule.{shape}.{i}" for i in range(len(matchers))]
    for prefix, matcher in zip(prefixes, matchers, strict=False):
        kept[f"{prefix}.{ROW_KEY}"] = matcher.key
        kept[f"{prefix}.event"] = matcher.event
        for i, condition in enumerate(matcher.conditions):
            for part in (ROW_KEY, *CONDITION_PARTS):
                kept[f"{prefix}.conditions.{i}.{part}"] = condition.get(part, "")
    return kept


# A list's box (not in the form) has the id CHIP_BOX + its condition's key.
CHIP_BOX = "chips."


def chip_box_id(key: str) -> str:
    return CHIP_BOX + key


def chips(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _empty_condition(key: str) -> dict[str, str]:
    return {ROW_KEY: key, "field": "", "op": ">=", "value": ""}


def _blank(condition: dict[str, str]) -> bool:
    """An empty row, as drawn for a matcher with no condition: nothing to remove."""
    return not condition["field"] and not condition["value"] and condition["op"] in ("", ">=")


def matcher_rows(values: dict[str, str]) -> list[MatcherRow]:
    """What the builder draws: each matcher, and each with at least one condition row."""
    shape = shape_of(values)
    rows = []
    for n, (prefix, matcher) in enumerate(
        zip(_prefixes(values, shape), read_matchers(values, shape), strict=True), start=1
    ):
        title = "" if shape == "event" else f"{'Group' if shape == 'anyOf' else 'Step'} {n}"
        label = f"{title} condition" if title else "Condition"
        conditions = matcher.conditions
        shown = conditions or [_empty_condition(f"{matcher.key}.conditions.0")]
        rows.append(
            MatcherRow(
                key=matcher.key,
                prefix=prefix,
                n=n,
                title=title,
                conditions=[
                    ConditionRow(
                        key=c[ROW_KEY],
                        name=f"{prefix}.conditions.{i}",
                        n=i + 1,
                        op=c["op"] or ">=",
                        value=c["value"],
                        chips=chips(c["value"]),
                        listed=c["op"] in LIST_OPS,
                        label=label,
                        removable=len(shown) > 1 or not _blank(c),
                    )
                    for i, c in enumerate(shown)
                ],
            )
        )
    return rows


def rule_fields(form: dict[str, str], now: dict[str, str]) -> dict[str, str]:
    """A submitted form with the builder's rows under the names they have `now` (the
    state's values, with what the designer left in the inputs).

    The form is read in the browser when it is submitted, which may be before the browser
    has drawn a change the server already made (a group removed, a step moved up): its
    rows are found by their keys. A row the form lacks (added meanwhile) is taken from
    `now`; one the builder no longer has is left out. The `in` / `not in` lists are taken
    as the chips show them: newer than the form's hidden copies when Save follows the chip
    box's blur at once."""
    suffix = f".{ROW_KEY}"
    drawn = {
        key: name.removesuffix(suffix)
        for name, key in form.items()
        if ROW_NAME.match(name) and name.endswith(suffix)
    }
    fields = {name: text for name, text in form.items() if not ROW_NAME.match(name)}

    def copy(key: str, name: str, parts: tuple[str, ...]) -> None:
        source, was = (form, drawn[key]) if key in drawn else (now, name)
        for part in parts:
            if f"{was}.{part}" in source:
                fields[f"{name}.{part}"] = source[f"{was}.{part}"]

    for m in matcher_rows(now):
        copy(m.key, m.prefix, ("event",))
        for c in m.conditions:
            copy(c.key, c.name, CONDITION_PARTS)
            if c.listed:
                fields[f"{c.name}.value"] = c.value
    return fields


class RuleInputs(GameScoped):
    """The inputs of a definition, named by field path, shared by the editor and the tester
    (the rule builder reads `values`, `shape` and `matchers`)."""

    suggestions: list[str] = []
    values: dict[str, str] = {}
    errors: dict[str, str] = {}
    # The rule in words (api/missions/rules.py: summary), of the saved or tested rule.
    rule_summary: str = ""
    # Changes when the form is refilled, so its uncontrolled inputs take the new defaults.
    form_key: int = 0
    # How many rows the builder has added (their keys: "new-1", "new-2", …).
    _rows_added: int = 0
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
        """The builder's rows changed: each kept row keeps its key, so its inputs stay as
        they are, renamed (its messages were about inputs that may have moved)."""
        self.values, self._typed = values, {}
        self.errors = {k: v for k, v in self.errors.items() if not k.startswith("rule")}

    def _new_key(self) -> str:
        self._rows_added += 1
        return f"new-{self._rows_added}"

    def _row_name(self, key: str) -> str | None:
        """The name a row's inputs have now (`rule.anyOf.0`, `rule.anyOf.0.conditions.1`);
        None for a row the builder no longer has."""
        for m in matcher_rows(self.values):
            if m.key == key:
                return m.prefix
            for c in m.conditions:
                if c.key == key:
                    return c.name
        return None

    def _rule_fields(self, form: dict[str, str]) -> dict[str, str]:
        """The submitted form with the builder's rows as they are now (`rule_fields`)."""
        return rule_fields(form, {**self.values, **self._typed})

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
    def keep_row(self, key: str, part: str, text: str):
        """A row's input left (a matcher's event, a condition's field or value): its text
        kept under the name the row has now."""
        name = self._row_name(key)
        if name is not None and part in ("event", "field", "value"):
            self._typed = {**self._typed, f"{name}.{part}": text}

    @rx.event
    def choose_shape(self, shape: str):
        self._merge_typed()
        if shape not in SHAPES or shape == shape_of(self.values):
            return
        matchers = read_matchers(self.values, shape_of(self.values))
        if shape == "event":
            matchers = matchers[:1]
        while len(matchers) < (1 if shape == "event" else STEP_MINIMUM):
            matchers.append(Matcher(self._new_key()))
        self._reshaped(with_matchers(self.values, shape, matchers))

    def _matchers(self) -> tuple[str, list[Matcher]]:
        """The rule's shape and its matchers, with everything the designer left in them."""
        self._merge_typed()
        shape = shape_of(self.values)
        return shape, read_matchers(self.values, shape)

    @staticmethod
    def _place(matchers: list[Matcher], key: str) -> int:
        """Where the matcher of this key is (-1: not there any more)."""
        return next((i for i, m in enumerate(matchers) if m.key == key), -1)

    @rx.event
    def add_matcher(self):
        shape, matchers = self._matchers()
        if shape != "event" and len(matchers) < MATCHER_LIMIT:
            matchers.append(Matcher(self._new_key()))
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def remove_matcher(self, key: str):
        shape, matchers = self._matchers()
        index = self._place(matchers, key)
        least = STEP_MINIMUM if shape == "steps" else 1
        if shape != "event" and index >= 0 and len(matchers) > least:
            del matchers[index]
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def move_matcher(self, key: str, delta: int):
        shape, matchers = self._matchers()
        index = self._place(matchers, key)
        other = index + delta
        if index >= 0 and 0 <= other < len(matchers):
            matchers[index], matchers[other] = matchers[other], matchers[index]
            self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def add_condition(self, key: str):
        shape, matchers = self._matchers()
        index = self._place(matchers, key)
        if index >= 0:
            matcher = matchers[index]
            # The row drawn empty for a matcher with none is one too, under its key.
            shown = matcher.conditions or [_empty_condition(f"{matcher.key}.conditions.0")]
            if len(shown) < CONDITION_LIMIT:
                matcher.conditions = [*shown, _empty_condition(self._new_key())]
                self._reshaped(with_matchers(self.values, shape, matchers))

    @rx.event
    def remove_condition(self, key: str):
        shape, matchers = self._matchers()
        for matcher in matchers:
            kept = [c for c in matcher.conditions if c[ROW_KEY] != key]
            if len(kept) < len(matcher.conditions):
                # The last one gives way to an empty row of a key of its own: drawn afresh.
                matcher.conditions = kept or [_empty_condition(self._new_key())]
                self._reshaped(with_matchers(self.values, shape, matchers))
                return

    def _condition_input(self, key: str, part: str) -> str | None:
        """The name of a condition's input now (`rule.conditions.0.op`), by its key."""
        name = self._row_name(key)
        return f"{name}.{part}" if name is not None and ".conditions." in name else None

    @rx.event
    def choose_op(self, key: str, op: str):
        """A condition's operator: a list's value shows as chips, any other as text."""
        if (name := self._condition_input(key, "op")) is not None:
            self._merge_typed()
            self.values = {**self.values, name: op}

    @rx.event
    def add_chips(self, key: str, text: str):
        """What is typed in a list's box (one value, or several with commas) becomes chips;
        the box empties."""
        name = self._condition_input(key, "value")
        if name is None or not text.strip():
            return None
        self._merge_typed()
        listed = chips(self.values.get(name, ""))
        listed += [c for c in chips(text) if c not in listed]
        self.values = {**self.values, name: ", ".join(listed)}
        return rx.call_script(f"document.getElementById({json.dumps(chip_box_id(key))}).value=''")

    @rx.event
    def chip_key(self, key: str, pressed: str):
        """Enter in a list's box adds what is typed (through the box's blur, which sends
        it), and the box keeps the focus for the next value."""
        if pressed == "Enter":
            box = json.dumps(chip_box_id(key))
            return rx.call_script(
                f"(b => {{ b.blur(); b.focus(); }})(document.getElementById({box}))"
            )
        return None

    @rx.event
    def remove_chip(self, key: str, chip: str):
        if (name := self._condition_input(key, "value")) is not None:
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
