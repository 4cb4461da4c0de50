"""The shell every signed-in page shares: top bar, role navigation, page title."""

from __future__ import annotations

import reflex as rx

from portal import routes
from portal.state.auth import AuthState


def _nav_link(label: str, href: str) -> rx.Component:
    return rx.link(
        label, href=href, size="2", weight="medium", color_scheme="gray", high_contrast=True
    )


def _role_links() -> rx.Component:
    return rx.match(
        AuthState.user_role,
        (
            "staff",
            rx.hstack(
                _nav_link("Dashboard", routes.STAFF),
                _nav_link("Publishers", routes.STAFF_PUBLISHERS),
                _nav_link("Studios", routes.STAFF_STUDIOS),
                _nav_link("Games", routes.GAMES),
                _nav_link("Reports", routes.REPORTS),
                spacing="4",
            ),
        ),
        (
            "designer",
            rx.hstack(
                _nav_link("Games", routes.GAMES), _nav_link("Reports", routes.REPORTS), spacing="4"
            ),
        ),
        (
            "publisher",
            # Until approved (or while suspended) the application is all a publisher uses.
            rx.cond(
                AuthState.user_limited,
                rx.hstack(_nav_link("Application", routes.APPLICATION), spacing="4"),
                rx.hstack(
                    _nav_link("Offerwall", routes.PUBLISHER),
                    _nav_link("Offers", routes.PUBLISHER_OFFERS),
                    _nav_link("Postback", routes.PUBLISHER_POSTBACK),
                    _nav_link("Deliveries", routes.PUBLISHER_DELIVERIES),
                    _nav_link("Reports", routes.REPORTS),
                    spacing="4",
                ),
            ),
        ),
        rx.fragment(),
    )


def _user_menu() -> rx.Component:
    return rx.menu.root(
        rx.menu.trigger(
            rx.button(
                rx.icon("circle-user", size=16),
                rx.text(AuthState.user_email, display=["none", "none", "inline"]),
                variant="soft",
                size="2",
                aria_label="Account menu",
            )
        ),
        rx.menu.content(
            rx.text(AuthState.user_email, size="1", color_scheme="gray", padding_x="0.5rem"),
            rx.text(
                AuthState.user_role,
                size="1",
                weight="medium",
                padding_x="0.5rem",
                text_transform="capitalize",
            ),
            rx.menu.separator(),
            rx.menu.item("Sign out", on_click=AuthState.logout),
        ),
    )


def top_bar() -> rx.Component:
    return rx.flex(
        rx.hstack(
            rx.link(
                rx.hstack(
                    rx.icon("swords", size=20), rx.heading("Questwall", size="4"), align="center"
                ),
                href=routes.HOME,
                underline="none",
                color_scheme="gray",
                high_contrast=True,
            ),
            _role_links(),
            spacing="6",
            align="center",
            wrap="wrap",
        ),
        rx.cond(AuthState.user_email != "", _user_menu()),
        justify="between",
        align="center",
        wrap="wrap",
        gap="3",
        padding_x=["1rem", "1.5rem"],
        padding_y="0.75rem",
        border_bottom="1px solid var(--gray-a5)",
        background="var(--color-panel-solid)",
        position="sticky",
        top="0",
        z_index="10",
        as_="header",
    )


def page(title: str | rx.Var, *children: rx.Component, subtitle: str | rx.Var = "") -> rx.Component:
    """A signed-in page: top bar, then a titled, width-limited main column."""
    return rx.box(
        top_bar(),
        rx.box(
            rx.vstack(
                rx.heading(title, size="7", as_="h1"),
                rx.cond(subtitle != "", rx.text(subtitle, color_scheme="gray")),
                *children,
                spacing="5",
                width="100%",
            ),
            max_width="1120px",
            margin_x="auto",
            padding_x=["1rem", "1.5rem"],
            padding_y="1.5rem",
            as_="main",
        ),
        min_height="100vh",
        background="var(--gray-2)",
    )


def card(*children: rx.Component, **props) -> rx.Component:
    return rx.card(rx.vstack(*children, spacing="3", width="100%"), width="100%", size="3", **props)


def empty_state(icon: str, title: str, text: str) -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon(icon, size=32, color="var(--gray-9)"),
            rx.text(title, weight="bold"),
            rx.text(text, color_scheme="gray", size="2", text_align="center"),
            align="center",
            spacing="2",
        ),
        padding="2rem",
        width="100%",
    )


def status_badge(status: rx.Var) -> rx.Component:
    return rx.match(
        status,
        ("approved", rx.badge("approved", color_scheme="green")),
        ("delivered", rx.badge("delivered", color_scheme="green")),
        ("pending", rx.badge("pending", color_scheme="amber")),
        ("rejected", rx.badge("rejected", color_scheme="red")),
        ("failed", rx.badge("failed", color_scheme="red")),
        ("suspended", rx.badge("suspended", color_scheme="gray")),
        rx.badge(status),
    )
