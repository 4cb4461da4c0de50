"""Form fields with labels and inline errors; uncontrolled, named inputs for rx.form."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import reflex as rx

from api.conversions import REASON_MAX, REASON_MIN
from api.fraud import DESCRIPTIONS
from portal.state.auth import SUBMITTED, AuthState

# The id of the datalist of IANA time zones a page draws for its time zone inputs.
TIME_ZONES = "time-zones"


def field(
    label: str,
    name: str,
    *,
    errors: rx.Var | None = None,
    type: str = "text",
    placeholder: str = "",
    hint: str = "",
    default_value: str | rx.Var | None = None,
    required: bool = True,
    **props,
) -> rx.Component:
    """A labelled input named `name`, its hint, and its error from `errors` (a dict var)."""
    if default_value is not None:
        props["default_value"] = default_value
    # The input's id is its name unless given: two forms of one page may share a name.
    input_id = props.pop("id", name)
    if errors is not None:  # marked invalid, and its message read with it
        props["aria_invalid"] = rx.cond(errors.contains(name), "true", "false")
        props["aria_describedby"] = f"{input_id}-error"
    parts = [
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=input_id),
        rx.input(
            name=name,
            id=input_id,
            type=type,
            placeholder=placeholder,
            required=required,
            size="3",
            width="100%",
            **props,
        ),
    ]
    if hint:
        parts.append(rx.text(hint, size="1", color_scheme="gray"))
    if errors is not None:
        parts.append(field_error(errors, name, input_id=input_id))
    return rx.vstack(*parts, spacing="1", width="100%")


def remove_row_button(label: Any, on_click: Any) -> rx.Component:
    """The small red × that removes one row of a list of rows (stages, country payouts)."""
    return rx.icon_button(
        rx.icon("x", size=14),
        size="1",
        variant="soft",
        color_scheme="red",
        type="button",
        aria_label=label,
        on_click=on_click,
    )


def field_error(errors: rx.Var, name: str, input_id: str = "") -> rx.Component:
    """The message for input `name` in an errors dict var, when there is one; its id
    (`<input id>-error`) is what the input's aria-describedby names."""
    return rx.cond(
        errors.contains(name),
        rx.text(
            errors[name].to(str),
            size="2",
            color_scheme="red",
            role="alert",
            id=f"{input_id or name}-error",
        ),
    )


def form_error(message: rx.Var) -> rx.Component:
    return rx.cond(
        message != "",
        rx.callout(message, icon="triangle-alert", color_scheme="red", role="alert", width="100%"),
    )


SELECT_STYLE = {
    "padding": "0.45rem",
    "border-radius": "6px",
    "border": "1px solid var(--gray-a7)",
    "background": "var(--color-surface)",
}


def native_select(*options: rx.Component, width: str = "auto", **props) -> rx.Component:
    """A native <select>: it submits with rx.form by its name, styled like the inputs."""
    return rx.el.select(*options, style={**SELECT_STYLE, "width": width}, **props)


def signal_select(
    signal: str, choices: Sequence[tuple[str, str]], *, name: str, input_id: str, value: Any
) -> rx.Component:
    """A risk signal's action (docs/fraud.md#rules): its name as the label, a select of
    (value, text) `choices` starting at `value`, and what the signal means under it."""
    return rx.vstack(
        rx.el.label(
            rx.text(signal, size="2", weight="medium", font_family="var(--code-font-family)"),
            html_for=input_id,
        ),
        native_select(
            *[rx.el.option(text, value=v) for v, text in choices],
            name=name,
            id=input_id,
            default_value=value,
            width="100%",
        ),
        rx.text(DESCRIPTIONS[signal], size="1", color_scheme="gray"),
        spacing="1",
        width="100%",
    )


def reason_fields(
    input_id: str, errors: rx.Var, placeholder: str, note: str = ""
) -> tuple[rx.Component, ...]:
    """A reason dialog's form: the form's own error, the "Reason" label and text area, the
    length it takes (then `note`), the reason's error and the submission counter. The text
    area is marked invalid (and described by the error) when `errors` names `reason`."""
    return (
        form_error(errors.get("form", "").to(str)),
        rx.el.label(rx.text("Reason", size="2", weight="medium"), html_for=input_id),
        rx.text_area(
            name="reason",
            id=input_id,
            rows="3",
            width="100%",
            auto_focus=True,
            placeholder=placeholder,
            aria_invalid=rx.cond(errors.contains("reason"), "true", "false"),
            aria_describedby=f"{input_id}-error",
        ),
        rx.text(
            f"{REASON_MIN} to {REASON_MAX} characters.{' ' + note if note else ''}",
            size="1",
            color_scheme="gray",
        ),
        field_error(errors, "reason", input_id=input_id),
        submission_count(),
    )


def submission_count() -> rx.Component:
    """The hidden input that makes a form's submit count once (`AuthState._first`)."""
    return rx.el.input(type="hidden", name=SUBMITTED, value=AuthState.submitted.to_string())


def search_form(
    *, placeholder: str, label: str, value: rx.Var, on_submit: Any, hint: str = ""
) -> rx.Component:
    """A list's search box and its button; back on the page, the box shows the search the
    list is filtered by. As wide as a phone's card, and no wider than ids need."""
    row = rx.hstack(
        rx.input(
            name="search",
            placeholder=placeholder,
            size="2",
            aria_label=label,
            default_value=value,
            width="100%",
            max_width="420px",
        ),
        rx.button("Search", type="submit", size="2", variant="soft"),
        wrap="wrap",
        width="100%",
    )
    if hint:
        row = rx.vstack(
            row, rx.text(hint, size="1", color_scheme="gray"), spacing="1", width="100%"
        )
    return rx.form(row, on_submit=on_submit)


def search_box(state: Any, placeholder: str, label: str) -> rx.Component:
    """A list's search box and its button, sent to `state.find` (the Users and Mail outbox
    pages); unlike `search_form`, the box does not show the search in force."""
    return rx.form(
        rx.hstack(
            rx.input(
                name="search",
                placeholder=placeholder,
                size="2",
                aria_label=label,
                width="320px",
                max_width="100%",
            ),
            rx.button("Search", type="submit", size="2", variant="soft"),
            wrap="wrap",
        ),
        on_submit=state.find,
    )
