"""The dialog that asks for the password again before a sensitive action (the `Reauth`
state mixin, portal/state/reauth.py); the action runs once it is right."""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal.components.confirm import form_dialog
from portal.components.forms import form_error


def reauth_dialog(state: Any) -> rx.Component:
    """Place it once on the page of a state that mixes `Reauth` in."""
    return form_dialog(
        form_error(state.reauth_error),
        rx.input(
            name="password",
            type="password",
            placeholder="Your password",
            aria_label="Your password",
            auto_complete="current-password",
            auto_focus=True,
            width="100%",
        ),
        title="Enter your password",
        description=(
            "This change needs your password again: it was not entered in this browser in "
            "the last ten minutes."
        ),
        open=state.reauth_open,
        submit="Continue",
        on_submit=state.reauth,
        on_cancel=state.cancel_reauth,
    )
