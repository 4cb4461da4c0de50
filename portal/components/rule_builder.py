"""The rule builder: event name (with the game's event names as suggestions), up to three
conditions, and the completion. Named, uncontrolled inputs for rx.form."""

from __future__ import annotations

import reflex as rx

from portal.components.forms import field_error, native_select

OPERATORS = [">=", ">", "<=", "<", "==", "!=", "exists", "not exists"]
COMPLETIONS = [
    ("count", "count of passing events"),
    ("consecutive", "consecutive passing events"),
    ("sum", "sum of a field over passing events"),
]


def rule_builder(state) -> rx.Component:
    errors = state.errors

    def condition(row: rx.Var, n: rx.Var) -> rx.Component:
        return rx.hstack(
            rx.input(
                name="cond_field_" + n.to_string(),
                default_value=row["field"],
                placeholder="value or traits.kills",
                aria_label="Condition field " + (n + 1).to_string(),
                size="2",
                width="220px",
            ),
            native_select(
                *[rx.el.option(op, value=op) for op in OPERATORS],
                name="cond_op_" + n.to_string(),
                default_value=row["op"],
                aria_label="Condition operator " + (n + 1).to_string(),
            ),
            rx.input(
                name="cond_value_" + n.to_string(),
                default_value=row["value"],
                placeholder="1000",
                aria_label="Condition value " + (n + 1).to_string(),
                size="2",
                width="140px",
            ),
            wrap="wrap",
            spacing="2",
        )

    return rx.vstack(
        rx.el.label(rx.text("Event name", size="2", weight="medium"), html_for="rule_event"),
        rx.input(
            name="rule_event",
            id="rule_event",
            default_value=state.rule_event,
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
        field_error(errors, "rule_event"),
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
                name="completion",
                default_value=state.completion,
                aria_label="Completion",
            ),
            rx.text("≥", size="3"),
            rx.input(
                name="threshold",
                default_value=state.threshold,
                aria_label="Completion threshold",
                size="2",
                width="100px",
                input_mode="decimal",
            ),
            rx.input(
                name="sum_field",
                default_value=state.sum_field,
                placeholder="field to sum (for sum)",
                aria_label="Field to sum",
                size="2",
                width="220px",
            ),
            wrap="wrap",
            align="center",
        ),
        field_error(errors, "threshold"),
        field_error(errors, "rule"),
        spacing="2",
        width="100%",
    )
