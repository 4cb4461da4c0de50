"""The shell every signed-in page shares: top bar, role navigation, page title."""

from __future__ import annotations

import reflex as rx

from portal import routes
from portal.state.auth import AuthState

# Each role's pages in the navigation: (label, link, the paths it stands for). One level:
# a page's own tabs (a game's pages) never repeat these.
NAV: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "staff": [
        ("Dashboard", routes.STAFF, (routes.STAFF,)),
        ("Publishers", routes.STAFF_PUBLISHERS, (routes.STAFF_PUBLISHERS, routes.PUBLISHER)),
        ("Studios", routes.STAFF_STUDIOS, (routes.STAFF_STUDIOS,)),
        ("Games", routes.GAMES, (routes.STUDIO,)),
        ("Reports", routes.REPORTS, (routes.REPORTS,)),
        ("Conversions", routes.CONVERSIONS, (routes.CONVERSIONS,)),
        ("Fraud", routes.FRAUD, (routes.FRAUD,)),
        ("Tickets", routes.TICKETS, (routes.TICKETS,)),
        ("Users", routes.STAFF_USERS, (routes.STAFF_USERS,)),
        ("Mail", routes.STAFF_MAIL, (routes.STAFF_MAIL,)),
        ("System", routes.STAFF_SYSTEM, (routes.STAFF_SYSTEM,)),
        ("Audit log", routes.STAFF_AUDIT, (routes.STAFF_AUDIT,)),
    ],
    "designer": [
        ("Games", routes.GAMES, (routes.STUDIO,)),
        ("Reports", routes.REPORTS, (routes.REPORTS,)),
        ("Conversions", routes.CONVERSIONS, (routes.CONVERSIONS,)),
        ("Fraud", routes.FRAUD, (routes.FRAUD,)),
    ],
    "publisher": [
        ("Offerwall", routes.PUBLISHER, (routes.PUBLISHER,)),
        ("Offers", routes.PUBLISHER_OFFERS, (routes.PUBLISHER_OFFERS,)),
        ("Wall", routes.PUBLISHER_WALL, (routes.PUBLISHER_WALL,)),
        ("Promotions", routes.PUBLISHER_PROMOTIONS, (routes.PUBLISHER_PROMOTIONS,)),
        ("Postback", routes.PUBLISHER_POSTBACK, (routes.PUBLISHER_POSTBACK,)),
        ("Deliveries", routes.PUBLISHER_DELIVERIES, (routes.PUBLISHER_DELIVERIES,)),
        ("Tickets", routes.TICKETS, (routes.TICKETS,)),
        ("Reports", routes.REPORTS, (routes.REPORTS,)),
    ],
    # A publisher not (or no longer) approved: the application is all they can use.
    "limited": [("Application", routes.APPLICATION, (routes.APPLICATION,))],
}


def _on(path: str) -> rx.Var:
    here = AuthState.router.url.path
    return (here == path) | here.startswith(path + "/")


def _is_current(paths: tuple[str, ...], entries: list[tuple[str, str, tuple[str, ...]]]) -> rx.Var:
    """The browser is on one of `paths`, and not on a page another link of the role stands
    for more precisely (/publisher/postback is Postback's, not Offerwall's)."""
    others = [o for _l, _h, ps in entries if ps != paths for o in ps]
    narrower = [o for o in others if any(o.startswith(p + "/") for p in paths)]
    current = rx.Var.create(False)
    for path in paths:
        current = current | _on(path)
    for path in narrower:
        current = current & ~_on(path)
    return current


def _nav_link(label: str, href: str, current: rx.Var, *, in_menu: bool = False) -> rx.Component:
    return rx.link(
        label,
        href=href,
        size="2" if not in_menu else "3",
        weight=rx.cond(current, "bold", "medium"),
        color_scheme=rx.cond(current, "iris", "gray"),
        high_contrast=True,
        underline="none",
        aria_current=rx.cond(current, "page", None),
        class_name="qw-nav-link",
        padding_y="0.25rem",
        border_bottom=rx.cond(current, "2px solid var(--accent-9)", "2px solid transparent"),
    )


def _links(role: str, *, in_menu: bool = False) -> rx.Component:
    entries = NAV[role]
    links = [
        _nav_link(label, href, _is_current(paths, entries), in_menu=in_menu)
        for label, href, paths in entries
    ]
    if in_menu:
        return rx.vstack(*links, spacing="3", align="start")
    # Staff's pages wrap onto a second row between a phone's width and a laptop's, rather
    # than push the account menu, and the page, off the screen.
    return rx.hstack(*links, spacing="4", align="center", wrap="wrap", row_gap="0.25rem")


def _role_links(*, in_menu: bool = False) -> rx.Component:
    return rx.match(
        rx.cond(AuthState.user_limited, "limited", AuthState.user_role),
        *[(role, _links(role, in_menu=in_menu)) for role in NAV],
        rx.fragment(),
    )


def _account_items() -> list[rx.Component]:
    return [
        rx.text(AuthState.user_email, size="1", color_scheme="gray", padding_x="0.5rem"),
        rx.text(
            AuthState.user_role,
            size="1",
            weight="medium",
            padding_x="0.5rem",
            text_transform="capitalize",
        ),
        rx.menu.separator(),
        rx.menu.item("Your account", on_click=rx.redirect(routes.ACCOUNT)),
        rx.menu.item("Sign out", on_click=AuthState.logout),
    ]


def _user_menu() -> rx.Component:
    """The account menu of a wide screen."""
    return rx.menu.root(
        rx.menu.trigger(
            rx.button(
                rx.icon("circle-user", size=16),
                rx.text(AuthState.user_email),
                variant="soft",
                size="2",
                # The name holds the email it shows, so a voice user can say what they see.
                aria_label="Account menu, " + AuthState.user_email,
            )
        ),
        rx.menu.content(*_account_items(), align="end"),
    )


def _phone_menu() -> rx.Component:
    """A narrow screen's one menu: the pages, then the account."""
    return rx.popover.root(
        rx.popover.trigger(
            rx.icon_button(rx.icon("menu", size=20), variant="soft", size="3", aria_label="Menu")
        ),
        rx.popover.content(
            rx.vstack(
                _role_links(in_menu=True),
                rx.separator(size="4"),
                rx.text(AuthState.user_email, size="2", color_scheme="gray"),
                rx.link("Your account", href=routes.ACCOUNT, size="3"),
                rx.button(
                    "Sign out", variant="soft", color_scheme="gray", on_click=AuthState.logout
                ),
                spacing="3",
                align="start",
            ),
            align="end",
            min_width="220px",
        ),
    )


def top_bar() -> rx.Component:
    """One row at every width: the pages and the account menu on a wide screen, a menu
    button holding both on a phone."""
    signed_in = AuthState.user_email != ""
    bar = rx.flex(
        rx.hstack(
            rx.link(
                rx.hstack(
                    rx.icon("swords", size=20),
                    rx.text("Questwall", size="4", weight="bold"),
                    align="center",
                ),
                href=routes.HOME,
                underline="none",
                color_scheme="gray",
                high_contrast=True,
            ),
            rx.el.nav(_role_links(), display=["none", "none", "block"], aria_label="Main"),
            spacing="6",
            align="center",
        ),
        rx.cond(
            signed_in,
            rx.fragment(
                rx.box(_user_menu(), display=["none", "none", "block"]),
                rx.box(_phone_menu(), display=["block", "block", "none"]),
            ),
        ),
        justify="between",
        align="center",
        gap="3",
        padding_x=["1rem", "1.5rem"],
        padding_y="0.75rem",
        min_height="60px",
    )
    return rx.el.header(
        bar,
        border_bottom="1px solid var(--gray-a5)",
        background="var(--color-panel-solid)",
        position="sticky",
        top="0",
        z_index="10",
    )


def page(title: str | rx.Var, *children: rx.Component, subtitle: str | rx.Var = "") -> rx.Component:
    """A signed-in page: top bar, then a titled, width-limited main column."""
    return rx.box(
        top_bar(),
        rx.el.main(
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
        ("reversed", rx.badge("reversed", color_scheme="orange")),
        rx.badge(status),
    )
