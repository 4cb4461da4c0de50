"""Staff: every account (disable, enable, reset link, a designer's studio), and the mail
outbox."""

import reflex as rx

from portal.components.confirm import form_dialog
from portal.components.forms import field_error, form_error, native_select
from portal.components.layout import card, empty_state, page
from portal.components.tables import choice_filter, data_table, pager
from portal.state.auth import AuthState
from portal.state.users import MAIL_STATUSES, ROLES, MailState, UsersState


def _search(state, placeholder: str, label: str) -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                name="search",
                placeholder=placeholder,
                size="2",
                aria_label=label,
                width="320px",
                max_width="100%",
            ),
            rx.button("Search", type="submit", size="2", variant="soft"),
            wrap="wrap",
        ),
        on_submit=state.find,
    )


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
                    rx.button("Disable", color_scheme="red", on_click=s.disable)
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
            _search(s, "Email, name, studio or company", "Search accounts"),
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
                        rx.text(r.role, text_transform="capitalize"),
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
    )


def _message_dialog() -> rx.Component:
    s = MailState
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(s.open_subject),
            rx.dialog.description("To " + s.open_to, size="2", color_scheme="gray"),
            rx.box(
                rx.text(s.open_body, white_space="pre-wrap", word_break="break-word", size="2"),
                padding="0.75rem",
                margin_y="1rem",
                border_radius="6px",
                background="var(--gray-a3)",
                data_testid="mail-body",
            ),
            rx.flex(
                rx.dialog.close(rx.button("Close", variant="soft", color_scheme="gray")),
                justify="end",
            ),
        ),
        open=s.open_id != 0,
        on_open_change=lambda _open: s.close(),
    )


def _mail_badge(status) -> rx.Component:
    return rx.match(
        status,
        ("sent", rx.badge("sent", color_scheme="green")),
        ("failed", rx.badge("failed", color_scheme="red")),
        rx.badge("queued", color_scheme="amber"),
    )


def mail_outbox() -> rx.Component:
    s = MailState
    return page(
        "Mail outbox",
        rx.cond(
            s.smtp_configured,
            rx.text(
                "Every message the portal sends, and where its delivery stands. Messages the "
                "mail server did not take are tried again for a few hours.",
                color_scheme="gray",
            ),
            rx.callout(
                "No mail server is set (SMTP_URL), so messages stay here and are not sent. "
                "Reset links are readable here until one is: set SMTP_URL in production.",
                icon="info",
                color_scheme="amber",
                width="100%",
            ),
        ),
        choice_filter(s, MAIL_STATUSES, "Filter by status"),
        card(
            _search(s, "Address or subject", "Search messages"),
            rx.cond(
                s.rows.length() > 0,
                data_table(
                    ("To", "Subject", "Status", "Attempts", "Queued", "Sent", "Last error"),
                    s.rows,
                    lambda m: [
                        m.to_address,
                        rx.button(
                            m.subject,
                            variant="ghost",
                            size="2",
                            on_click=s.open(m.id),
                            text_align="left",
                            height="auto",
                            white_space="normal",
                        ),
                        _mail_badge(m.status),
                        m.attempts,
                        rx.text(m.created_at, white_space="nowrap"),
                        rx.text(m.sent_at, white_space="nowrap"),
                        rx.text(m.last_error, size="1", color_scheme="red"),
                    ],
                    test_id="mail-row",
                ),
                empty_state("mail", "No messages", "Mail the portal sends appears here."),
            ),
            pager(s.page, s.pages, s.total, s.go),
        ),
        _message_dialog(),
    )
