"""The tabs of a game's pages; they carry `?game=<id>`."""

from __future__ import annotations

import reflex as rx

from portal import routes


def game_tabs(state, current: str) -> rx.Component:
    def tab(label: str, href: str) -> rx.Component:
        return rx.link(
            rx.button(label, variant="solid" if href == current else "soft", size="2"),
            href=routes.with_game(href, state.game_id),
        )

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
