"""Sign in, the publisher signup form, and the forgotten password's two pages."""

import reflex as rx

from portal import routes
from portal.accounts.login_state import (
    SIGN_IN_CODE_JS,
    SIGN_IN_JS,
    SIGN_UP_JS,
    LoginCodeState,
    LoginState,
    SignupState,
)
from portal.accounts.password_state import FORGOT_JS, RESET_JS, ForgotState, ResetState
from portal.components.forms import field, form_error


def _panel(title: str, *children: rx.Component) -> rx.Component:
    return rx.center(
        rx.card(
            rx.vstack(
                rx.link(
                    rx.hstack(
                        rx.icon("swords", size=22),
                        rx.text("Questwall", weight="bold"),
                        align="center",
                    ),
                    href=routes.HOME,
                    underline="none",
                    color_scheme="gray",
                    high_contrast=True,
                ),
                rx.heading(title, size="6", as_="h1"),
                *children,
                spacing="4",
                width="100%",
            ),
            size="4",
            width="100%",
            max_width="440px",
        ),
        min_height="100vh",
        padding="1rem",
        background="var(--gray-2)",
    )


def _submit(label: str, busy: rx.Var | bool = False) -> rx.Component:
    """A panel's full-width submit button, busy while its request runs."""
    return rx.button(label, type="submit", size="3", width="100%", loading=busy, disabled=busy)


def login() -> rx.Component:
    return _panel(
        "Sign in",
        rx.form(
            rx.vstack(
                rx.cond(
                    LoginState.notice != "",
                    rx.callout(
                        LoginState.notice, icon="circle-check", color_scheme="green", width="100%"
                    ),
                ),
                form_error(LoginState.error),
                field("Email", "email", type="email", auto_complete="username", auto_focus=True),
                field("Password", "password", type="password", auto_complete="current-password"),
                _submit("Sign in"),
                rx.link("Forgot your password?", href=routes.FORGOT_PAGE, size="2"),
                spacing="3",
                width="100%",
            ),
            # Posted by the browser itself (the cookie must land there), not over the websocket.
            on_submit=rx.call_script(SIGN_IN_JS, callback=LoginState.refused),
            id="sign-in-form",
            width="100%",
        ),
        rx.text(
            "A publisher without an account? ",
            rx.link("Apply here", href=routes.SIGNUP),
            ".",
            size="2",
            color_scheme="gray",
        ),
    )


def login_code() -> rx.Component:
    """The second step for an account with two-factor sign-in."""
    return _panel(
        "Enter your code",
        rx.text(
            "Open your authenticator app and enter the 6-digit code it shows for Questwall. "
            "Lost your phone? Enter one of your recovery codes instead.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.vstack(
                form_error(LoginCodeState.error),
                field(
                    "Code",
                    "code",
                    auto_complete="one-time-code",
                    auto_focus=True,
                    input_mode="text",
                    spell_check=False,
                    max_length=20,
                ),
                _submit("Verify"),
                spacing="3",
                width="100%",
            ),
            on_submit=rx.call_script(SIGN_IN_CODE_JS, callback=LoginCodeState.refused),
            id="sign-in-code-form",
            width="100%",
        ),
        _back_to_sign_in(),
    )


def signup() -> rx.Component:
    errors = SignupState.errors
    return _panel(
        "Become a publisher",
        rx.text(
            "Tell us about your offerwall. Our staff review every application; once approved you get "
            "your offerwall id and API key.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.vstack(
                form_error(SignupState.error),
                field(
                    "Company",
                    "company",
                    errors=errors,
                    auto_focus=True,
                    auto_complete="organization",
                ),
                field(
                    "Website",
                    "website",
                    errors=errors,
                    type="url",
                    placeholder="https://",
                    auto_complete="url",
                ),
                field("Contact person", "contact", errors=errors, auto_complete="name"),
                field("Email", "email", errors=errors, type="email", auto_complete="email"),
                field(
                    "Password",
                    "password",
                    errors=errors,
                    type="password",
                    hint="At least 10 characters; not your email address.",
                    auto_complete="new-password",
                    min_length=10,
                ),
                field(
                    "Repeat the password",
                    "confirm",
                    errors=errors,
                    type="password",
                    auto_complete="new-password",
                ),
                _submit("Apply"),
                spacing="3",
                width="100%",
            ),
            on_submit=rx.call_script(SIGN_UP_JS, callback=SignupState.refused),
            id="sign-up-form",
            # The server names every problem at once, beside its field; the browser's own
            # checks would stop at the first.
            no_validate=True,
            width="100%",
        ),
        rx.text(
            "Already have an account? ",
            rx.link("Sign in", href=routes.LOGIN),
            ".",
            size="2",
            color_scheme="gray",
        ),
    )


def _back_to_sign_in() -> rx.Component:
    return rx.text(rx.link("Back to sign in", href=routes.LOGIN), size="2")


def forgot_password() -> rx.Component:
    s = ForgotState
    return _panel(
        "Forgot your password?",
        rx.cond(
            s.sent,
            rx.callout(
                "If an account uses that address, a link to set a new password is on its way. "
                "It works once, for one hour. Nothing came? Check your spam folder, or ask again.",
                icon="mail-check",
                color_scheme="green",
                width="100%",
                role="status",
            ),
            rx.text(
                "Enter the email address of your account. We send you a link to choose a new "
                "password.",
                size="2",
                color_scheme="gray",
            ),
        ),
        rx.form(
            rx.vstack(
                form_error(s.error),
                field(
                    "Email",
                    "email",
                    errors=s.errors,
                    type="email",
                    auto_complete="username",
                    auto_focus=True,
                ),
                _submit("Send the link", s.sending),
                spacing="3",
                width="100%",
            ),
            on_submit=[s.start, rx.call_script(FORGOT_JS, callback=s.refused)],
            id="forgot-form",
            width="100%",
        ),
        _back_to_sign_in(),
    )


def reset_password() -> rx.Component:
    s = ResetState
    return _panel(
        "Choose a new password",
        rx.text(
            "Once it is set, every browser signed in to your account is signed out; sign in "
            "again with the new password.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.vstack(
                rx.cond(
                    s.error != "",
                    rx.callout(
                        rx.text(
                            s.error, " ", rx.link("Ask for a new link", href=routes.FORGOT_PAGE)
                        ),
                        icon="triangle-alert",
                        color_scheme="red",
                        role="alert",
                        width="100%",
                    ),
                ),
                field(
                    "New password",
                    "password",
                    errors=s.errors,
                    type="password",
                    hint="At least 10 characters; not your email address.",
                    auto_complete="new-password",
                    auto_focus=True,
                ),
                field(
                    "Repeat the new password",
                    "confirm",
                    errors=s.errors,
                    type="password",
                    auto_complete="new-password",
                ),
                _submit("Set the new password", s.sending),
                spacing="3",
                width="100%",
            ),
            on_submit=[s.start, rx.call_script(RESET_JS, callback=s.refused)],
            id="reset-form",
            width="100%",
        ),
        _back_to_sign_in(),
    )
