"""The Fraud page's blocklist (staff only): the addresses, networks and player uids whose
clicks are refused, added and removed."""

from __future__ import annotations

import reflex as rx

from models import BlockKind
from portal.components.confirm import confirm_button
from portal.components.forms import field, field_error, form_error, native_select, submission_count
from portal.components.layout import card
from portal.components.tables import data_table
from portal.fraud.state import FraudState

KINDS = {BlockKind.IP: "IP address", BlockKind.NETWORK: "Network", BlockKind.UID: "Player uid"}


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


def blocklist() -> rx.Component:
    s = FraudState
    return card(
        rx.heading("Blocklist", size="4", as_="h2"),
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
