"""The signed-in user's own account page (every role): email and role, a new password, sign
out everywhere. Staff's list of every account is portal/accounts/users.py."""

import reflex as rx

from portal import routes
from portal.accounts.account_state import CHANGE_FORM, AccountState
from portal.components.forms import field, form_error
from portal.components.layout import card, page
from portal.state.auth import AuthState


def _fact(label: str, value) -> rx.Component:
    return rx.data_list.item(
        rx.data_list.label(label), rx.data_list.value(value, text_transform="none")
    )


def _confirm_sign_out() -> rx.Component:
    s = AccountState
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title("Sign out everywhere?"),
            rx.alert_dialog.description(
                "Every browser signed in to your account is signed out, this one too. "
                "You can sign in again with your password."
            ),
            rx.hstack(
                rx.alert_dialog.cancel(
                    rx.button("Cancel", variant="soft", color_scheme="gray"),
                ),
                rx.alert_dialog.action(
                    rx.button(
                        "Sign out everywhere", color_scheme="red", on_click=s.sign_out_everywhere
                    ),
                ),
                justify="end",
                spacing="3",
                margin_top="1rem",
            ),
        ),
        open=s.confirming_sign_out,
        on_open_change=lambda _open: s.cancel_sign_out_everywhere(),
    )


def account() -> rx.Component:
    s = AccountState
    errors = s.password_errors
    return page(
        "Your account",
        card(
            rx.data_list.root(
                _fact("Email", AuthState.user_email),
                _fact("Role", rx.text(AuthState.user_role, text_transform="capitalize")),
                rx.cond(
                    s.belongs_to != "",
                    _fact(
                        rx.cond(AuthState.user_role == "designer", "Studio", "Company"),
                        s.belongs_to,
                    ),
                ),
                orientation=rx.breakpoints(initial="vertical", sm="horizontal"),
            ),
        ),
        rx.grid(
            card(
                rx.heading("Change your password", size="4", as_="h2"),
                rx.form(
                    rx.vstack(
                        form_error(errors.get("form", "").to(str)),
                        field(
                            "Current password",
                            "current",
                            errors=errors,
                            type="password",
                            auto_complete="current-password",
                        ),
                        field(
                            "New password",
                            "password",
                            errors=errors,
                            type="password",
                            hint="At least 10 characters; not your email address.",
                            auto_complete="new-password",
                        ),
                        field(
                            "Repeat the new password",
                            "confirm",
                            errors=errors,
                            type="password",
                            auto_complete="new-password",
                        ),
                        rx.button(
                            "Change password",
                            type="submit",
                            loading=s.changing,
                            disabled=s.changing,
                        ),
                        width="100%",
                    ),
                    on_submit=s.change_password,
                    id=CHANGE_FORM,
                ),
            ),
            rx.vstack(
                card(
                    rx.heading("Sessions", size="4", as_="h2"),
                    rx.text(
                        "See every browser signed in to your account, and end any of them.",
                        size="2",
                        color_scheme="gray",
                    ),
                    rx.box(rx.link("Your sessions →", href=routes.ACCOUNT_SESSIONS)),
                ),
                card(
                    rx.heading("Sign out everywhere", size="4", as_="h2"),
                    rx.text(
                        "Lost a device, or signed in on a shared computer? End every session of "
                        "your account at once, this one included.",
                        size="2",
                        color_scheme="gray",
                    ),
                    rx.box(
                        rx.button(
                            "Sign out everywhere",
                            color_scheme="red",
                            variant="soft",
                            on_click=s.ask_sign_out_everywhere,
                        )
                    ),
                ),
                spacing="4",
                width="100%",
            ),
            columns=rx.breakpoints(initial="1", md="2"),
            spacing="4",
            width="100%",
        ),
        _confirm_sign_out(),
    )
