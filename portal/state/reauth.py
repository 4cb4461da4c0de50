"""The re-authentication window in the portal (api/accounts/reauth.py): a state that mixes
`Reauth` in (listed first among its bases) runs a sensitive change with
`self._run_confirmed(work, *roles)` instead of `self._run(work, *roles, write=True)`, and
its page places `reauth_dialog(TheState)` (portal/components/reauth.py). Within ten
minutes of the password's last entry in this browser the change simply runs; after them
the handler's refusal opens the dialog, and once the password is right the same handler
runs again with the same arguments. For an audit export::

    class ExportState(Reauth, AuthState):
        @rx.event
        @refusals()
        async def export(self, form: dict[str, str]):
            rows = await self._run_confirmed(lambda s, a: trail.export(s, a, ...), Role.STAFF)
            ...

The check is the server's, in the change's own transaction; what the page shows decides
nothing. The password goes only to the check, never into the state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, PasswordRequired, confirm_password
from models import Role
from portal.backend import box
from portal.state.auth import SUBMITTED, refusals

T = TypeVar("T")


class Reauth(rx.State, mixin=True):
    reauth_open: bool = False
    reauth_error: str = ""
    # The handler (by name) and arguments to run again once the password is right.
    _reauth_handler: str = ""
    _reauth_args: list[Any] = []
    _reauth_kwargs: dict[str, Any] = {}

    async def _run_confirmed(
        self, work: Callable[[Session, Account], T], *roles: Role, password: str = ""
    ) -> T:
        """`_run(work, *roles, write=True)`, behind the password: entered now (`password`,
        when the form has its own input) or within the window (PasswordRequired)."""

        def confirmed(session: Session, account: Account) -> T:
            confirm_password(session=session, box=box(), account=account, password=password)
            return work(session, account)

        return await self._run(confirmed, *roles, write=True)  # type: ignore[attr-defined]

    def _password_required(
        self,
        exc: PasswordRequired,
        into: str,
        handler: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        self.password_fresh = False
        self._reauth_handler = handler
        self._reauth_args, self._reauth_kwargs = list(args), dict(kwargs)
        self.reauth_open, self.reauth_error = True, ""
        return None

    @rx.event
    def cancel_reauth(self):
        self.reauth_open, self.reauth_error, self._reauth_handler = False, "", ""

    @rx.event
    @refusals(into="reauth_error")
    async def reauth(self, form: dict[str, str]):
        """Check the password (throttled like the sign-in; it opens the window anew),
        then run the action that asked for it again."""
        password = form.get("password", "")
        if not password:
            self.reauth_error = "Enter your password."
            return None
        await self._run(  # type: ignore[attr-defined]
            lambda s, a: confirm_password(session=s, box=box(), account=a, password=password),
            write=True,
        )
        self.password_fresh = True
        name = self._reauth_handler
        self.reauth_open, self.reauth_error, self._reauth_handler = False, "", ""
        if not name:
            return None
        args = [_fresh_count(self, a) for a in self._reauth_args]
        kwargs = {k: _fresh_count(self, v) for k, v in self._reauth_kwargs.items()}
        return getattr(type(self), name)(*args, **kwargs)


def _fresh_count(state: Any, arg: Any) -> Any:
    """A form sent again carries the count it was drawn with, which its first sending spent
    (`AuthState._first`): it goes again with the count the next sending takes."""
    if isinstance(arg, dict) and SUBMITTED in arg:
        return {**arg, SUBMITTED: str(state.submitted)}
    return arg
