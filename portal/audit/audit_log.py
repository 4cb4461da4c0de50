"""Staff's Audit log: the filters, the export links, the events newest first."""

from __future__ import annotations

import reflex as rx

from portal.audit.audit_log_state import AuditLogState
from portal.audit.events import events_card
from portal.components.layout import card, page
from portal.components.reauth import reauth_dialog


def _input(label: str, name: str, value: rx.Var, placeholder: str, hint: str = "") -> rx.Component:
    return rx.vstack(
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=f"audit-{name}"),
        rx.input(
            name=name,
            id=f"audit-{name}",
            default_value=value,
            placeholder=placeholder,
            size="2",
            width="100%",
        ),
        rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        spacing="1",
        width="100%",
    )


def _filters() -> rx.Component:
    s = AuditLogState
    return card(
        rx.form(
            rx.grid(
                _input("Who", "actor", s.actor, "email or account id"),
                _input("Action", "action", s.action, "offerwall. or offerwall.approved"),
                _input("Target", "target", s.target, "offerwall or offerwall:ID"),
                _input("Since", "since", s.since, "2026-11-01", "A date or time, UTC."),
                _input("Until", "until", s.until, "2026-11-30", "A date includes that day."),
                columns=rx.breakpoints(initial="1", xs="2", md="5"),
                spacing="3",
                width="100%",
            ),
            rx.hstack(
                rx.button("Filter", type="submit", size="2"),
                rx.button("Clear", type="button", variant="soft", size="2", on_click=s.clear),
                spacing="3",
                margin_top="0.75rem",
            ),
            on_submit=s.apply,
            reset_on_submit=False,
            # Drawn again when the filters are cleared, so the inputs show them.
            key=s.actor + "|" + s.action + "|" + s.target + "|" + s.since + "|" + s.until,
            aria_label="Filter the audit log",
        ),
        rx.cond(
            s.filter_error != "",
            rx.callout(s.filter_error, icon="triangle-alert", color_scheme="red", role="alert"),
        ),
    )


def _export_button(label: str, shape: str) -> rx.Component:
    # A download from the API once the password is confirmed (the dialog asks for it when
    # it was not entered in the last ten minutes).
    return rx.button(
        label, on_click=AuditLogState.export(shape), variant="soft", size="1", type="button"
    )


def _exports() -> rx.Component:
    return rx.hstack(
        rx.text("Export these events:", size="2", color_scheme="gray"),
        _export_button("CSV", "csv"),
        _export_button("JSON Lines", "jsonl"),
        spacing="3",
        align="center",
        wrap="wrap",
        data_testid="audit-exports",
    )


def audit_log() -> rx.Component:
    s = AuditLogState
    return page(
        "Audit log",
        _filters(),
        _exports(),
        events_card(s, empty="No event matches these filters."),
        reauth_dialog(s),
        subtitle="Every change to money and access: who made it, from where, each value "
        "before and after. Newest first; an export is recorded here too.",
    )
