"""The account's Sessions page (every role): each signed-in browser as its User-Agent
reads, where and when it signed in, when it was last seen; end one, or all but this one."""

import reflex as rx

from portal import routes
from portal.accounts.sessions_state import SessionsState
from portal.components.confirm import confirm_button
from portal.components.layout import card, page
from portal.state.auth import AuthState


def _session(row) -> rx.Component:
    s = SessionsState
    return rx.card(
        rx.flex(
            rx.vstack(
                rx.flex(
                    rx.hstack(
                        rx.icon("monitor-smartphone", size=18, color="var(--gray-10)"),
                        rx.text(row.device, weight="bold"),
                        align="center",
                        spacing="2",
                    ),
                    rx.cond(row.current, rx.badge("This browser", color_scheme="green")),
                    align="center",
                    gap="2",
                    wrap="wrap",
                ),
                rx.text(row.where, size="2", color_scheme="gray", word_break="break-all"),
                rx.text("Signed in " + row.signed_in, size="2", color_scheme="gray"),
                rx.text(row.last_seen, size="2", color_scheme="gray"),
                spacing="1",
                min_width="0",
            ),
            rx.cond(
                row.current,
                rx.button(
                    "Sign out",
                    size="2",
                    variant="soft",
                    color_scheme="gray",
                    on_click=AuthState.logout,
                ),
                rx.button(
                    "End session",
                    size="2",
                    variant="soft",
                    color_scheme="red",
                    on_click=s.end(row.id),
                    loading=s.ending == row.id,
                    disabled=s.ending != "",
                    aria_label="End session: " + row.device,
                ),
            ),
            justify="between",
            align=rx.breakpoints(initial="start", sm="center"),
            direction=rx.breakpoints(initial="column", sm="row"),
            gap="3",
            width="100%",
        ),
        width="100%",
        data_testid="session-row",
    )


def sessions() -> rx.Component:
    s = SessionsState
    return page(
        "Sessions",
        rx.link("← Your account", href=routes.ACCOUNT, size="2"),
        card(
            rx.text(
                "Every browser signed in to your account. Don't recognise one? End it, then "
                "change your password.",
                size="2",
                color_scheme="gray",
            ),
            rx.vstack(rx.foreach(s.rows, _session), spacing="3", width="100%"),
            rx.box(
                confirm_button(
                    "End all other sessions",
                    title="End every other session?",
                    description=(
                        "Every other browser signed in to your account is signed out. This "
                        "one stays signed in."
                    ),
                    confirm="End them",
                    on_confirm=s.end_others,
                    color_scheme="red",
                    variant="soft",
                    loading=s.ending == "others",
                    disabled=(s.others == 0) | (s.ending != ""),
                ),
            ),
        ),
    )
