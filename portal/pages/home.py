"""The home page (a placeholder until the portal's accounts arrive)."""

import reflex as rx


def home() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.heading("Questwall", size="8"),
            rx.text("Game events become missions and quests; offerwalls send the players."),
            rx.hstack(
                rx.link(rx.button("API reference"), href="/v2/docs", is_external=True),
                spacing="3",
            ),
            align="center",
            spacing="4",
        ),
        min_height="100vh",
    )
