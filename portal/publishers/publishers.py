"""Staff's Publishers page: publishers by status, approve, reject with a reason, suspend,
reinstate. A publisher's own workspace is portal/publishers/publisher.py."""

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button, form_dialog
from portal.components.forms import search_form
from portal.components.layout import empty_state, page, status_badge
from portal.components.tables import choice_filter, data_table, searched_list
from portal.publishers.publishers_state import STATUSES, StaffState

# What an empty status tab says (status, title, text); "all" and a search fall through.
EMPTY = [
    ("pending", "No applications waiting", "New sign-ups appear here for your decision."),
    ("approved", "No approved publishers", "Publishers you approve are listed here."),
    ("rejected", "No rejected applications", "Applications you reject are kept here."),
    ("suspended", "No suspended publishers", "Publishers you suspend are listed here."),
]


def _actions(row) -> rx.Component:
    s = StaffState
    return rx.hstack(
        rx.match(
            row.status,
            (
                "pending",
                rx.hstack(
                    rx.button(
                        "Approve", size="1", color_scheme="green", on_click=s.approve(row.id)
                    ),
                    rx.button(
                        "Reject",
                        size="1",
                        color_scheme="red",
                        variant="soft",
                        on_click=s.start_reject(row.id, row.company),
                    ),
                ),
            ),
            (
                "approved",
                confirm_button(
                    "Suspend",
                    title="Suspend " + row.company + "?",
                    description="Its API key stops working at once: its offerwall lists no "
                    "offers and its tracking links stop, until you reinstate it.",
                    confirm="Suspend",
                    on_confirm=s.suspend(row.id),
                    size="1",
                    color_scheme="red",
                    variant="soft",
                ),
            ),
            (
                "suspended",
                rx.button("Reinstate", size="1", variant="soft", on_click=s.reinstate(row.id)),
            ),
            (
                "rejected",
                rx.button("Approve", size="1", variant="soft", on_click=s.approve(row.id)),
            ),
            rx.fragment(),
        ),
        rx.cond(
            row.owid != "",
            rx.link(
                rx.button("Open", size="1", variant="outline"),
                href=routes.publisher(row.id),
            ),
        ),
        rx.link(
            rx.button("Payout rules", size="1", variant="outline"),
            href=routes.staff_offerwall(row.id),
        ),
        spacing="2",
        wrap="wrap",
    )


def _reject_dialog() -> rx.Component:
    s = StaffState
    return form_dialog(
        rx.text_area(
            name="reason",
            placeholder="Reason",
            required=True,
            rows="3",
            width="100%",
            aria_label="Reason",
            auto_focus=True,
        ),
        rx.cond(s.reject_error != "", rx.text(s.reject_error, color_scheme="red", size="2")),
        title="Reject " + s.rejecting_company,
        description="The publisher sees this reason on their application page.",
        open=s.rejecting_id != "",
        submit="Reject",
        color_scheme="red",
        on_submit=s.reject,
        on_cancel=s.cancel_reject,
    )


def publishers() -> rx.Component:
    s = StaffState
    return page(
        "Publishers",
        choice_filter(s, STATUSES, "Filter by status", counts=s.counts),
        searched_list(
            s,
            search=search_form(
                placeholder="Company, email, website or owid",
                label="Search publishers",
                value=s.search,
                on_submit=s.find,
            ),
            table=data_table(
                ("Company", "Contact", "Website", "Status", "Applied", ""),
                s.rows,
                lambda r: [
                    rx.vstack(
                        rx.text(r.company, weight="medium"),
                        rx.cond(r.owid != "", rx.code(r.owid, size="1")),
                        spacing="1",
                    ),
                    rx.vstack(
                        rx.text(r.contact),
                        rx.text(r.email, size="1", color_scheme="gray"),
                        spacing="1",
                    ),
                    rx.link(r.website, href=r.website, is_external=True, size="2"),
                    status_badge(r.status),
                    rx.text(r.created_at, white_space="nowrap"),
                    _actions(r),
                ],
                test_id="publisher-row",
            ),
            noun="publisher",
            empty=rx.match(
                s.status_choice,
                *[(status, empty_state("users", title, text)) for status, title, text in EMPTY],
                empty_state(
                    "users",
                    "No publishers yet",
                    "Applications appear as publishers sign up.",
                ),
            ),
        ),
        _reject_dialog(),
    )
