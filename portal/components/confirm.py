"""A button that asks before it does something that cannot be taken back."""

from __future__ import annotations

from typing import Any

import reflex as rx


def confirm_button(
    label: str,
    *,
    title: Any,
    description: str,
    confirm: str,
    on_confirm: Any,
    **button_props: Any,
) -> rx.Component:
    """`label` opens a dialog naming the thing (`title`) and what follows (`description`);
    only its `confirm` button does `on_confirm`. Cancel (or Escape) changes nothing."""
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(rx.button(label, type="button", **button_props)),
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(description, size="2"),
            rx.flex(
                rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(rx.button(confirm, color_scheme="red", on_click=on_confirm)),
                spacing="3",
                margin_top="16px",
                justify="end",
            ),
            max_width="440px",
        ),
    )


def confirm_dialog(
    *, open: rx.Var, title: Any, description: str, confirm: str, on_confirm: Any, on_cancel: Any
) -> rx.Component:
    """The same question, opened by the state (`open`), e.g. before a save that deactivates."""
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(description, size="2"),
            rx.flex(
                rx.button("Cancel", variant="soft", color_scheme="gray", on_click=on_cancel),
                rx.button(confirm, color_scheme="red", on_click=on_confirm),
                spacing="3",
                margin_top="16px",
                justify="end",
            ),
            max_width="440px",
            on_escape_key_down=on_cancel,
        ),
        open=open,
    )


def form_dialog(
    *fields: rx.Component,
    title: Any,
    open: rx.Var,
    submit: str,
    on_submit: Any,
    on_cancel: Any,
    description: str = "",
    color_scheme: str = "accent",
) -> rx.Component:
    """A dialog holding a small form (a reason, a new name, a studio), opened by the state
    (`open`); Cancel, Escape or a click outside calls `on_cancel`."""
    submit_props = {} if color_scheme == "accent" else {"color_scheme": color_scheme}
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(title),
            rx.cond(description != "", rx.dialog.description(description)),
            rx.form(
                rx.vstack(
                    *fields,
                    rx.hstack(
                        rx.button(
                            "Cancel",
                            type="button",
                            variant="soft",
                            color_scheme="gray",
                            on_click=on_cancel,
                        ),
                        rx.button(submit, type="submit", **submit_props),
                        justify="end",
                        spacing="3",
                        width="100%",
                    ),
                    spacing="3",
                ),
                on_submit=on_submit,
            ),
        ),
        open=open,
        on_open_change=lambda _open: on_cancel,
    )
