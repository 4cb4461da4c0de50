"""Sign-in and publisher signup.

The forms post to the session routes (portal/session_routes.py) from the browser, so
the answer's HttpOnly cookie lands there; on success the page loads its next address
(the websocket reconnects carrying the cookie), on failure the answer comes back here
to be shown beside the form. The password never passes through these states.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal import routes
from portal.state.auth import AuthState


def post_form_js(form_id: str, path: str, *, extra: str = "") -> str:
    """A script that posts a form's fields as JSON (with `?next=`, and what `extra` adds to
    `fields`) to a session route, follows a success to its `location`, and yields an
    error's body for the callback."""
    return f"""
(async () => {{
  const fields = Object.fromEntries(new FormData(document.getElementById("{form_id}")));
  fields.next = new URLSearchParams(window.location.search).get("next") || "";
  {extra}
  try {{
    const answer = await fetch("{path}", {{
      method: "POST",
      credentials: "same-origin",
      headers: {{"Content-Type": "application/json"}},
      body: JSON.stringify(fields),
    }});
    const body = await answer.json();
    if (answer.ok) {{ window.location.assign(body.location); return null; }}
    return body;
  }} catch (error) {{
    return {{message: "The server did not answer. Try again.", details: []}};
  }}
}})()
"""


SIGN_IN_JS = post_form_js("sign-in-form", routes.SIGN_IN)
SIGN_IN_CODE_JS = post_form_js("sign-in-code-form", routes.SIGN_IN_CODE)
SIGN_UP_JS = post_form_js("sign-up-form", routes.SIGN_UP)
SIGN_UP_INPUTS = frozenset({"company", "website", "contact", "email", "password", "confirm"})


class LoginState(AuthState):
    error: str = ""
    # After a password reset (`?reset=1`): sign in with the new password.
    notice: str = ""

    @rx.event
    async def load(self):
        self.error = ""
        reset = self.router.url.query_parameters.get("reset") == "1"
        self.notice = "Your password is changed. Sign in with the new one." if reset else ""
        account = await self._account()
        if account is not None:
            return rx.redirect(self._next(routes.home_for(account.role)))
        return None

    def _next(self, default: str) -> str:
        return routes.safe_next(self.router.url.query_parameters.get("next"), default)

    @rx.event
    def refused(self, answer: dict[str, Any] | None):
        """The route's error answer (None: signed in, the page is already leaving)."""
        if answer:
            self.error = str(answer.get("message", ""))


class LoginCodeState(LoginState):
    """The second step of the sign-in: the code from the app, or a recovery code. The
    challenge of the password step is an HttpOnly cookie, which this page never reads."""


class SignupState(AuthState):
    errors: dict[str, str] = {}
    error: str = ""

    @rx.event
    def clear(self):
        self.errors, self.error = {}, ""

    @rx.event
    def refused(self, answer: dict[str, Any] | None):
        """Field errors go under their fields; anything else above the form."""
        self.errors, self.error = {}, ""
        if not answer:
            return
        message = str(answer.get("message", ""))
        fields = {
            str(d.get("path")): str(d.get("message", ""))
            for d in answer.get("details") or []
            if isinstance(d, dict) and d.get("path")
        }
        self.errors = {k: v for k, v in fields.items() if k in SIGN_UP_INPUTS}
        if not self.errors:
            self.error = message
