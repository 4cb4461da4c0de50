"""Form fields with labels and inline errors; uncontrolled, named inputs for rx.form."""

from __future__ import annotations

import reflex as rx

from portal.state.auth import SUBMITTED, AuthState


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


def submission_count() -> rx.Component:
    """The hidden input that makes a form's submit count once (`AuthState._first`)."""
    return rx.el.input(type="hidden", name=SUBMITTED, value=AuthState.submitted.to_string())
