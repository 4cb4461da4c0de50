"""The signed-in session, shared by every feature state (they subclass AuthState).

The browser keeps an opaque session token in an HttpOnly cookie that no script can
read (set by portal/session_routes.py); the websocket's handshake carries it, and the
server resolves it to an account on every event (api/accounts/access.py). Nothing else
about the user lives in the browser except what the layout shows: email, name and role.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api import audit
from api.accounts import (
    Account,
    Forbidden,
    NotApproved,
    PasswordRequired,
    account_for,
    password_fresh,
    require,
)
from api.core.db import new_session, write_session
from api.core.refusals import DomainError, SignedOut, refuse_nul
from api.core.wording import sentence
from api.missions import OfferError
from models import Role
from portal import routes
from portal.backend import engine, off_loop
from portal.session_routes import session_token

T = TypeVar("T")
S = TypeVar("S")
H = TypeVar("H", bound=Callable[..., Any])

# Signing out deletes the session and its cookie over HTTP (a script cannot touch an
# HttpOnly cookie), then loads the sign-in page so the websocket reconnects without it.
SIGN_OUT_JS = f"""
fetch("{routes.SIGN_OUT}", {{method: "POST", credentials: "same-origin"}})
  .finally(() => window.location.assign("{routes.LOGIN}"))
"""


# The id of every refusal's toast: a new refusal replaces it, and an action of the tab
# that then succeeds with something to show (a toast, another page) takes it away.
REFUSAL_TOAST = "refusal"


def _cleared(update: Any) -> Any:
    """A handler's events, after the one that dismisses an earlier refusal's toast."""
    if update is None:
        return None
    return [rx.toast.dismiss(REFUSAL_TOAST), *(update if isinstance(update, list) else [update])]


def refusals(into: str = "") -> Callable[[H], H]:
    """Wrap an event handler so that a context's refusal (a DomainError) is shown, never raised:
    `SignedOut` leads to the sign-in page (and back here after it), an error about a
    form goes into the state's `into` var (a dict of field errors, "form" for the form
    as a whole, or one message), and `Forbidden`, or any refusal of a handler without a
    form, becomes a toast. A handler that succeeds with events to send (a toast, a
    redirect) first dismisses the toast of a refusal before it. Put it under `@rx.event`."""

    def wrap(handler: H) -> H:
        def checked(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            """Every text the browser sent, a form's inputs included, without NUL."""
            for value in (*args, *kwargs.values()):
                refuse_nul(value if isinstance(value, dict) else {"form": value})

        if inspect.isasyncgenfunction(handler):

            @functools.wraps(handler)
            async def stream(self: AuthState, *args: Any, **kwargs: Any) -> Any:
                try:
                    checked(args, kwargs)
                    async for update in handler(self, *args, **kwargs):
                        yield _cleared(update)
                except PasswordRequired as exc:
                    yield self._password_required(exc, into, handler.__name__, args, kwargs)
                except DomainError as exc:
                    yield self._refused(exc, into)

            return stream  # type: ignore[return-value]

        @functools.wraps(handler)
        async def once(self: AuthState, *args: Any, **kwargs: Any) -> Any:
            try:
                checked(args, kwargs)
                return _cleared(await handler(self, *args, **kwargs))
            except PasswordRequired as exc:
                return self._password_required(exc, into, handler.__name__, args, kwargs)
            except DomainError as exc:
                return self._refused(exc, into)

        return once  # type: ignore[return-value]

    return wrap


# The form input that carries `AuthState.submitted`.
SUBMITTED = "submitted"


class AuthState(rx.State):
    user_email: str = ""
    user_name: str = ""
    user_role: str = ""
    # How many create/send actions this browser tab has made. Their forms and buttons send
    # the count they were drawn with; see `_first`.
    submitted: int = 0
    # A publisher not (or no longer) approved: the navigation offers their application only.
    user_limited: bool = False
    # The password was entered in this browser's session within the re-authentication
    # window: a sensitive action's password input may stay empty (the server checks).
    password_fresh: bool = False

    # --- for subclasses: every handler goes through _run ---------------------------

    def _session_token(self) -> str:
        """The session cookie of the websocket's handshake ('' when signed out)."""
        return session_token(self.router.headers.cookie)

    async def _account(self) -> Account | None:
        account = await off_loop(account_for, engine=engine(), token=self._session_token())
        self.user_email = account.email if account else ""
        self.user_name = account.name if account else ""
        self.user_role = account.role if account else ""
        self.user_limited = account.limited if account else False
        self.password_fresh = bool(account) and password_fresh(
            account.password_confirmed_at if account else None
        )
        return account

    async def _run(
        self,
        work: Callable[[Session, Account], T],
        *roles: Role,
        write: bool = False,
    ) -> T:
        """Resolve the account, check its role, then do `work` in one transaction (or
        one read session) off the event loop. Raises SignedOut or Forbidden."""
        account = require(await self._account(), *roles)
        # Whatever the work records in the audit trail, this account did, from here.
        actor = audit.account_actor(
            account.id,
            account.email,
            account.role,
            ip=self.router.session.client_ip or None,
            user_agent=self.router.headers.user_agent or None,
        )

        def job() -> T:
            with audit.acting_as(actor):
                if write:
                    with write_session(engine()) as session:
                        return work(session, account)
                with new_session(engine()) as session:
                    return work(session, account)

        return await off_loop(job)

    async def _on(
        self,
        resolve: Callable[[Session, Account], S],
        work: Callable[[Session, S, Account], T],
        *roles: Role,
        write: bool = False,
    ) -> T:
        """Like _run, with the row the work acts on resolved (and its access checked)
        first in the same transaction: the game of a per-game page, the offerwall of
        the workspace."""

        def inner(session: Session, account: Account) -> T:
            return work(session, resolve(session, account), account)

        return await self._run(inner, *roles, write=write)

    def _first(self, drawn_with: Any) -> bool:
        """True for the first event of a create/send control, False for a repeat: the
        events of one tab are handled one after the other, so a double click's second
        event arrives after the first has moved the count on, carrying the spent one."""
        if drawn_with is None:
            return True  # sent without a count: not one of our forms; the checks answer it
        if str(drawn_with) != str(self.submitted):
            return False
        self.submitted += 1
        return True

    def _to_login(self) -> Any:
        """To the sign-in page, which comes back to this page (with its query) after."""
        url = self.router.url
        here = (url.path or routes.HOME) + (f"?{url.query}" if url.query else "")
        return rx.redirect(routes.login_for(here))

    def _password_required(
        self,
        exc: PasswordRequired,
        into: str,
        handler: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        """A sensitive action found the re-authentication window closed: a state with the
        `Reauth` mixin (portal/state/reauth.py) asks for the password in its dialog and
        then runs `handler` again (with `args` and `kwargs`); any other shows the refusal
        beside its password input."""
        self.password_fresh = False
        return self._refused(exc, into)

    def _refused(self, exc: DomainError, into: str = "") -> Any:
        """How a refusal is shown; the one place that decides it (see `refusals`).
        Every message is shown as a sentence, whatever the service wrote."""
        if isinstance(exc, SignedOut):
            return self._to_login()
        if isinstance(exc, NotApproved):  # the workspace is closed: their application
            return rx.redirect(routes.APPLICATION)
        if not into or isinstance(exc, Forbidden):
            return rx.toast.error(sentence(exc.message), id=REFUSAL_TOAST)
        if not isinstance(getattr(self, into), dict):
            setattr(self, into, sentence(exc.message))
            return None
        if isinstance(exc, OfferError):  # a form error, under the inputs it names
            errors = exc.errors
            toast = "Some fields need attention."
        else:
            errors = exc.field_errors() or {"form": exc.message}
            toast = None
        setattr(self, into, {name: sentence(text) for name, text in errors.items()})
        return rx.toast.error(toast, id=REFUSAL_TOAST) if toast else None

    async def _fetch(self) -> None:
        """Read what the page shows; the states of pages with data override it."""

    async def _load_page(self, *roles: Role) -> Any:
        """on_load of a page that shows data: where to go instead, or fetch it."""
        guard = await self._guard(*roles)
        if guard is None:
            await self._fetch()
        return guard

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
        self.user_limited = False
        return rx.call_script(SIGN_OUT_JS)
