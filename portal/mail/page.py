"""Staff's mail outbox page: every message the portal sends and where its delivery stands;
a subject opens the message."""

import reflex as rx

from portal.components.forms import search_box
from portal.components.layout import card, empty_state, page
from portal.components.tables import choice_filter, data_table, pager
from portal.mail.state import MAIL_STATUSES, MailState


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
            search_box(s, "Address or subject", "Search messages"),
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
