"""The signed-in user's own account page, for every role: who you are, a new password, and
signing out of every browser at once. Staff's list of every account is
portal/accounts/users_state.py."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, passwords
from models import Offerwall, Role, Studio
from portal.backend import box
from portal.state.auth import SIGN_OUT_JS, AuthState, refusals

CHANGE_FORM = "change-password-form"


class AccountState(AuthState):
    # The designer's studio or the publisher's company ("" for staff).
    belongs_to: str = ""
    password_errors: dict[str, str] = {}
    changing: bool = False
    confirming_sign_out: bool = False

    @rx.event
    @refusals()
    async def load(self):
        self.password_errors, self.changing, self.confirming_sign_out = {}, False, False
        return await self._load_page()

    async def _fetch(self) -> None:
        def work(session: Session, account: Account) -> str:
            if account.role == Role.DESIGNER and account.studio_id:
                studio = session.get(Studio, account.studio_id)
                return studio.name if studio else ""
            if account.role == Role.PUBLISHER and account.offerwall_id:
                offerwall = session.get(Offerwall, account.offerwall_id)
                return offerwall.name if offerwall else ""
            return ""

        self.belongs_to = await self._run(work)

    @rx.event
    @refusals(into="password_errors")
    async def change_password(self, form: dict[str, str]):
        """The current password again, then the new one twice; other browsers sign out."""
        self.password_errors, self.changing = {}, True
        yield
        keep = self._session_token()
        try:
            await self._run(
                lambda s, a: passwords.change_password(
                    session=s,
                    box=box(),
                    account=a,
                    current=form.get("current", ""),
                    password=form.get("password", ""),
                    confirm=form.get("confirm", ""),
                    keep_token=keep,
                ),
                write=True,
            )
        finally:
            self.changing = False
        yield [
            rx.toast.success("Password changed. Other browsers are signed out."),
            rx.call_script(f"document.getElementById('{CHANGE_FORM}').reset()"),
        ]

    @rx.event
    def ask_sign_out_everywhere(self):
        self.confirming_sign_out = True

    @rx.event
    def cancel_sign_out_everywhere(self):
        self.confirming_sign_out = False

    @rx.event
    @refusals()
    async def sign_out_everywhere(self):
        """End every session of the account, this one too, then the sign-in page."""
        self.confirming_sign_out = False
        await self._run(
            lambda s, a: passwords.sign_out_everywhere(session=s, account=a), write=True
        )
        self.user_email = self.user_name = self.user_role = ""
        return rx.call_script(SIGN_OUT_JS)
