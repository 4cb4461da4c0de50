"""Form fields with labels and inline errors; uncontrolled, named inputs for rx.form."""

from __future__ import annotations

import reflex as rx


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
        parts.append(field_error(errors, name))
    return rx.vstack(*parts, spacing="1", width="100%")


def field_error(errors: rx.Var, name: str) -> rx.Component:
    """The message for input `name` in an errors dict var, when there is one."""
    return rx.cond(
        errors.contains(name),
        rx.text(errors[name].to(str), size="2", color_scheme="red", role="alert"),
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
