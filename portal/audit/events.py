"""The table every list of audit events shows (when, with the request id under it; who with
role and IP; the action; the target as it was named; each change before → after) and its
paging."""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal.components.layout import card, empty_state
from portal.components.tables import data_table

# Ids and hashes break anywhere rather than push a cell past the screen.
BREAK = {"word_break": "break-all", "white_space": "normal"}
# Words (an email, a name) break between words, and inside one only when it is wider
# than the column can be: a column is as wide as its longest word ("break-word" counts
# whole words when the table sizes its columns, where "anywhere" counts letters).
WORDS = {"overflow_wrap": "break-word", "word_break": "normal"}


def _change(change: Any) -> rx.Component:
    return rx.el.li(
        rx.code(change.field, size="1", variant="ghost"),
        rx.text(": ", as_="span", size="1"),
        rx.text(change.before, as_="span", size="1", color_scheme="gray", **BREAK),
        rx.text(" → ", as_="span", size="1", aria_label=" changed to "),
        rx.text(change.after, as_="span", size="1", weight="medium", **BREAK),
        data_testid="audit-change",
    )


def _who(event: Any) -> rx.Component:
    detail = rx.cond(
        event.ip != "",
        event.role + " · " + event.ip,
        event.role,
    )
    return rx.vstack(
        rx.text(event.who, size="2", **WORDS),
        rx.cond(detail != "", rx.text(detail, size="1", color_scheme="gray", **BREAK)),
        spacing="0",
        title=event.user_agent,
    )


def _target(event: Any) -> rx.Component:
    return rx.vstack(
        rx.text(event.target, size="2", **WORDS),
        rx.text(event.target_ref, size="1", color_scheme="gray", **BREAK),
        spacing="0",
        min_width=["0", "0", "8rem"],
    )


def _changes(event: Any) -> rx.Component:
    return rx.cond(
        event.changes.length() > 0,
        rx.el.ul(
            rx.foreach(event.changes, _change),
            style={"margin": "0", "padding": "0", "listStyle": "none"},
            # On a laptop the values (URLs) get room enough to read; a phone's card wraps.
            min_width=["0", "0", "14rem"],
        ),
        rx.text("—", color_scheme="gray"),
    )


def _when(event: Any) -> rx.Component:
    """The moment, and under it the request that made the change (its id in the logs)."""
    return rx.vstack(
        rx.text(
            rx.text(event.day, as_="span", white_space="nowrap"),
            " ",
            rx.text(event.time, as_="span", white_space="nowrap"),
            size="2",
        ),
        rx.cond(
            event.request_id != "",
            rx.text(
                "request ",
                rx.code(event.request_id, size="1", variant="ghost"),
                size="1",
                color_scheme="gray",
                data_testid="audit-request",
                **BREAK,
            ),
        ),
        spacing="1",
        min_width=["0", "0", "8rem"],
    )


def events_table(state: Any) -> rx.Component:
    return data_table(
        ("When", "Who", "Action", "Target", "Changes"),
        state.events,
        lambda e: [
            _when(e),
            _who(e),
            # One line in a laptop's table; a phone's card wraps it (assets/portal.css).
            rx.code(e.action, size="1", white_space="nowrap"),
            _target(e),
            _changes(e),
        ],
        test_id="audit-event",
    )


def pages(state: Any) -> rx.Component:
    return rx.hstack(
        rx.button(
            "Newest",
            size="2",
            variant="soft",
            disabled=state.before == 0,
            on_click=state.newest_page,
        ),
        rx.button(
            "Older",
            rx.icon("chevron-right", size=14),
            size="2",
            variant="soft",
            disabled=state.older == 0,
            on_click=state.older_page,
        ),
        justify="end",
        spacing="3",
        width="100%",
    )


def events_card(state: Any, *, empty: str, heading: Any = None, intro: Any = None) -> rx.Component:
    """A card of `state`'s events (or `empty` when there are none) with its paging."""
    parts: list[rx.Component] = []
    if heading is not None:
        parts.append(rx.heading(heading, size="4", as_="h2"))
    if intro is not None:
        parts.append(rx.text(intro, size="2", color_scheme="gray"))
    return card(
        *parts,
        rx.cond(
            state.events.length() > 0,
            rx.fragment(events_table(state), pages(state)),
            rx.cond(
                state.before != 0,
                rx.fragment(
                    empty_state("history", "No older events", "That was the oldest."),
                    pages(state),
                ),
                empty_state("history", "Nothing recorded yet", empty),
            ),
        ),
        data_testid="audit-events",
    )
