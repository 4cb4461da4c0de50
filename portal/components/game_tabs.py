"""The tabs of a game's pages; they carry `?game=<id>`."""

from __future__ import annotations

import reflex as rx

from portal import routes


def game_tabs(state, current: str) -> rx.Component:
    """Drawn once the page's state knows its game: a tab pressed before would lead to the
    page without its game (`?game=`), which sends back to the games' list."""

    def tab(label: str, href: str) -> rx.Component:
        return rx.link(
            rx.button(label, variant="solid" if href == current else "soft", size="2"),
            href=routes.with_game(href, state.game_id),
        )

    return rx.cond(state.game_id != "", _tabs(tab), rx.box(height="var(--space-6)"))


def _tabs(tab) -> rx.Component:
    return rx.hstack(
        rx.link("← All games", href=routes.GAMES, size="2"),
        tab("Integration", routes.GAME),
        tab("Missions", routes.MISSIONS),
        tab("Rule tester", routes.TESTER),
        tab("Events", routes.EVENTS),
        tab("Webhooks", routes.WEBHOOKS),
        tab("History", routes.GAME_HISTORY),
        spacing="2",
        wrap="wrap",
        align="center",
        data_testid="game-tabs",
    )
