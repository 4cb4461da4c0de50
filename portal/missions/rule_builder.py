"""The rule builder: which events count (one event with its conditions, any of several
groups, or steps in order) and when the mission is complete, every kind of rule
(docs/missions.md) without typing JSON.

Uncontrolled inputs for rx.form, named after the rule's field paths in a mission definition
(`rule.event`, `rule.anyOf.1.conditions.0.value`, `rule.completion.kind`, …); their
defaults come from the state's `values` (portal/missions/rule_inputs.py), which keeps what
each input holds as the designer leaves it. Each group, step and condition is drawn under
its row's key, so adding, removing or moving one renames the inputs of the others but
never draws them afresh: nothing typed is lost, even while the server answers. Every
input's problem shows under it at once (a condition's under its row)."""

from __future__ import annotations

from typing import Any
from zoneinfo import available_timezones

import reflex as rx

from api.missions.forms import UNIT, UNIT_CHOICES
from portal.components.forms import TIME_ZONES, field_error, native_select
from portal.missions.rule_inputs import CHIP_BOX, ROW_KEY

OPERATORS = [">=", ">", "<=", "<", "==", "!=", "exists", "not exists", "in", "not in"]
SHAPES = [
    ("event", "One event, with its conditions"),
    ("anyOf", "Any of several events (OR groups)"),
    ("steps", "Steps, in order"),
]
COMPLETIONS = [
    ("count", "count: passing events"),
    ("consecutive", "consecutive: passing events in a row"),
    ("sum", "sum: a field added up"),
    ("max", "max: a field's highest value"),
    ("min", "min: a field's lowest value"),
    ("distinct", "distinct: different values of a field"),
    ("days", "days: different days with a passing event"),
    ("streak", "streak: days in a row with a passing event"),
]
FIELD_KINDS = ("sum", "max", "min", "distinct")
DAY_KINDS = ("days", "streak")
PER_KINDS = ("count", "consecutive", "sum", "max", "min", "distinct")
WINDOW_KINDS = ("count", "sum")
GROUP_FIELDS = "group-fields"
# No form owns an input whose `form` names none: Enter in a chip box adds a chip, it does
# not save the editor's form.
NO_FORM = {"form": "chip-box"}


def rule_builder(state) -> rx.Component:
    errors, values = state.errors, state.values
    keep = state.keep

    def kept(name: str | rx.Var) -> dict[str, Any]:
        """An input's default (from `values`) and the event that keeps what it holds."""
        return {
            "default_value": values.get(name, "").to(str),
            "on_blur": lambda text: keep(name, text),
        }

    def kept_in_row(key: rx.Var, part: str, name: rx.Var) -> dict[str, Any]:
        """The same for a row's input, whose name a change of the rule's shape may alter
        before the server hears of it: its row is named by key."""
        return {
            "default_value": values.get(name, "").to(str),
            "on_blur": lambda text: state.keep_row(key, part, text),
        }

    def row_key(name: rx.Var, key: rx.Var) -> rx.Component:
        """The row's key, submitted with its inputs (`_rule_fields` reads the form by it)."""
        return rx.el.input(type="hidden", name=name + "." + ROW_KEY, value=key)

    def matcher(m: rx.Var) -> rx.Component:
        event_name = m.prefix + ".event"
        heading = rx.cond(
            m.title != "",
            rx.hstack(
                rx.text(m.title, size="2", weight="bold"),
                rx.spacer(),
                rx.cond(
                    state.shape == "steps",
                    rx.hstack(
                        _icon("arrow-up", "Move " + m.title + " up", state.move_matcher(m.key, -1)),
                        _icon(
                            "arrow-down", "Move " + m.title + " down", state.move_matcher(m.key, 1)
                        ),
                        spacing="1",
                    ),
                ),
                rx.button(
                    "Remove",
                    size="1",
                    variant="soft",
                    color_scheme="red",
                    type="button",
                    aria_label="Remove " + m.title,
                    on_click=state.remove_matcher(m.key),
                ),
                width="100%",
                align="center",
            ),
        )
        return rx.box(
            rx.vstack(
                heading,
                row_key(m.prefix, m.key),
                rx.el.label(
                    rx.text(
                        rx.cond(m.title != "", m.title + " event name", "Event name"),
                        size="2",
                        weight="medium",
                    ),
                    html_for=event_name,
                ),
                rx.input(
                    name=event_name,
                    id=event_name,
                    list="event-names",
                    placeholder="MATCH_END",
                    size="2",
                    width="320px",
                    max_width="100%",
                    **kept_in_row(m.key, "event", event_name),
                    **marked(errors, event_name),
                ),
                row_error(errors, event_name),
                rx.text(
                    "Conditions: every one must hold (leave a row empty to skip it)",
                    size="1",
                    color_scheme="gray",
                ),
                rx.foreach(m.conditions, lambda c: condition(c)),
                rx.button(
                    rx.icon("plus", size=14),
                    "Add condition",
                    size="1",
                    variant="soft",
                    type="button",
                    on_click=state.add_condition(m.key),
                ),
                spacing="2",
                width="100%",
            ),
            border=rx.cond(m.title != "", "1px solid var(--gray-a6)", "none"),
            border_radius="8px",
            padding=rx.cond(m.title != "", "0.75rem", "0"),
            width="100%",
            data_testid="matcher",
            key=m.key,
        )

    def condition(c: rx.Var) -> rx.Component:
        number = c.n.to_string()

        def text(part: str, placeholder: str, width: str) -> rx.Component:
            name = c.name + "." + part
            return rx.input(
                name=name,
                placeholder=placeholder,
                aria_label=c.label + " " + part + " " + number,
                size="2",
                width=width,
                max_width="100%",
                **kept_in_row(c.key, part, name),
                **marked(errors, name),
            )

        op_name = c.name + ".op"
        return rx.vstack(
            row_key(c.name, c.key),
            rx.flex(
                text("field", "value or traits.kills", "200px"),
                native_select(
                    *[rx.el.option(op, value=op) for op in OPERATORS],
                    name=op_name,
                    default_value=c.op,
                    aria_label=c.label + " operator " + number,
                    on_change=lambda op: state.choose_op(c.key, op),
                ),
                rx.cond(
                    c.listed,
                    chip_box(c, number),
                    rx.cond(
                        (c.op == "exists") | (c.op == "not exists"),
                        rx.fragment(),
                        text("value", "1000", "140px"),
                    ),
                ),
                _icon(
                    "x",
                    "Remove " + c.label.lower() + " " + number,
                    state.remove_condition(c.key),
                    hidden=~c.removable,
                ),
                wrap="wrap",
                gap="2",
                align="center",
                width="100%",
            ),
            *[row_error(errors, c.name + "." + part) for part in ("field", "op", "value")],
            spacing="1",
            width="100%",
            data_testid="condition",
            key=c.key,
        )

    def chip_box(c: rx.Var, number: rx.Var) -> rx.Component:
        """An `in` / `not in` list: its values as removable chips, a box that adds what is
        typed (Enter, a comma between values, or leaving it), and the list as the
        condition's value (comma-separated) in a hidden input."""
        name = c.name + ".value"
        return rx.vstack(
            rx.flex(
                rx.foreach(
                    c.chips,
                    lambda chip: rx.badge(
                        chip,
                        rx.icon_button(
                            rx.icon("x", size=12),
                            size="1",
                            variant="ghost",
                            type="button",
                            aria_label="Remove " + chip,
                            on_click=state.remove_chip(c.key, chip),
                        ),
                        variant="soft",
                        size="2",
                        data_testid="chip",
                    ),
                ),
                wrap="wrap",
                gap="1",
            ),
            rx.input(
                id=CHIP_BOX + c.key,
                placeholder="Type a value, then Enter",
                aria_label=c.label + " value " + number,
                auto_complete="off",
                size="2",
                width="200px",
                max_width="100%",
                on_blur=lambda text: state.add_chips(c.key, text),
                on_key_down=lambda key: state.chip_key(c.key, key),
                custom_attrs=NO_FORM,
                **marked(errors, name),
            ),
            rx.el.input(type="hidden", name=name, value=c.value),
            spacing="1",
        )

    kind = state.kind
    completion = rx.vstack(
        rx.text("Completes at", size="2", weight="medium"),
        rx.flex(
            native_select(
                *[rx.el.option(text, value=value) for value, text in COMPLETIONS],
                name="rule.completion.kind",
                default_value=kind,
                aria_label="Completion",
                on_change=lambda k: keep("rule.completion.kind", k),
            ),
            rx.text(rx.cond(kind == "min", "≤", "≥"), size="3"),
            rx.input(
                name="rule.completion.threshold",
                aria_label="Completion threshold",
                size="2",
                width="100px",
                input_mode="decimal",
                **kept("rule.completion.threshold"),
                **marked(errors, "rule.completion.threshold"),
            ),
            rx.cond(
                _one_of(kind, FIELD_KINDS),
                rx.input(
                    name="rule.completion.field",
                    placeholder=rx.cond(
                        kind == "distinct", "value, traits.map or groupId", "value or traits.score"
                    ),
                    list=GROUP_FIELDS,
                    aria_label="Completion field",
                    size="2",
                    width="220px",
                    max_width="100%",
                    **kept("rule.completion.field"),
                    **marked(errors, "rule.completion.field"),
                ),
            ),
            rx.cond(
                _one_of(kind, DAY_KINDS),
                rx.input(
                    name="rule.completion.timeZone",
                    placeholder="UTC",
                    list=TIME_ZONES,
                    aria_label="Time zone",
                    auto_complete="off",
                    size="2",
                    width="220px",
                    max_width="100%",
                    **kept("rule.completion.timeZone"),
                    **marked(errors, "rule.completion.timeZone"),
                ),
            ),
            wrap="wrap",
            gap="2",
            align="center",
        ),
        rx.text(
            rx.match(
                kind,
                ("consecutive", "Passing events in a row; a failing one starts the run again."),
                ("sum", "The field of passing events, added up."),
                ("max", "The highest value of the field in a passing event."),
                ("min", "The lowest value of the field in a passing event (0 allowed)."),
                ("distinct", "How many different values of the field passing events had."),
                ("days", "Calendar days with a passing event, in the time zone (UTC if empty)."),
                ("streak", "Calendar days in a row with a passing event, in the time zone."),
                "How many events pass.",
            ),
            size="1",
            color_scheme="gray",
        ),
        *[
            field_error(errors, f"rule.completion.{part}")
            for part in ("kind", "threshold", "field", "timeZone")
        ],
        rx.cond(
            _one_of(kind, PER_KINDS),
            rx.vstack(
                rx.el.label(
                    rx.text("Within one group (optional)", size="2", weight="medium"),
                    html_for="rule.per",
                ),
                rx.input(
                    name="rule.per",
                    id="rule.per",
                    placeholder="groupId or traits.map",
                    list=GROUP_FIELDS,
                    size="2",
                    width="220px",
                    max_width="100%",
                    **kept("rule.per"),
                    **marked(errors, "rule.per"),
                ),
                rx.text(
                    "The target is reached in one group: one match, one map, …",
                    size="1",
                    color_scheme="gray",
                ),
                field_error(errors, "rule.per"),
                spacing="1",
            ),
        ),
        rx.cond(
            _one_of(kind, WINDOW_KINDS),
            _duration(
                state,
                "rule.window.seconds",
                "Window (optional)",
                "Only passing events this close together count together (not with a group).",
            ),
        ),
        spacing="2",
        width="100%",
    )

    shape = state.shape
    return rx.vstack(
        rx.text("Which events count", size="2", weight="medium"),
        native_select(
            *[rx.el.option(text, value=value) for value, text in SHAPES],
            aria_label="Which events count",
            default_value=shape,
            on_change=state.choose_shape,
            width="320px",
            max_width="100%",
        ),
        rx.foreach(state.matchers, matcher),
        rx.cond(
            shape != "event",
            rx.button(
                rx.icon("plus", size=14),
                rx.cond(shape == "steps", "Add step", "Add group"),
                size="2",
                variant="soft",
                type="button",
                on_click=state.add_matcher,
            ),
        ),
        field_error(errors, "rule.anyOf"),
        field_error(errors, "rule.steps"),
        rx.cond(
            shape == "steps",
            _duration(
                state,
                "rule.within.seconds",
                "All steps within (optional)",
                "From the first step; the last step completes the mission.",
            ),
            completion,
        ),
        field_error(errors, "rule"),
        rx.el.datalist(
            rx.foreach(state.suggestions, lambda e: rx.el.option(value=e)), id="event-names"
        ),
        rx.el.datalist(
            *[rx.el.option(value=z) for z in sorted(available_timezones())], id=TIME_ZONES
        ),
        rx.el.datalist(rx.el.option(value="groupId"), rx.el.option(value="value"), id=GROUP_FIELDS),
        spacing="3",
        width="100%",
    )


def _duration(state, name: str, label: str, hint: str) -> rx.Component:
    """A length of time: an amount and its unit (forms.py converts it to seconds)."""
    unit = UNIT + name
    return rx.vstack(
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=name),
        rx.hstack(
            rx.input(
                name=name,
                id=name,
                input_mode="numeric",
                size="2",
                width="100px",
                default_value=state.values.get(name, "").to(str),
                on_blur=lambda text: state.keep(name, text),
                **marked(state.errors, name),
            ),
            native_select(
                *[
                    rx.el.option(words, value=str(seconds))
                    for seconds, words in UNIT_CHOICES.items()
                ],
                name=unit,
                default_value=state.values.get(unit, "3600").to(str),
                aria_label=label.removesuffix(" (optional)") + " unit",
                on_change=lambda text: state.keep(unit, text),
            ),
            align="center",
        ),
        rx.text(hint, size="1", color_scheme="gray"),
        field_error(state.errors, name),
        spacing="1",
    )


def _one_of(var: rx.Var, choices: tuple[str, ...]) -> rx.Var:
    return rx.Var.create(list(choices)).contains(var)


def _icon(icon: str, label: Any, on_click: Any, hidden: Any = False) -> rx.Component:
    return rx.icon_button(
        rx.icon(icon, size=14),
        size="1",
        variant="soft",
        type="button",
        aria_label=label,
        on_click=on_click,
        display=rx.cond(hidden, "none", "inline-flex"),
    )


def row_error(errors: rx.Var, key: rx.Var) -> rx.Component:
    """The message for an input whose name is a var (a condition's, a group's event)."""
    return rx.cond(
        errors.contains(key),
        rx.text(errors[key].to(str), size="2", color_scheme="red", role="alert", id=key + "-error"),
    )


def marked(errors: rx.Var, key: str | rx.Var) -> dict[str, Any]:
    """An input's props that mark it invalid and name its message (`<key>-error`)."""
    return {
        "aria_invalid": rx.cond(errors.contains(key), "true", "false"),
        "aria_describedby": key + "-error",
    }
