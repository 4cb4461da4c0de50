"""Conversions (staff and designers): search, filter by status and by the test player (each
of its conversions marked "Test"), reverse one with a reason."""

import reflex as rx

from portal.components.confirm import form_dialog
from portal.components.forms import (
    reason_fields,
    search_form,
)
from portal.components.layout import empty_state, page, status_badge
from portal.components.players import marked_test, players_filter
from portal.components.tables import choice_filter, data_table, searched_list
from portal.conversions.state import STATUSES, ConversionsState

REASON_ID = "reversal-reason"


def _filter() -> rx.Component:
    return rx.flex(
        choice_filter(ConversionsState, STATUSES, "Filter by status"),
        players_filter(ConversionsState, "Filter by player: real or test"),
        spacing="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def _search() -> rx.Component:
    return search_form(
        placeholder="Transaction, player or mission id, or title",
        label="Search conversions",
        value=ConversionsState.search,
        on_submit=ConversionsState.find,
        hint="Matches a transaction id, the publisher's player id (uid), a platform user "
        "id, the game's own user id or a mission id in full, or part of a mission title.",
    )


def _status(row) -> rx.Component:
    """The status; for a reversal why, who and when; for a rejection why and who; for a
    held conversion its signals and where it is decided."""
    return rx.vstack(
        rx.hstack(status_badge(row.status), marked_test(row.test), spacing="1", wrap="wrap"),
        rx.match(
            row.status,
            (
                "reversed",
                rx.vstack(
                    rx.text(row.reversal_reason, size="2"),
                    rx.text("By " + row.reversed_by, size="1", color_scheme="gray"),
                    rx.text(row.reversed_at, size="1", color_scheme="gray"),
                    spacing="1",
                ),
            ),
            (
                "rejected",
                rx.vstack(
                    rx.text(row.review_note, size="2"),
                    rx.text("By " + row.reviewed_by, size="1", color_scheme="gray"),
                    spacing="1",
                ),
            ),
            (
                "pending",
                rx.vstack(
                    rx.text(row.signals, size="1", color_scheme="gray"),
                    rx.link("Decide on the Fraud page", href="/fraud", size="1"),
                    spacing="1",
                ),
            ),
            rx.fragment(),
        ),
        spacing="1",
        align="start",
    )


def _actions(row) -> rx.Component:
    return rx.cond(
        row.status == "approved",
        rx.button(
            "Reverse",
            size="1",
            variant="soft",
            color_scheme="red",
            on_click=ConversionsState.start_reverse(row.transaction_id),
        ),
    )


def _table() -> rx.Component:
    s = ConversionsState
    return data_table(
        ("Transaction", "Mission", "Player", "Publisher", "Payout", "Status", ""),
        s.rows,
        lambda r: [
            rx.vstack(
                rx.code(r.transaction_id, size="1", word_break="break-all"),
                rx.text(r.created_at, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.vstack(
                rx.text(r.mission, weight="medium"),
                rx.text(r.game, size="1", color_scheme="gray"),
                spacing="1",
            ),
            rx.vstack(
                rx.text(r.uid),
                rx.code(r.platform_user_id, size="1", word_break="break-all"),
                spacing="1",
            ),
            r.publisher,
            rx.text(r.payout, white_space="nowrap"),
            _status(r),
            _actions(r),
        ],
        test_id="conversion-row",
    )


def _reverse_dialog() -> rx.Component:
    s = ConversionsState
    errors = s.reverse_errors
    return form_dialog(
        rx.callout(
            rx.text(
                s.reversing_publisher,
                " receives a reversal postback with this reason, and the conversion's place "
                "under the mission's cap is freed for another player. A reversal cannot be "
                "undone.",
            ),
            icon="triangle-alert",
            color_scheme="amber",
            width="100%",
        ),
        rx.text("Transaction ", rx.code(s.reversing, word_break="break-all"), size="2"),
        *reason_fields(
            REASON_ID,
            errors,
            "A chargeback, a cheater, a mistake…",
            note="The publisher receives it as it is.",
        ),
        title="Reverse the conversion of " + s.reversing_mission + "?",
        open=s.reversing != "",
        submit="Reverse conversion",
        color_scheme="red",
        on_submit=s.reverse,
        on_cancel=s.cancel_reverse,
    )


def conversions() -> rx.Component:
    s = ConversionsState
    return page(
        "Conversions",
        _filter(),
        searched_list(
            s,
            search=_search(),
            table=_table(),
            noun="conversion",
            empty=empty_state(
                "badge-check",
                "No conversions here",
                "Conversions appear as players complete missions.",
            ),
        ),
        _reverse_dialog(),
        subtitle="Reverse an approved conversion (a chargeback, a cheater, a mistake) with a "
        "reason: its publisher receives a reversal postback.",
    )
