"""The Fraud page's review queue (staff and designers): the held conversions to approve,
reject or keep holding, one by one or selected, and the rejection's reason."""

from __future__ import annotations

import reflex as rx

from portal.components.confirm import form_dialog
from portal.components.forms import reason_fields, search_form
from portal.components.layout import empty_state
from portal.components.players import marked_test
from portal.components.tables import data_table, searched_list
from portal.components.wording import counted
from portal.fraud.state import FraudState

REASON_ID = "rejection-reason"


def _signals(row) -> rx.Component:
    return rx.flex(
        rx.foreach(
            row.signals.split(", "),
            lambda signal: rx.badge(signal, color_scheme="amber", variant="soft"),
        ),
        wrap="wrap",
        spacing="1",
    )


def _due(row) -> rx.Component:
    return rx.cond(
        row.review_due != "",
        rx.text(row.review_due, size="2", white_space="nowrap"),
        rx.vstack(
            rx.badge("flagged", color_scheme="red", variant="soft"),
            rx.text("Waits for a reviewer", size="1", color_scheme="gray"),
            spacing="1",
        ),
    )


def _row_actions(row) -> rx.Component:
    s = FraudState
    one = [row.transaction_id]
    return rx.flex(
        rx.button(
            "Approve", size="1", variant="soft", color_scheme="green", on_click=s.approve(one)
        ),
        rx.button(
            "Reject", size="1", variant="soft", color_scheme="red", on_click=s.start_reject(one)
        ),
        rx.cond(
            row.review_due != "",
            rx.button("Flag", size="1", variant="soft", color_scheme="gray", on_click=s.flag(one)),
        ),
        spacing="2",
        wrap="wrap",
    )


def _held_table() -> rx.Component:
    s = FraudState
    return data_table(
        ("Select", "Transaction", "Mission", "Player", "Signals", "Approved by itself", ""),
        s.rows,
        lambda r: [
            rx.checkbox(
                checked=s.selected.contains(r.transaction_id),
                on_change=lambda checked: s.toggle(r.transaction_id, checked),
                aria_label="Select " + r.transaction_id,
            ),
            rx.vstack(
                rx.code(r.transaction_id, size="1", word_break="break-all"),
                rx.text(r.created_at, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.vstack(
                rx.text(r.mission, weight="medium"),
                rx.text(r.game + " · " + r.publisher, size="1", color_scheme="gray"),
                rx.text(r.payout, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.vstack(
                rx.hstack(rx.text(r.uid), marked_test(r.test), spacing="1", wrap="wrap"),
                rx.code(r.platform_user_id, size="1", word_break="break-all"),
                spacing="1",
            ),
            _signals(r),
            _due(r),
            _row_actions(r),
        ],
        test_id="held-row",
    )


def _bulk_bar() -> rx.Component:
    s = FraudState
    none = s.selected_count == 0
    return rx.flex(
        rx.el.label(
            rx.hstack(
                rx.checkbox(
                    checked=s.all_selected,
                    on_change=s.toggle_page,
                    aria_label="Select all on this page",
                ),
                rx.text("Select all on this page", size="2"),
                spacing="2",
                align="center",
            ),
        ),
        rx.text(s.selected_count.to_string() + " selected", size="2", color_scheme="gray"),
        rx.spacer(),
        rx.button(
            "Approve selected",
            size="2",
            color_scheme="green",
            disabled=none,
            on_click=s.approve_selected,
        ),
        rx.button(
            "Reject selected",
            size="2",
            color_scheme="red",
            variant="soft",
            disabled=none,
            on_click=s.start_reject_selected,
        ),
        rx.button(
            "Keep holding (flag)",
            size="2",
            variant="soft",
            color_scheme="gray",
            disabled=none,
            on_click=s.flag_selected,
        ),
        spacing="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def review() -> rx.Component:
    s = FraudState
    return rx.vstack(
        rx.heading("Held conversions", size="4", as_="h2"),
        rx.text(
            "Conversions a risk signal held: no postback has gone yet. Each is approved by "
            "itself at the time shown unless someone decides first; a flagged one waits for "
            "a reviewer.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.outcome != "",
            rx.callout(
                s.outcome, icon="info", color_scheme="blue", width="100%", data_testid="outcome"
            ),
        ),
        searched_list(
            s,
            search=rx.vstack(
                search_form(
                    placeholder="Transaction, player or mission id, or title",
                    label="Search held conversions",
                    value=s.search,
                    on_submit=s.find,
                ),
                rx.cond(s.rows.length() > 0, _bulk_bar()),
                spacing="3",
                width="100%",
            ),
            table=_held_table(),
            noun="held conversion",
            empty=empty_state("shield-check", "Nothing held", "No conversion waits for review."),
        ),
        spacing="3",
        width="100%",
    )


def reject_dialog() -> rx.Component:
    s = FraudState
    errors = s.reject_errors
    return form_dialog(
        rx.text(
            "Rejected conversions are never paid; their places under the missions' caps are "
            "given back. Offerwalls that asked for it receive a rejection postback.",
            size="2",
        ),
        *reason_fields(REASON_ID, errors, "A bot, a farm of accounts, a refunded purchase…"),
        title="Reject " + counted(s.rejecting_count, "held conversion", "held conversions") + "?",
        open=s.rejecting_count > 0,
        submit="Reject",
        color_scheme="red",
        on_submit=s.reject,
        on_cancel=s.cancel_reject,
    )
