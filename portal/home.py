"""The landing page: what Questwall is, sign in, or apply as a publisher."""

import reflex as rx

from portal import routes


def home() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.hstack(
                rx.icon("swords", size=36),
                rx.heading("Questwall", size="8", as_="h1"),
                align="center",
            ),
            rx.text(
                "Game events become missions and quests; offerwalls send the players.",
                size="4",
                color_scheme="gray",
                text_align="center",
            ),
            rx.hstack(
                rx.link(rx.button("Sign in", size="3"), href=routes.LOGIN),
                rx.link(
                    rx.button("Become a publisher", size="3", variant="soft"), href=routes.SIGNUP
                ),
                rx.link(
                    rx.button("API reference", size="3", variant="ghost"),
                    href="/v2/docs",
                    is_external=True,
                ),
                spacing="3",
                wrap="wrap",
                justify="center",
            ),
            align="center",
            spacing="5",
            padding="1.5rem",
        ),
        min_height="100vh",
        background="var(--gray-2)",
    )
