"""Sign-in and publisher signup."""

from __future__ import annotations

import reflex as rx

from api.core.db import write_session
from api.services.accounts import AccountError, sign_in, signup_publisher
from api.services.throttle import ip_throttle
from portal import routes
from portal.backend import box, engine, off_loop, settings
from portal.state.auth import AuthState


class LoginState(AuthState):
    error: str = ""
    busy: bool = False

    @rx.event
    async def load(self):
        self.error = ""
        account = await self._account()
        if account is not None:
            return rx.redirect(self._next(routes.home_for(account.role)))
        return None

    def _next(self, default: str) -> str:
        return routes.safe_next(self.router.url.query_parameters.get("next"), default)

    @rx.event
    async def submit(self, form: dict[str, str]):
        self.error = ""
        try:
            signed = await off_loop(
                sign_in,
                engine=engine(),
                box=box(),
                email=form.get("email", ""),
                password=form.get("password", ""),
                client_ip=self.router.session.client_ip,
                ip_throttle=ip_throttle(settings().redis_url),
            )
        except AccountError as exc:
            self.error = str(exc)
            return None
        self.session_token = signed.token
        return rx.redirect(self._next(routes.home_for(signed.role)))


class SignupState(AuthState):
    errors: dict[str, str] = {}
    error: str = ""

    @rx.event
    def clear(self):
        self.errors, self.error = {}, ""

    @rx.event
    async def submit(self, form: dict[str, str]):
        self.errors, self.error = {}, ""
        if form.get("password", "") != form.get("confirm", ""):
            self.errors = {"confirm": "The two passwords differ."}
            return None

        def work() -> None:
            with write_session(engine()) as session:
                signup_publisher(
                    session=session,
                    company=form.get("company", ""),
                    website=form.get("website", ""),
                    contact=form.get("contact", ""),
                    email=form.get("email", ""),
                    password=form.get("password", ""),
                )

        try:
            await off_loop(work)
            signed = await off_loop(
                sign_in,
                engine=engine(),
                box=box(),
                email=form.get("email", ""),
                password=form.get("password", ""),
                client_ip=self.router.session.client_ip,
                ip_throttle=ip_throttle(settings().redis_url),
            )
        except AccountError as exc:
            if exc.field:
                self.errors = {exc.field: str(exc)}
            else:
                self.error = str(exc)
            return None
        self.session_token = signed.token
        return [
            rx.redirect(routes.APPLICATION),
            rx.toast.success("Application received. We will review it shortly."),
        ]
