"""The offerwall's test player in the lists of conversions and postbacks
(docs/publisher-integration.md#the-test-player): a "Test" badge on each of its rows, and
the filter of the lists that hold them (every row, real players' only, the test player's
only)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from portal.components.forms import native_select

# The filter's choices, in the order it offers them: "all" is no filter.
CHOICES = (("all", "Real and test"), ("real", "Real only"), ("test", "Test only"))


def marked_test(test: rx.Var) -> rx.Component:
    """A "Test" badge beside a row of the test player's, nothing beside another."""
    return rx.cond(
        test,
        rx.tooltip(
            rx.badge("Test", color_scheme="violet", variant="surface", data_testid="test-badge"),
            content="The offerwall's test player: never paid, not in the reports.",
        ),
    )


def players_filter(state: Any, label: str) -> rx.Component:
    """A select of `CHOICES` on the state's `players_choice`, sent to `filter_players`."""
    return native_select(
        *[rx.el.option(text, value=value) for value, text in CHOICES],
        value=state.players_choice,
        on_change=state.filter_players,
        aria_label=label,
        data_testid="players-filter",
    )
