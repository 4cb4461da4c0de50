"""Paging under a table."""

from __future__ import annotations

from typing import Any

import reflex as rx


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
