"""The signed-in user's own account page (every role): email and role, a new password,
two-factor sign-in, sign out everywhere. Staff's list of every account is portal/accounts/users.py."""

import reflex as rx

from portal import routes
from portal.accounts.account_state import CHANGE_FORM, DISABLE_FORM, ENROL_FORM, AccountState
from portal.components.forms import field, form_error
from portal.components.layout import card, page
from portal.components.reauth import reauth_dialog
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


def _muted(text: str) -> rx.Component:
    return rx.text(text, size="2", color_scheme="gray")


def _new_codes() -> rx.Component:
    """The recovery codes just made, shown once."""
    s = AccountState
    return rx.callout.root(
        rx.vstack(
            rx.text("Your recovery codes", weight="bold"),
            rx.text(
                "Keep them somewhere safe, apart from your phone: a password manager, or "
                "printed. Each one signs you in once in place of a code. They are shown "
                "only now.",
                size="2",
            ),
            rx.grid(
                rx.foreach(
                    s.new_codes,
                    lambda code: rx.code(
                        code, size="3", variant="ghost", class_name="recovery-code"
                    ),
                ),
                columns="2",
                spacing_x="5",
                spacing_y="2",
                id="recovery-codes",
            ),
            rx.button("I have saved them", variant="soft", on_click=s.hide_codes),
            spacing="3",
        ),
        color_scheme="amber",
        width="100%",
    )


def _mfa_on() -> rx.Component:
    s = AccountState
    errors = s.mfa_errors
    return rx.vstack(
        rx.hstack(
            rx.badge("On", color_scheme="green", size="2"),
            _muted("After your password, sign-in asks for a code from your authenticator app."),
            align="center",
            wrap="wrap",
        ),
        rx.text(
            "Recovery codes left: ",
            rx.text.strong(s.recovery_left, id="recovery-left"),
            size="2",
        ),
        rx.box(rx.button("Make new recovery codes", variant="soft", on_click=s.regenerate_codes)),
        rx.divider(),
        rx.form(
            rx.vstack(
                form_error(errors.get("form", "").to(str)),
                field(
                    "Your password",
                    "password",
                    id="mfa-password",
                    errors=errors,
                    type="password",
                    hint="Turning it off needs your password.",
                    auto_complete="current-password",
                ),
                rx.button("Turn off two-factor sign-in", color_scheme="red", variant="soft"),
                width="100%",
                max_width="24rem",
            ),
            on_submit=s.disable_mfa,
            id=DISABLE_FORM,
        ),
        spacing="3",
        width="100%",
    )


def _enrolling() -> rx.Component:
    s = AccountState
    errors = s.mfa_errors
    return rx.flex(
        # The server's own SVG (segno), inline: no image request, no data: URL.
        rx.box(
            rx.html(s.enrol_qr),
            role="img",
            aria_label="QR code to scan with your authenticator app",
            background="white",
            line_height="0",
            width="fit-content",
            flex_shrink="0",
        ),
        rx.vstack(
            rx.text("1. Scan the QR code with your authenticator app.", size="2"),
            rx.text("Can't scan it? Enter this key in the app instead:", size="2"),
            rx.code(
                s.enrol_secret,
                id="mfa-secret",
                size="3",
                word_break="break-all",
                user_select="all",
            ),
            rx.text("2. Enter the 6-digit code the app shows.", size="2"),
            rx.form(
                rx.vstack(
                    form_error(errors.get("form", "").to(str)),
                    field(
                        "Code from the app",
                        "code",
                        id="mfa-code",
                        errors=errors,
                        auto_complete="one-time-code",
                        input_mode="numeric",
                        max_length=6,
                        auto_focus=True,
                    ),
                    rx.hstack(
                        rx.button("Turn on", type="submit"),
                        rx.button(
                            "Cancel",
                            type="button",
                            variant="soft",
                            color_scheme="gray",
                            on_click=s.cancel_enrolment,
                        ),
                        spacing="3",
                    ),
                    width="100%",
                    max_width="24rem",
                ),
                on_submit=s.confirm_enrolment,
                id=ENROL_FORM,
                width="100%",
            ),
            spacing="3",
            min_width="0",
            width="100%",
        ),
        direction=rx.breakpoints(initial="column", sm="row"),
        spacing="5",
        width="100%",
    )


def _two_factor() -> rx.Component:
    s = AccountState
    return card(
        rx.heading("Two-factor sign-in", size="4", as_="h2"),
        rx.cond(s.new_codes.length() > 0, _new_codes()),
        rx.cond(
            s.mfa_on,
            _mfa_on(),
            rx.cond(
                s.enrol_secret != "",
                _enrolling(),
                rx.vstack(
                    _muted(
                        "Off. Turn it on and sign-in asks, after your password, for a code "
                        "from an authenticator app on your phone: a stolen password alone "
                        "no longer opens your account."
                    ),
                    rx.button("Set up two-factor sign-in", on_click=s.start_enrolment),
                    spacing="3",
                ),
            ),
        ),
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
        _two_factor(),
        _confirm_sign_out(),
        reauth_dialog(AccountState),
    )
