"""The live event debugger page."""

import reflex as rx

from portal import routes
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page
from portal.state.debugger import DebuggerState


def _table(headers: tuple[str, ...], rows, cells, test_id: str) -> rx.Component:
    return rx.box(
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in headers])),
            rx.table.body(rx.foreach(rows, lambda r: rx.table.row(*cells(r), data_testid=test_id))),
            width="100%",
            size="1",
        ),
        overflow_x="auto",
        width="100%",
    )


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
                    rx.switch(checked=s.live, on_change=s.toggle_live),
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
                _table(
                    ("Time", "Received", "User", "Event", "Value", "Traits"),
                    s.events,
                    lambda e: [
                        rx.table.cell(e.time, white_space="nowrap"),
                        rx.table.cell(e.received, white_space="nowrap"),
                        rx.table.cell(e.user_id),
                        rx.table.cell(rx.code(e.name)),
                        rx.table.cell(e.value),
                        rx.table.cell(rx.code(e.traits, size="1")),
                    ],
                    "event-row",
                ),
                empty_state(
                    "radio",
                    "Waiting for events",
                    "Events your game sends appear here as they arrive.",
                ),
            ),
        ),
        card(
            rx.heading("Rejected items", size="4", as_="h2"),
            rx.cond(
                s.rejected.length() > 0,
                _table(
                    ("Request at", "Answer", "Item", "Code", "Reason"),
                    s.rejected,
                    lambda r: [
                        rx.table.cell(r.at, white_space="nowrap"),
                        rx.table.cell(r.status),
                        rx.table.cell(rx.code(r.item)),
                        rx.table.cell(rx.code(r.code)),
                        rx.table.cell(r.message),
                    ],
                    "rejected-row",
                ),
                rx.text("No rejected items.", color_scheme="gray", size="2"),
            ),
        ),
        card(
            rx.heading("Identifier changes", size="4", as_="h2"),
            rx.cond(
                s.identifiers.length() > 0,
                _table(
                    ("Updated", "User", "Kind", "Value", "Platform user"),
                    s.identifiers,
                    lambda i: [
                        rx.table.cell(i.updated, white_space="nowrap"),
                        rx.table.cell(i.user_id),
                        rx.table.cell(i.kind),
                        rx.table.cell(i.value),
                        rx.table.cell(rx.code(i.platform_user_id, size="1")),
                    ],
                    "identifier-row",
                ),
                rx.text("No identifiers yet.", color_scheme="gray", size="2"),
            ),
        ),
    )
