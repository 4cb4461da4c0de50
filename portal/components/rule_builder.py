"""The rule builder: event name (with the game's event names as suggestions), up to three
conditions, and the completion. Uncontrolled inputs for rx.form, named after the rule's
field paths in a mission definition (`rule.event`, `rule.conditions.0.value`, …); their
defaults come from the state's `values` and `conditions`. Every input's problem shows under
it at once (a condition's under its row)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal.components.forms import field_error, native_select

OPERATORS = [">=", ">", "<=", "<", "==", "!=", "exists", "not exists"]
COMPLETIONS = [
    ("count", "count of passing events"),
    ("consecutive", "consecutive passing events"),
    ("sum", "sum of a field over passing events"),
]


def rule_builder(state) -> rx.Component:
    errors, values = state.errors, state.values

    def name(n: rx.Var, part: str) -> rx.Var:
        return "rule.conditions." + n.to_string() + "." + part

    def text(row: rx.Var, n: rx.Var, part: str, placeholder: str, width: str) -> rx.Component:
        """A condition's field or value input, marked invalid with its message."""
        key = name(n, part)
        return rx.input(
            name=key,
            default_value=row[part],
            placeholder=placeholder,
            aria_label=f"Condition {part} " + (n + 1).to_string(),
            size="2",
            width=width,
            **_marked(errors, key),
        )

    def condition(row: rx.Var, n: rx.Var) -> rx.Component:
        return rx.vstack(
            rx.hstack(
                text(row, n, "field", "value or traits.kills", "220px"),
                native_select(
                    *[rx.el.option(op, value=op) for op in OPERATORS],
                    name=name(n, "op"),
                    default_value=row["op"],
                    aria_label="Condition operator " + (n + 1).to_string(),
                ),
                text(row, n, "value", "1000", "140px"),
                wrap="wrap",
                spacing="2",
            ),
            *[_row_error(errors, name(n, part)) for part in ("field", "op", "value")],
            spacing="1",
        )

    return rx.vstack(
        rx.el.label(rx.text("Event name", size="2", weight="medium"), html_for="rule.event"),
        rx.input(
            name="rule.event",
            id="rule.event",
            default_value=values["rule.event"].to(str),
            list="event-names",
            placeholder="MATCH_END",
            required=True,
            size="2",
            width="320px",
            max_width="100%",
        ),
        rx.el.datalist(
            rx.foreach(state.suggestions, lambda e: rx.el.option(value=e)), id="event-names"
        ),
        field_error(errors, "rule.event"),
        rx.text(
            "Filter: every condition must hold (leave a row empty to skip it)",
            size="2",
            weight="medium",
        ),
        rx.foreach(state.conditions, lambda row, n: condition(row, n)),
        rx.text("Completes at", size="2", weight="medium"),
        rx.hstack(
            native_select(
                *[rx.el.option(text, value=value) for value, text in COMPLETIONS],
                name="rule.completion.kind",
                default_value=values["rule.completion.kind"].to(str),
                aria_label="Completion",
            ),
            rx.text("≥", size="3"),
            rx.input(
                name="rule.completion.threshold",
                default_value=values["rule.completion.threshold"].to(str),
                aria_label="Completion threshold",
                size="2",
                width="100px",
                input_mode="decimal",
                **_marked(errors, "rule.completion.threshold"),
            ),
            rx.input(
                name="rule.completion.field",
                default_value=values["rule.completion.field"].to(str),
                placeholder="field to sum (for sum)",
                aria_label="Field to sum",
                size="2",
                width="220px",
                **_marked(errors, "rule.completion.field"),
            ),
            wrap="wrap",
            align="center",
        ),
        field_error(errors, "rule.completion.threshold"),
        field_error(errors, "rule.completion.field"),
        field_error(errors, "rule"),
        spacing="2",
        width="100%",
    )


def _row_error(errors: rx.Var, key: rx.Var) -> rx.Component:
    """The message for a condition's input (its name is a var of the row's number)."""
    return rx.cond(
        errors.contains(key),
        rx.text(errors[key].to(str), size="2", color_scheme="red", role="alert", id=key + "-error"),
    )


def _marked(errors: rx.Var, key: str | rx.Var) -> dict[str, Any]:
    """An input's props that mark it invalid and name its message (`<key>-error`)."""
    return {
        "aria_invalid": rx.cond(errors.contains(key), "true", "false"),
        "aria_describedby": key + "-error",
    }
