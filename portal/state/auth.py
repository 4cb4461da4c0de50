"""The signed-in session, shared by every feature state (they subclass AuthState).

The browser keeps an opaque session token in an HttpOnly cookie that no script can
read (set by portal/session_routes.py); the websocket's handshake carries it, and the
server resolves it to an account on every event (api/services/access.py). Nothing else
about the user lives in the browser except what the layout shows: email, name and role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api.core.db import new_session, write_session
from api.services.access import Account, account_for, require
from models import Role
from portal import routes
from portal.backend import box, engine, off_loop
from portal.session_routes import session_token

T = TypeVar("T")

# Signing out deletes the session and its cookie over HTTP (a script cannot touch an
# HttpOnly cookie), then loads the sign-in page so the websocket reconnects without it.
SIGN_OUT_JS = f"""
fetch("{routes.AUTH}/sign-out", {{method: "POST", credentials: "same-origin"}})
  .finally(() => window.location.assign("{routes.LOGIN}"))
"""


class AuthState(rx.State):
    user_email: str = ""
    user_name: str = ""
    user_role: str = ""

    # --- for subclasses: every handler goes through _run ---------------------------

    def _session_token(self) -> str:
        """The session cookie of the websocket's handshake ('' when signed out)."""
        return session_token(self.router.headers.cookie)

    async def _account(self) -> Account | None:
        account = await off_loop(
            account_for, engine=engine(), box=box(), token=self._session_token()
        )
        self.user_email = account.email if account else ""
        self.user_name = account.name if account else ""
        self.user_role = account.role if account else ""
        return account

    async def _run(
        self,
        work: Callable[[Session, Account], T],
        *roles: Role,
        write: bool = False,
    ) -> T:
        """Resolve the account, check its role, then do `work` in one transaction (or
        one read session) off the event loop. Raises Forbidden."""
        account = require(await self._account(), *roles)

        def job() -> T:
            if write:
                with write_session(engine()) as session:
                    return work(session, account)
            with new_session(engine()) as session:
                return work(session, account)

        return await off_loop(job)

    def _to_login(self) -> Any:
        return rx.redirect(routes.login_for(self.router.url.path or routes.HOME))

    async def _guard(self, *roles: Role) -> Any:
        """For on_load: None when the account may see the page, else where to go."""
        account = await self._account()
        if account is None:
            return self._to_login()
        if roles and account.role not in roles:
            return [
                rx.redirect(routes.home_for(account.role)),
                rx.toast.error("Your account cannot open that page."),
            ]
        return None

    # --- events ------------------------------------------------------------------

    @rx.event
    async def load_home(self):
        """The landing page sends a signed-in user to their workspace."""
        account = await self._account()
        if account is not None:
            return rx.redirect(routes.home_for(account.role))
        return None

    @rx.event
    def logout(self):
        self.user_email = self.user_name = self.user_role = ""
        return rx.call_script(SIGN_OUT_JS)
