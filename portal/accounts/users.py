"""Staff's Users page: every account (disable, enable, reset link, a designer's studio).
The signed-in user's own account page is portal/accounts/account.py; the mail outbox,
portal/mail/page.py."""

import reflex as rx

from portal.accounts.users_state import ROLES, UsersState
from portal.components.confirm import confirm_button, form_dialog
from portal.components.forms import field_error, form_error, native_select, search_box
from portal.components.layout import card, empty_state, page
from portal.components.reauth import reauth_dialog
from portal.components.tables import choice_filter, data_table, pager
from portal.state.auth import AuthState


def _user_actions(row) -> rx.Component:
    s = UsersState
    mine = row.email == AuthState.user_email
    return rx.hstack(
        rx.cond(
            row.status == "disabled",
            rx.button("Enable", size="1", variant="soft", on_click=s.enable(row.id)),
            rx.fragment(
                rx.button(
                    "Send reset link",
                    size="1",
                    variant="soft",
                    on_click=s.send_reset(row.id),
                    loading=s.sending_to == row.id,
                    disabled=s.sending_to != "",
                ),
                rx.cond(
                    mine,
                    rx.badge("You", color_scheme="gray"),
                    rx.fragment(
                        confirm_button(
                            "End sessions",
                            title="Sign " + row.email + " out everywhere?",
                            description=(
                                "Every browser signed in to this account is signed out. "
                                "They can sign in again with their password."
                            ),
                            confirm="End sessions",
                            on_confirm=s.end_sessions(row.id),
                            size="1",
                            variant="soft",
                            color_scheme="orange",
                        ),
                        rx.button(
                            "Disable",
                            size="1",
                            variant="soft",
                            color_scheme="red",
                            on_click=s.ask_disable(row.id, row.email),
                        ),
                    ),
                ),
            ),
        ),
        rx.cond(
            row.role == "designer",
            rx.button(
                "Change studio",
                size="1",
                variant="outline",
                on_click=s.start_move(row.id, row.email, row.studio_id),
            ),
        ),
        spacing="2",
        wrap="wrap",
    )


def _confirm_disable() -> rx.Component:
    s = UsersState
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title("Disable " + s.disabling_email + "?"),
            rx.alert_dialog.description(
                "They are signed out everywhere at once, and sign-in is refused until you "
                "enable the account again."
            ),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(
                    rx.button("Disable", color_scheme="red", on_click=s.disable(s.disabling_id))
                ),
                justify="end",
                spacing="3",
                margin_top="1rem",
            ),
        ),
        open=s.disabling_id != "",
        on_open_change=lambda _open: s.cancel_disable(),
    )


def _move_dialog() -> rx.Component:
    s = UsersState
    return form_dialog(
        form_error(s.move_errors.get("form", "").to(str)),
        rx.el.label(rx.text("Studio", size="2", weight="medium"), html_for="studio"),
        native_select(
            rx.foreach(s.studios, lambda c: rx.el.option(c.name, value=c.id)),
            name="studio",
            id="studio",
            default_value=s.moving_studio,
            width="100%",
        ),
        field_error(s.move_errors, "studio"),
        title="Studio of " + s.moving_email,
        description="The designer sees that studio's games from now on.",
        open=s.moving_id != "",
        submit="Save",
        on_submit=s.move,
        on_cancel=s.cancel_move,
    )


def users() -> rx.Component:
    s = UsersState
    return page(
        "Users",
        choice_filter(s, ROLES, "Filter by role"),
        card(
            search_box(s, "Email, name, studio or company", "Search accounts"),
            rx.cond(
                s.rows.length() > 0,
                data_table(
                    (
                        "Account",
                        "Role",
                        "Studio or company",
                        "Status",
                        "Created",
                        "Last sign-in",
                        "",
                    ),
                    s.rows,
                    lambda r: [
                        rx.vstack(
                            rx.text(r.email, weight="medium"),
                            rx.cond(r.name != "", rx.text(r.name, size="1", color_scheme="gray")),
                            spacing="1",
                        ),
                        rx.text(r.role, text_transform="capitalize", white_space="nowrap"),
                        r.belongs_to,
                        rx.cond(
                            r.status == "disabled",
                            rx.badge("disabled", color_scheme="red"),
                            rx.badge("active", color_scheme="green"),
                        ),
                        rx.text(r.created_at, white_space="nowrap"),
                        rx.text(r.last_login_at, white_space="nowrap"),
                        _user_actions(r),
                    ],
                    test_id="user-row",
                ),
                empty_state("users", "No accounts here", "Try another search or role."),
            ),
            pager(s.page, s.pages, s.total, s.go),
        ),
        _confirm_disable(),
        _move_dialog(),
        reauth_dialog(s),
    )
