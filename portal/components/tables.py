"""Tables: a data table that scrolls sideways on narrow screens, paging under it, and the
filter above it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import reflex as rx

from portal.components.forms import native_select
from portal.components.layout import card, empty_state


def data_table(
    headers: Sequence[str],
    rows: rx.Var,
    cells: Callable[[Any], Sequence[Any]],
    *,
    test_id: str = "",
    size: str = "2",
    extra_rows: Sequence[rx.Component] = (),
    cards: bool | rx.Var = True,
) -> rx.Component:
    """One header row, then one row per item of `rows`; `cells(item)` gives the contents
    of its cells. `extra_rows` (a totals row) follow the items.

    On a phone each row becomes a card of its own, every cell under its column's name
    (assets/portal.css: `.qw-cards`), so no action is ever off screen. Without `cards` (a
    long list of figures, where a card a row would make the page endless) it stays a
    table of one line a row, scrolling sideways in its card with its first column held
    (`.qw-lines`): then this box is what scrolls, a region the keyboard can focus to
    scroll it with the arrow keys."""

    def row(item: Any) -> rx.Component:
        return rx.table.row(
            *[rx.table.cell(c, data_label=h) for h, c in zip(headers, cells(item), strict=True)],
            data_testid=test_id,
        )

    return rx.box(
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in headers])),
            rx.table.body(rx.foreach(rows, row), *extra_rows),
            width="100%",
            size=size,
        ),
        class_name=rx.cond(cards, "qw-cards", "qw-lines"),
        overflow_x="auto",
        width="100%",
        tab_index=rx.cond(cards, None, 0),
        role=rx.cond(cards, None, "region"),
        aria_label=rx.cond(cards, None, "Table, scrolls sideways"),
    )


def pager(page: rx.Var, pages: rx.Var, total: rx.Var, go: Any) -> rx.Component:
    return rx.hstack(
        rx.text(total.to_string() + " in all", size="2", color_scheme="gray"),
        rx.spacer(),
        rx.button("Previous", size="1", variant="soft", disabled=page <= 1, on_click=go(page - 1)),
        rx.text("Page " + page.to_string() + " of " + pages.to_string(), size="2"),
        rx.button("Next", size="1", variant="soft", disabled=page >= pages, on_click=go(page + 1)),
        align="center",
        width="100%",
        spacing="3",
    )


def searched_list(
    state: Any, *, search: rx.Component, table: rx.Component, noun: str, empty: rx.Component
) -> rx.Component:
    """A card with a list's search form, its table (or why it is empty: no match for the
    search, or `empty`) and its pager. `state` has rows, search, page, pages, total, go."""
    no_match = empty_state(
        "search", "No matches", f"No {noun} here matches “" + state.search + "”."
    )
    return card(
        search,
        rx.cond(state.rows.length() > 0, table, rx.cond(state.search != "", no_match, empty)),
        pager(state.page, state.pages, state.total, state.go),
    )


def choice_filter(
    state, choices: Sequence[str], label: str, counts: rx.Var | None = None
) -> rx.Component:
    """ "All" or one of `choices` (the state's `status_choice` and `filter_status`): a
    segmented control, or on a phone, where five of them would not fit, a select. With
    `counts` (a dict var by choice), each choice names how many it holds: "Pending (3)"."""

    def text(choice: str) -> str | rx.Var:
        name = choice.capitalize()
        return name if counts is None else f"{name} (" + counts[choice].to_string() + ")"

    return rx.box(
        rx.segmented_control.root(
            rx.segmented_control.item("All", value="all"),
            *[rx.segmented_control.item(text(c), value=c) for c in choices],
            value=state.status_choice,
            on_change=state.filter_status,
            aria_label=label,
            display=rx.breakpoints(initial="none", sm="inline-grid"),
        ),
        native_select(
            rx.el.option("All", value="all"),
            *[rx.el.option(text(c), value=c) for c in choices],
            value=state.status_choice,
            on_change=state.filter_status,
            aria_label=label,
            width="100%",
            display=rx.breakpoints(initial="block", sm="none"),
        ),
        max_width="100%",
    )
