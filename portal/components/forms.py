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
    error = errors[name].to(str) if errors is not None else None
    input_props = dict(
        name=name,
        id=name,
        type=type,
        placeholder=placeholder,
        required=required,
        size="3",
        width="100%",
        **props,
    )
    if default_value is not None:
        input_props["default_value"] = default_value
    return rx.vstack(
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=name),
        rx.input(**input_props),
        rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        rx.cond(
            error is not None and errors is not None and errors.contains(name),
            rx.text(error, size="2", color_scheme="red", role="alert"),
        )
        if errors is not None
        else rx.fragment(),
        spacing="1",
        width="100%",
    )


def form_error(message: rx.Var) -> rx.Component:
    return rx.cond(
        message != "",
        rx.callout(message, icon="triangle-alert", color_scheme="red", role="alert", width="100%"),
    )
