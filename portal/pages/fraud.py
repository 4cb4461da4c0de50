"""Fraud (staff and designers): the held conversions to approve, reject or keep holding;
what the screening refused and set aside; and, for staff, the blocklist and each
offerwall's rules."""

from __future__ import annotations

import reflex as rx

from api.reports.fraud_page import DAYS
from models import BlockKind
from models.signals import CLICK_SIGNALS, COMPLETION_SIGNALS, allowed_actions
from portal.components.confirm import confirm_button, form_dialog
from portal.components.forms import (
    field,
    field_error,
    form_error,
    native_select,
    reason_fields,
    search_form,
    signal_select,
    submission_count,
)
from portal.components.layout import card, empty_state, page
from portal.components.offer_form import checkbox
from portal.components.tables import data_table, searched_list
from portal.components.wording import counted
from portal.state.fraud import REVIEW_POSTBACKS, FraudState

REASON_ID = "rejection-reason"
KINDS = {BlockKind.IP: "IP address", BlockKind.NETWORK: "Network", BlockKind.UID: "Player uid"}


def _heading(text: str) -> rx.Component:
    return rx.heading(text, size="4", as_="h2")


def _stat(label: str, value: rx.Var, test_id: str) -> rx.Component:
    return card(
        rx.text(label, size="2", color_scheme="gray"),
        # A figure, not a heading (Radix draws a heading `as` anything else as an h1).
        rx.text(value.to_string(), size="7", weight="bold", data_testid=test_id),
    )


# --- the review queue -----------------------------------------------------------------


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
                rx.text(r.uid),
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
                rx.checkbox(checked=s.all_selected, on_change=s.toggle_page),
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


def _queue() -> rx.Component:
    s = FraudState
    return rx.vstack(
        _heading("Held conversions"),
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


def _reject_dialog() -> rx.Component:
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


# --- the overview ---------------------------------------------------------------------


def _counts(title: str, rows: rx.Var, label: str, test_id: str) -> rx.Component:
    return card(
        rx.heading(title, size="3", as_="h3"),
        rx.cond(
            rows.length() > 0,
            data_table(
                (label, "Count"),
                rows,
                lambda c: [rx.code(c.label, size="1", word_break="break-all"), c.count],
                test_id=test_id,
                size="1",
            ),
            rx.text("None.", size="2", color_scheme="gray"),
        ),
    )


def _refused() -> rx.Component:
    s = FraudState
    return card(
        _heading(f"Refused clicks, last {DAYS} days"),
        rx.cond(
            s.reasons.length() > 0,
            rx.flex(
                rx.foreach(
                    s.reasons,
                    lambda c: rx.badge(
                        c.label + " " + c.count.to_string(), size="2", variant="soft"
                    ),
                ),
                wrap="wrap",
                spacing="2",
                data_testid="refused-reasons",
            ),
        ),
        rx.cond(
            s.days.length() > 0,
            data_table(
                ("Day", "Total", "By reason"),
                s.days,
                lambda d: [rx.text(d.day, white_space="nowrap"), d.total, d.by_reason],
                test_id="refused-day",
            ),
            rx.text("No click was refused.", size="2", color_scheme="gray"),
        ),
    )


def _flags() -> rx.Component:
    s = FraudState
    return card(
        _heading("Set aside by anti-cheat rules"),
        rx.text(
            "The latest events a mission's limits kept from counting.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.flags.length() > 0,
            data_table(
                ("When", "Mission", "User", "Event", "Rule", "Detail"),
                s.flags,
                lambda f: [
                    rx.text(f.at, size="2", white_space="nowrap"),
                    f.mission,
                    rx.code(f.user_id, size="1", word_break="break-all"),
                    f.event,
                    rx.badge(f.rule, variant="soft"),
                    f.detail,
                ],
                test_id="cheat-flag",
            ),
            rx.text("No event was set aside.", size="2", color_scheme="gray"),
        ),
    )


def _overview() -> rx.Component:
    s = FraudState
    return rx.vstack(
        _refused(),
        rx.grid(
            _counts("Riskiest IP addresses", s.ips, "IP address", "top-ip"),
            _counts("Riskiest networks", s.networks, "Network", "top-network"),
            _counts("Most refused uids", s.uids, "uid", "top-uid"),
            columns=rx.breakpoints(initial="1", md="3"),
            spacing="4",
            width="100%",
        ),
        _flags(),
        spacing="4",
        width="100%",
    )


# --- staff: the blocklist -------------------------------------------------------------


def _block_form() -> rx.Component:
    s = FraudState
    errors = s.block_errors
    return rx.form(
        rx.vstack(
            form_error(errors.get("form", "").to(str)),
            rx.grid(
                rx.vstack(
                    rx.el.label(rx.text("Kind", size="2", weight="medium"), html_for="block-kind"),
                    native_select(
                        *[rx.el.option(label, value=kind) for kind, label in KINDS.items()],
                        name="kind",
                        id="block-kind",
                        width="100%",
                        aria_invalid=rx.cond(errors.contains("kind"), "true", "false"),
                    ),
                    field_error(errors, "kind", input_id="block-kind"),
                    spacing="1",
                    width="100%",
                ),
                field(
                    "Value",
                    "value",
                    id="block-value",
                    errors=errors,
                    placeholder="203.0.113.7, 203.0.113.0/24 or a uid",
                ),
                field("Note", "note", id="block-note", required=False, placeholder="Why"),
                columns=rx.breakpoints(initial="1", md="3"),
                spacing="3",
                width="100%",
            ),
            submission_count(),
            rx.button("Block", type="submit"),
            spacing="3",
            width="100%",
        ),
        on_submit=s.block,
        reset_on_submit=False,
        key=s.version.to_string(),
    )


def _blocklist() -> rx.Component:
    s = FraudState
    return card(
        _heading("Blocklist"),
        rx.text(
            "Clicks from these addresses, networks and players are refused within seconds.",
            size="2",
            color_scheme="gray",
        ),
        _block_form(),
        rx.cond(
            s.blocks.length() > 0,
            data_table(
                ("Kind", "Value", "Note", "Added", ""),
                s.blocks,
                lambda b: [
                    rx.badge(b.kind, variant="soft"),
                    rx.code(b.value, size="2", word_break="break-all"),
                    b.note,
                    rx.vstack(
                        rx.text(b.created_at, size="1", white_space="nowrap"),
                        rx.text(b.created_by, size="1", color_scheme="gray"),
                        spacing="1",
                    ),
                    confirm_button(
                        "Remove",
                        title="Unblock " + b.value + "?",
                        description="Its clicks are screened like any other again.",
                        confirm="Remove",
                        on_confirm=s.unblock(b.id),
                        size="1",
                        variant="soft",
                        color_scheme="red",
                    ),
                ],
                test_id="block-row",
            ),
            rx.text("Nothing is blocked.", size="2", color_scheme="gray"),
        ),
        data_testid="blocklist",
    )


# --- staff: each offerwall's rules ----------------------------------------------------


def _signal_select(wall, signal: str) -> rx.Component:
    return signal_select(
        signal,
        [(a, a.capitalize()) for a in allowed_actions(signal)],
        name=signal,
        input_id=wall.id + "-" + signal,
        value=wall.actions[signal].to(str),
    )


def _wall_rules(wall) -> rx.Component:
    s = FraudState
    signals = rx.grid(
        *[_signal_select(wall, signal) for signal in (*CLICK_SIGNALS, *COMPLETION_SIGNALS)],
        columns=rx.breakpoints(initial="1", sm="2", md="3"),
        spacing="3",
        width="100%",
    )
    return rx.form(
        rx.vstack(
            rx.hstack(
                rx.heading(wall.name, size="3", as_="h3"),
                rx.code(wall.owid, size="1"),
                align="center",
                wrap="wrap",
            ),
            rx.cond(
                s.rules_errors.contains(wall.id),
                rx.callout(
                    s.rules_errors[wall.id].to(str),
                    icon="triangle-alert",
                    color_scheme="red",
                    role="alert",
                    width="100%",
                ),
            ),
            signals,
            checkbox(
                REVIEW_POSTBACKS,
                "Send pending and rejected postbacks (held and rejected conversions)",
                wall.review_postbacks,
            ),
            rx.el.input(type="hidden", name="offerwall", value=wall.id),
            rx.button("Save rules", type="submit", size="2"),
            spacing="3",
            width="100%",
            padding_y="0.75rem",
            border_top="1px solid var(--gray-a5)",
        ),
        on_submit=s.save_rules,
        reset_on_submit=False,
        key=wall.id + "-" + s.version.to_string(),
        data_testid="offerwall-rules",
        aria_label="Rules of " + wall.name,
    )


def _rules() -> rx.Component:
    s = FraudState
    return card(
        _heading("Offerwalls' rules"),
        rx.text(
            "What each risk signal does on an offerwall's traffic: refuse the click, hold "
            "the conversion for review, or allow it (the signal is only recorded).",
            size="2",
            color_scheme="gray",
        ),
        form_error(s.rules_errors.get("form", "").to(str)),
        rx.cond(
            s.walls.length() > 0,
            rx.vstack(rx.foreach(s.walls, _wall_rules), spacing="2", width="100%"),
            rx.text("No approved offerwall yet.", size="2", color_scheme="gray"),
        ),
    )


def fraud() -> rx.Component:
    s = FraudState
    return page(
        "Fraud",
        rx.grid(
            _stat("Held for review", s.held, "held-count"),
            _stat(f"Refused clicks, last {DAYS} days", s.refused, "refused-count"),
            columns="2",
            spacing="4",
            width="100%",
        ),
        _queue(),
        _overview(),
        rx.cond(s.is_staff, rx.vstack(_blocklist(), _rules(), spacing="5", width="100%")),
        _reject_dialog(),
        subtitle="Review held conversions, and see what the screening refused and set aside.",
    )
