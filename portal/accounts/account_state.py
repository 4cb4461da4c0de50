"""The signed-in user's own account page, for every role: who you are, a new password,
two-factor sign-in (set up with a QR code, recovery codes, turned off), and signing out of
every browser at once. Staff's list of every account is
portal/accounts/users_state.py."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, passwords, totp
from models import Offerwall, Role, Studio
from portal.backend import box
from portal.state.auth import SIGN_OUT_JS, AuthState, refusals
from portal.state.reauth import Reauth

CHANGE_FORM = "change-password-form"
ENROL_FORM = "mfa-enrol-form"
DISABLE_FORM = "mfa-disable-form"


class AccountState(Reauth, AuthState):
    # The designer's studio or the publisher's company ("" for staff).
    belongs_to: str = ""
    password_errors: dict[str, str] = {}
    changing: bool = False
    confirming_sign_out: bool = False
    # Two-factor sign-in: on or off, and how many recovery codes are left.
    mfa_on: bool = False
    recovery_left: int = 0
    # While setting it up: the secret in text and its QR code (the sealed secret stays on
    # the server, in a backend var).
    enrol_secret: str = ""
    enrol_qr: str = ""
    _enrol_sealed: str = ""
    mfa_errors: dict[str, str] = {}
    # Recovery codes just made: shown once, until the page is left or they are put away.
    new_codes: list[str] = []

    @rx.event
    @refusals()
    async def load(self):
        self.password_errors, self.changing, self.confirming_sign_out = {}, False, False
        self._forget_enrolment()
        self.mfa_errors, self.new_codes = {}, []
        return await self._load_page()

    async def _fetch(self) -> None:
        def work(session: Session, account: Account) -> tuple[str, bool, int]:
            on, left = totp.enrolled(session, account.id), 0
            if on:
                left = totp.recovery_codes_left(session, account.id)
            if account.role == Role.DESIGNER and account.studio_id:
                studio = session.get(Studio, account.studio_id)
                return (studio.name if studio else "", on, left)
            if account.role == Role.PUBLISHER and account.offerwall_id:
                offerwall = session.get(Offerwall, account.offerwall_id)
                return (offerwall.name if offerwall else "", on, left)
            return ("", on, left)

        self.belongs_to, self.mfa_on, self.recovery_left = await self._run(work)

    def _forget_enrolment(self) -> None:
        self.enrol_secret = self.enrol_qr = self._enrol_sealed = ""

    @rx.event
    @refusals()
    async def start_enrolment(self):
        """A new secret and its QR code; nothing is stored until a code confirms it."""
        self.mfa_errors, self.new_codes = {}, []

        started = await self._run(
            lambda s, a: totp.start_enrolment(session=s, box=box(), account=a)
        )
        self.enrol_secret, self.enrol_qr = started.secret, started.qr_svg
        self._enrol_sealed = started.sealed

    @rx.event
    def cancel_enrolment(self):
        self._forget_enrolment()
        self.mfa_errors = {}

    @rx.event
    @refusals(into="mfa_errors")
    async def confirm_enrolment(self, form: dict[str, str]):
        """The first code from the app turns it on; the recovery codes are shown once."""
        self.mfa_errors = {}
        sealed, code = self._enrol_sealed, form.get("code", "")
        codes = await self._run(
            lambda s, a: totp.confirm_enrolment(
                session=s, box=box(), account=a, sealed=sealed, code=code
            ),
            write=True,
        )
        self._forget_enrolment()
        self.mfa_on, self.recovery_left, self.new_codes = True, len(codes), codes
        return rx.toast.success("Two-factor sign-in is on.")

    @rx.event
    @refusals()
    async def regenerate_codes(self):
        """Ten new recovery codes in place of the old ones (behind the password)."""
        self.new_codes = []
        codes = await self._run_confirmed(
            lambda s, a: totp.regenerate_recovery_codes(session=s, box=box(), account=a)
        )
        self.recovery_left, self.new_codes = len(codes), codes
        return rx.toast.success("New recovery codes made. The old ones no longer work.")

    @rx.event
    def hide_codes(self):
        self.new_codes = []

    @rx.event
    @refusals(into="mfa_errors")
    async def disable_mfa(self, form: dict[str, str]):
        """Turn it off: the password is asked every time, in the form itself."""
        self.mfa_errors = {}
        password = form.get("password", "")
        if not password:
            self.mfa_errors = {"password": "Enter your password."}
            return None
        await self._run(
            lambda s, a: totp.disable(session=s, box=box(), account=a, password=password),
            write=True,
        )
        self.mfa_on, self.recovery_left, self.new_codes = False, 0, []
        return [
            rx.toast.success("Two-factor sign-in is off."),
            rx.call_script(f"document.getElementById('{DISABLE_FORM}')?.reset()"),
        ]

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
