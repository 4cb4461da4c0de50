"""Staff's Audit log (every event, filtered, exported), the History of a publisher, a game
or a mission, and a publisher's or a studio's Security log."""

from __future__ import annotations

import reflex as rx

from portal import routes
from portal.audit.events import events_card
from portal.audit.events_state import EXPORT_PATH, AuditLogState
from portal.audit.history_state import (
    GameHistoryState,
    OfferwallHistoryState,
    PublisherSecurityState,
    StudioSecurityState,
)
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, page
from portal.components.workspace import workspace_tabs

LINK_STYLE = {"color": "var(--accent-11)", "fontSize": "var(--font-size-2)"}


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


def _export_link(label: str, href: rx.Var) -> rx.Component:
    # A download from the API, not a page of the portal: the browser fetches it itself
    # (the portal's router would look for a page at that path).
    return rx.el.a(
        label,
        href=href,
        download="",
        style=LINK_STYLE,
        custom_attrs={"reloadDocument": True},
    )


def _exports() -> rx.Component:
    s = AuditLogState
    query = rx.cond(s.export_query != "", "&" + s.export_query, "")
    return rx.hstack(
        rx.text("Export these events:", size="2", color_scheme="gray"),
        _export_link("CSV", EXPORT_PATH + "?format=csv" + query),
        _export_link("JSON Lines", EXPORT_PATH + "?format=jsonl" + query),
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
        subtitle="Every change to money and access: who made it, from where, each value "
        "before and after. Newest first; an export is recorded here too.",
    )


def game_history() -> rx.Component:
    s = GameHistoryState
    return page(
        rx.cond(s.mission_id != "", "History of " + s.mission_name, s.game_name),
        game_tabs(s, routes.GAME_HISTORY),
        rx.cond(
            s.mission_id != "",
            rx.link(
                "← Back to the mission", href=routes.mission(s.game_id, s.mission_id), size="2"
            ),
        ),
        events_card(
            s,
            heading="History",
            intro=rx.cond(
                s.mission_id != "",
                "Changes to this mission, newest first.",
                "Changes to this game, newest first.",
            ),
            empty="No change has been recorded here yet.",
        ),
    )


def offerwall_history() -> rx.Component:
    s = OfferwallHistoryState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_HISTORY),
        events_card(
            s,
            heading="History",
            intro="Changes to this offerwall and within it (its status, URLs, key, "
            "payout rules and conversion decisions), newest first.",
            empty="No change has been recorded here yet.",
        ),
    )


def publisher_security() -> rx.Component:
    s = PublisherSecurityState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_SECURITY),
        events_card(
            s,
            heading="Security log",
            intro="What happened to this publisher's accounts (sign-ins, passwords, "
            "sessions) and what they changed, newest first.",
            empty="Nothing has been recorded about these accounts yet.",
        ),
    )


def studio_security() -> rx.Component:
    s = StudioSecurityState
    return page(
        "Security log",
        events_card(
            s,
            heading=s.studio_name,
            intro="What happened to this studio's accounts (sign-ins, passwords, "
            "sessions) and what they changed, newest first.",
            empty="Nothing has been recorded about these accounts yet.",
        ),
    )
