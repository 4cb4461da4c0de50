"""The live event debugger page."""

import reflex as rx

from portal import routes
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.ingest.state import DebuggerState


def events_page() -> rx.Component:
    s = DebuggerState
    return page(
        "Live events",
        game_tabs(s, routes.EVENTS),
        rx.moment(interval=rx.cond(s.live, 2000, 0), on_change=s.tick, display="none"),
        rx.flex(
            rx.form(
                rx.hstack(
                    rx.input(
                        name="user_id",
                        placeholder="User id",
                        aria_label="Filter by user id",
                        size="2",
                    ),
                    rx.button("Filter", type="submit", size="2", variant="soft"),
                ),
                on_submit=s.filter_user,
            ),
            rx.el.label(
                rx.hstack(
                    # 24 px high: a target a finger (or a shaky hand) can hit.
                    rx.switch(checked=s.live, on_change=s.toggle_live, size="3"),
                    rx.text("Live", size="2"),
                    align="center",
                )
            ),
            justify="between",
            wrap="wrap",
            gap="3",
            width="100%",
        ),
        card(
            rx.heading("Events", size="4", as_="h2"),
            rx.cond(
                s.events.length() > 0,
                data_table(
                    ("Time", "Received", "User", "Event", "Value", "Traits"),
                    s.events,
                    lambda e: [
                        rx.text(e.time, white_space="nowrap"),
                        rx.text(e.received, white_space="nowrap"),
                        e.user_id,
                        rx.code(e.name),
                        e.value,
                        rx.code(e.traits, size="1"),
                    ],
                    test_id="event-row",
                    size="1",
                ),
                empty_state(
                    "radio",
                    "Waiting for events",
                    "Events your game sends appear here as they arrive.",
                ),
            ),
        ),
        card(
            rx.heading("Refused requests", size="4", as_="h2"),
            rx.text(
                "Requests refused as a whole (bad signature, stale timestamp, bad JSON, "
                "body too large), kept 24 hours, the last 50 per client id.",
                color_scheme="gray",
                size="2",
            ),
            rx.cond(
                s.refused.length() > 0,
                rx.vstack(rx.foreach(s.refused, _refused), spacing="3", width="100%"),
                rx.text("No request was refused.", color_scheme="gray", size="2"),
            ),
        ),
        card(
            rx.heading("Set aside by anti-cheat rules", size="4", as_="h2"),
            rx.cond(
                s.set_aside.length() > 0,
                data_table(
                    ("Checked", "User", "Event", "Mission", "Rule", "Why"),
                    s.set_aside,
                    lambda f: [
                        rx.text(f.at, white_space="nowrap"),
                        f.user_id,
                        rx.code(f.event),
                        f.mission,
                        rx.code(f.rule),
                        f.detail,
                    ],
                    test_id="set-aside-row",
                    size="1",
                ),
                rx.text(
                    "No event broke a mission's anti-cheat rule.", color_scheme="gray", size="2"
                ),
            ),
        ),
        card(
            rx.heading("Rejected items", size="4", as_="h2"),
            rx.cond(
                s.rejected.length() > 0,
                data_table(
                    ("Request at", "Answer", "Item", "Code", "Reason"),
                    s.rejected,
                    lambda r: [
                        rx.text(r.at, white_space="nowrap"),
                        r.status,
                        rx.code(r.item),
                        rx.code(r.code),
                        r.message,
                    ],
                    test_id="rejected-row",
                    size="1",
                ),
                rx.text("No rejected items.", color_scheme="gray", size="2"),
            ),
        ),
        card(
            rx.heading("Identifier changes", size="4", as_="h2"),
            rx.cond(
                s.identifiers.length() > 0,
                data_table(
                    ("Updated", "User", "Kind", "Value", "Platform user"),
                    s.identifiers,
                    lambda i: [
                        rx.text(i.updated, white_space="nowrap"),
                        i.user_id,
                        i.kind,
                        i.value,
                        rx.code(i.platform_user_id, size="1"),
                    ],
                    test_id="identifier-row",
                    size="1",
                ),
                rx.text("No identifiers yet.", color_scheme="gray", size="2"),
            ),
        ),
    )


def _fact(label: str, value: rx.Var) -> rx.Component:
    return rx.text(
        rx.text.span(label + ": ", color_scheme="gray"),
        rx.code(value, size="1", word_break="break-all"),
        size="1",
    )


def _refused(r: rx.Var) -> rx.Component:
    """One refused request: why, and what the server computed (never the secret)."""
    return rx.box(
        rx.flex(
            rx.text(r.at, size="2", white_space="nowrap"),
            rx.badge(r.status.to_string() + " " + r.code, color_scheme="red"),
            rx.code(r.client_id, size="1"),
            wrap="wrap",
            gap="2",
            align="center",
        ),
        rx.text(r.reason, size="2", weight="medium", margin_y="var(--space-2)"),
        rx.cond(
            r.signed != "",
            rx.box(
                rx.text(
                    "String signed (clientId + timestamp + body as received)",
                    size="1",
                    color_scheme="gray",
                ),
                rx.code(
                    r.signed,
                    size="1",
                    display="block",
                    white_space="pre-wrap",
                    word_break="break-all",
                    padding="var(--space-2)",
                    margin_top="var(--space-1)",
                    data_testid="refused-signed",
                ),
            ),
        ),
        rx.flex(
            rx.cond(r.skew != "", _fact("Server clock minus x-timestamp", r.skew)),
            _fact("Body", r.body),
            rx.cond(r.body_sha256 != "", _fact("Body SHA-256", r.body_sha256)),
            rx.cond(r.signature != "", _fact("x-signature received", r.signature)),
            direction="column",
            gap="1",
            margin_top="var(--space-2)",
        ),
        data_testid="refused-row",
        width="100%",
        padding="var(--space-3)",
        border="1px solid var(--gray-a5)",
        border_radius="var(--radius-3)",
    )
