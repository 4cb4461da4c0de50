"""The forgotten password: ask for a reset link, then set the new password with it.

Both forms post to the session routes (portal/session_routes.py) from the browser, as
the sign-in does; the reset link's token stays in the page's address fragment and goes
only into that post. The answers come back here to be shown beside the fields."""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal import routes
from portal.accounts.login_state import post_form_js
from portal.state.auth import AuthState

FORGOT_JS = post_form_js("forgot-form", routes.FORGOT)
RESET_JS = post_form_js(
    "reset-form",
    routes.RESET,
    extra='fields.token = new URLSearchParams(window.location.hash.slice(1)).get("token") || "";',
)
RESET_INPUTS = frozenset({"password", "confirm"})


class PasswordFormState(AuthState):
    """One form posted by the browser: its errors, and whether it is on its way."""

    errors: dict[str, str] = {}
    error: str = ""
    sending: bool = False

    @rx.event
    def start(self):
        self.errors, self.error, self.sending = {}, "", True

    @rx.event
    def refused(self, answer: dict[str, Any] | None):
        """The route's error answer (None: it succeeded and the page is leaving)."""
        self.sending = False
        if not answer:
            return
        fields = {
            str(d.get("path")): str(d.get("message", ""))
            for d in answer.get("details") or []
            if isinstance(d, dict) and d.get("path")
        }
        self.errors = {k: v for k, v in fields.items() if k in self._inputs()}
        if not self.errors:
            self.error = str(answer.get("message", ""))

    def _inputs(self) -> frozenset[str]:
        return frozenset()


class ForgotState(PasswordFormState):
    # `?sent=1`: the request went through (whether or not the address has an account).
    sent: bool = False

    def _inputs(self) -> frozenset[str]:
        return frozenset({"email"})

    @rx.event
    def load(self):
        self.errors, self.error, self.sending = {}, "", False
        self.sent = self.router.url.query_parameters.get("sent") == "1"


class ResetState(PasswordFormState):
    def _inputs(self) -> frozenset[str]:
        return RESET_INPUTS

    @rx.event
    def load(self):
        self.errors, self.error, self.sending = {}, "", False
