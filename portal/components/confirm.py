"""Destructive actions ask first: a button that opens a question, and acts on "yes"."""

from __future__ import annotations

from typing import Any

import reflex as rx


def confirmed(
    label: str,
    *,
    title: str | rx.Var,
    description: str | rx.Var,
    on_confirm: Any,
    confirm_label: str = "",
    **button_props: Any,
) -> rx.Component:
    """A red button `label`; clicking it asks `title` / `description`, and only its
    `confirm_label` button (the label again by default) runs `on_confirm`."""
    button_props = {"size": "1", "color_scheme": "red", "variant": "soft", **button_props}
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(rx.button(label, **button_props)),
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(description, size="2"),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(
                    rx.button(confirm_label or label, color_scheme="red", on_click=on_confirm)
                ),
                spacing="3",
                justify="end",
                margin_top="1rem",
            ),
            max_width="440px",
        ),
    )
