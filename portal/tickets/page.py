"""Support tickets (staff and publishers): players' "Missing reward?" reports from the
hosted wall, filtered by status and searched; a ticket opens in a dialog with what
Questwall knew when it was opened, and the form that answers (and closes) it."""

import reflex as rx

from api.tickets import ANSWER_MAX
from portal.components.forms import field_error, form_error, search_form, submission_count
from portal.components.layout import empty_state, page, status_badge
from portal.components.offer_form import checkbox
from portal.components.tables import choice_filter, data_table, searched_list
from portal.tickets.state import STATUSES, TicketsState

ANSWER_ID = "ticket-answer"


def ticket_badge(status) -> rx.Component:
    return rx.match(
        status,
        ("open", rx.badge("open", color_scheme="amber")),
        ("answered", rx.badge("answered", color_scheme="blue")),
        ("closed", rx.badge("closed", color_scheme="gray")),
        rx.badge(status),
    )


def _filter() -> rx.Component:
    s = TicketsState
    return rx.flex(
        choice_filter(s, STATUSES, "Filter by status"),
        rx.text(
            rx.text.strong(s.open_count.to_string(), data_testid="open-tickets"),
            rx.cond(s.open_count == 1, " ticket waits", " tickets wait"),
            " for an answer · ",
            s.answered_count.to_string(),
            " answered, not closed",
            size="2",
            color_scheme="gray",
        ),
        gap="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def _search() -> rx.Component:
    return search_form(
        placeholder="Reference, player uid or offer",
        label="Search tickets",
        value=TicketsState.search,
        on_submit=TicketsState.find,
    )


def _table() -> rx.Component:
    s = TicketsState
    return data_table(
        ("Ticket", "Offer", "Player", "Message", "Status", ""),
        s.rows,
        lambda r: [
            rx.vstack(
                rx.code(r.reference, size="2", white_space="nowrap"),
                rx.text(r.created_at, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.text(r.offer_title, weight="medium"),
            rx.vstack(
                rx.text(r.uid),
                rx.text(r.publisher, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.text(r.preview, size="2"),
            rx.vstack(
                ticket_badge(r.status),
                rx.cond(
                    r.answered_by != "",
                    rx.text("By " + r.answered_by, size="1", color_scheme="gray"),
                ),
                spacing="1",
                align="start",
            ),
            rx.button("Open", size="1", variant="soft", on_click=s.view(r.id)),
        ],
        test_id="ticket-row",
    )


def _section(title: str, *children: rx.Component) -> rx.Component:
    return rx.vstack(
        rx.heading(title, size="3", as_="h3"),
        *children,
        spacing="2",
        width="100%",
    )


def _fact(label: str, value) -> rx.Component:
    """A label and its value: side by side on a wide screen, stacked on a phone."""
    return rx.flex(
        rx.text(label, size="2", color_scheme="gray", min_width="8rem"),
        rx.text(value, size="2"),
        direction=rx.breakpoints(initial="column", sm="row"),
        gap=rx.breakpoints(initial="0", sm="3"),
        width="100%",
    )


def _mission(m) -> rx.Component:
    return rx.box(
        rx.vstack(
            rx.hstack(
                rx.text(m.title, weight="medium"),
                rx.badge(m.status, color_scheme=rx.cond(m.status == "completed", "green", "gray")),
                wrap="wrap",
                align="center",
            ),
            rx.text(m.rule, size="1", color_scheme="gray"),
            rx.cond(
                m.status != "not started",
                rx.vstack(
                    _fact("Progress", m.tally + " · " + m.completions),
                    _fact("Started", m.started),
                    _fact("Expires", m.expires),
                    _fact("Events seen", m.events),
                    spacing="1",
                    width="100%",
                ),
                rx.text(
                    "The player has no progress on this mission.", size="2", color_scheme="gray"
                ),
            ),
            spacing="1",
            width="100%",
        ),
        border="1px solid var(--gray-a5)",
        border_radius="var(--radius-3)",
        padding="0.5rem 0.75rem",
        width="100%",
        data_testid="ticket-mission",
    )


def _context() -> rx.Component:
    t = TicketsState.ticket
    return _section(
        "What we knew when it was opened",
        _fact("Clicks", t.clicks),
        _fact("Last click", t.last_click),
        _fact("Game accounts", t.game_users),
        rx.foreach(t.missions, _mission),
        rx.cond(
            t.conversions.length() > 0,
            data_table(
                ("Transaction", "Mission", "Status", "When", "Payout"),
                t.conversions,
                lambda c: [
                    rx.code(c.transaction_id, size="1", word_break="break-all"),
                    c.mission,
                    status_badge(c.status),
                    c.created_at,
                    rx.text(c.payout, white_space="nowrap"),
                ],
                size="1",
                test_id="ticket-conversion",
            ),
            rx.text("No conversion of this offer for the player.", size="2", color_scheme="gray"),
        ),
    )


def _answer_form() -> rx.Component:
    s = TicketsState
    t = s.ticket
    errors = s.answer_errors
    return rx.form(
        rx.vstack(
            form_error(errors.get("form", "").to(str)),
            rx.el.label(
                rx.text(
                    rx.cond(t.answer != "", "A new answer (it replaces the one above)", "Answer"),
                    size="2",
                    weight="medium",
                ),
                html_for=ANSWER_ID,
            ),
            rx.text_area(
                name="answer",
                id=ANSWER_ID,
                rows="4",
                width="100%",
                placeholder="What you found, and what happens next",
                aria_invalid=rx.cond(errors.contains("answer"), "true", "false"),
                aria_describedby=f"{ANSWER_ID}-error",
            ),
            rx.text(
                f"Up to {ANSWER_MAX:,} characters. The player reads it on the offerwall.",
                size="1",
                color_scheme="gray",
            ),
            field_error(errors, "answer", input_id=ANSWER_ID),
            checkbox("close", "Close the ticket with this answer", False),
            submission_count(),
            rx.flex(
                rx.button("Send answer", type="submit"),
                rx.button(
                    "Close without answering",
                    type="button",
                    variant="soft",
                    color_scheme="gray",
                    on_click=s.close_ticket(s.submitted),
                ),
                gap="3",
                wrap="wrap",
            ),
            spacing="2",
            width="100%",
        ),
        on_submit=s.send_answer,
        # A fresh, empty form once an answer went through (the ticket changed).
        key=t.id.to_string() + t.updated_at,
        width="100%",
    )


def _detail() -> rx.Component:
    s = TicketsState
    t = s.ticket
    return rx.dialog.root(
        rx.dialog.content(
            rx.cond(
                t,
                rx.vstack(
                    rx.flex(
                        rx.dialog.title("Ticket ", rx.code(t.reference), margin_bottom="0"),
                        ticket_badge(t.status),
                        gap="3",
                        align="center",
                        wrap="wrap",
                    ),
                    rx.text(
                        "Opened " + t.created_at + " · " + t.publisher,
                        size="2",
                        color_scheme="gray",
                    ),
                    _section(
                        "Player and offer",
                        _fact("Player (uid)", t.uid),
                        _fact("Platform user", t.platform_user_id),
                        _fact(
                            rx.cond(t.offer_kind == "quest", "Quest", "Mission"),
                            t.offer_title,
                        ),
                    ),
                    _section(
                        "Message",
                        rx.text(
                            t.message,
                            size="2",
                            white_space="pre-wrap",
                            data_testid="ticket-message",
                        ),
                    ),
                    _context(),
                    rx.cond(
                        t.answer != "",
                        _section(
                            "Answer",
                            rx.callout(
                                rx.text(t.answer, white_space="pre-wrap"),
                                icon="message-square",
                                color_scheme="blue",
                                width="100%",
                                data_testid="ticket-answer-given",
                            ),
                            rx.text(
                                "By " + t.answered_by + ", " + t.answered_at,
                                size="1",
                                color_scheme="gray",
                            ),
                        ),
                    ),
                    rx.cond(
                        t.status == "closed",
                        rx.flex(
                            rx.text("Closed " + t.closed_at + ".", size="2", color_scheme="gray"),
                            rx.button(
                                "Reopen",
                                variant="soft",
                                on_click=s.reopen_ticket(s.submitted),
                            ),
                            gap="3",
                            align="center",
                            wrap="wrap",
                        ),
                        _answer_form(),
                    ),
                    rx.flex(
                        rx.button(
                            "Back to the list",
                            variant="soft",
                            color_scheme="gray",
                            on_click=s.hide,
                        ),
                        justify="end",
                        width="100%",
                    ),
                    spacing="4",
                    width="100%",
                ),
            ),
            max_width="760px",
        ),
        open=s.ticket.is_not_none(),
        on_open_change=lambda _open: s.hide(),
    )


def tickets() -> rx.Component:
    s = TicketsState
    return page(
        "Tickets",
        _filter(),
        searched_list(
            s,
            search=_search(),
            table=_table(),
            noun="ticket",
            empty=empty_state(
                "life-buoy",
                "No tickets here",
                "Players report a missing reward from the offerwall; their reports appear here.",
            ),
        ),
        _detail(),
        subtitle="Players' “Missing reward?” reports from the offerwall, with what we knew "
        "when they sent them. The player reads your answer on the offerwall.",
    )
