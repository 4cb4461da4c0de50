"""Sign in, and the publisher signup form."""

import reflex as rx

from portal import routes
from portal.components.forms import field, form_error
from portal.state.login import SIGN_IN_JS, SIGN_UP_JS, LoginState, SignupState


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


def login() -> rx.Component:
    return _panel(
        "Sign in",
        rx.form(
            rx.vstack(
                form_error(LoginState.error),
                field("Email", "email", type="email", auto_complete="username", auto_focus=True),
                field("Password", "password", type="password", auto_complete="current-password"),
                rx.button("Sign in", type="submit", size="3", width="100%"),
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
                rx.button("Apply", type="submit", size="3", width="100%"),
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
