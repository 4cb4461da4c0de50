"""The publisher's own workspace: application status, offerwall overview (API key,
currency). Staff see the same pages for any publisher (`?offerwall=<id>`); the postback
page and the delivery log are portal/postbacks/page.py, the Wall page
portal/publishers/wall.py, and staff's list of every publisher portal/publishers/publishers.py."""

import reflex as rx

from portal import routes
from portal.components.forms import field, form_error
from portal.components.layout import card, page, status_badge
from portal.components.workspace import (
    copyable,
    endpoint_banner,
    password_row,
    rotate_dialog,
    workspace_tabs,
)
from portal.state.workspace import ApplicationState, WorkspaceState


def application() -> rx.Component:
    return page(
        "Your application",
        # While the application waits, the page looks for the decision every 5 seconds.
        rx.moment(
            interval=rx.cond(ApplicationState.status == "pending", 5000, 0),
            on_change=ApplicationState.load,
            display="none",
        ),
        card(
            rx.hstack(
                rx.heading(ApplicationState.company, size="5", as_="h2"),
                status_badge(ApplicationState.status),
            ),
            rx.match(
                ApplicationState.status,
                (
                    "pending",
                    rx.text(
                        "Thank you for applying. Our staff review applications within two working days; "
                        "this page shows the decision as soon as it is made."
                    ),
                ),
                (
                    "rejected",
                    rx.vstack(
                        rx.text("We could not approve your application."),
                        rx.callout(
                            ApplicationState.reason, icon="info", color_scheme="red", width="100%"
                        ),
                    ),
                ),
                (
                    "suspended",
                    rx.text(
                        "Your offerwall is suspended: its API key does not work and no offers are listed. "
                        "Contact us to have it reinstated."
                    ),
                ),
                rx.fragment(),
            ),
        ),
    )


def overview() -> rx.Component:
    s = WorkspaceState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER),
        endpoint_banner(s),
        card(
            rx.hstack(rx.heading("Offerwall", size="4", as_="h2"), status_badge(s.status)),
            copyable("Offerwall id (owid)", s.owid, "owid"),
            copyable("Tracking link", s.tracking_link, "tracking-link"),
            rx.text(
                "The offers API returns each offer's link ready to use; replace {uid} with your user's id.",
                size="2",
                color_scheme="gray",
            ),
        ),
        _api_key_card(),
        _currency_card(),
        rx.hstack(
            rx.link(
                rx.icon("history", size=14), "History", href=routes.PUBLISHER_HISTORY + s.query
            ),
            rx.link(
                rx.icon("shield", size=14),
                "Security log",
                href=routes.PUBLISHER_SECURITY + s.query,
            ),
            spacing="4",
            wrap="wrap",
            data_testid="workspace-records",
        ),
    )


def _api_key_card() -> rx.Component:
    s = WorkspaceState
    return card(
        rx.heading("API key", size="4", as_="h2"),
        rx.text(
            "Send it as the ",
            rx.code("X-API-Key"),
            " header to ",
            rx.code("GET /offerwall/offers"),
            ". It also signs your postbacks (hash_key).",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.revealed_key != "",
            rx.vstack(
                copyable("Your API key", s.revealed_key, "api-key"),
                rx.button("Hide", variant="soft", size="2", on_click=s.hide_key),
            ),
            rx.form(
                password_row("Reveal key"),
                rx.cond(
                    s.reveal_error != "",
                    rx.text(s.reveal_error, color_scheme="red", size="2", role="alert"),
                ),
                on_submit=s.reveal_key,
                reset_on_submit=True,
            ),
        ),
        rx.cond(
            s.previous_key_until != "",
            rx.callout(
                "Your previous key works until "
                + s.previous_key_until
                + ". Move every server to the new key before then; after it, the old key gets 401.",
                icon="clock",
                color_scheme="amber",
                width="100%",
                data_testid="previous-key-until",
            ),
        ),
        rotate_dialog(
            "Rotate key",
            title="Rotate the API key?",
            description=(
                "A new key is issued and shown once. Offer requests and new postback hashes "
                "use it from now on. How long should the current key keep working?"
            ),
            opened=s.rotating_key,
            on_open_change=s.open_key_rotation,
            choice=s.key_grace,
            on_choose=s.choose_key_grace,
            error=s.rotate_key_error,
            on_rotate=s.rotate_key,
            thing="key",
        ),
    )


def _currency_card() -> rx.Component:
    s = WorkspaceState
    return card(
        rx.heading("Currency", size="4", as_="h2"),
        rx.text(
            "Payouts in offers and postbacks are USD × exchange rate, rounded to the decimals.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.vstack(
                form_error(s.currency_error),
                rx.grid(
                    field(
                        "Name", "currency_name", default_value=s.currency_name, key=s.currency_name
                    ),
                    field(
                        "Code",
                        "currency_code",
                        default_value=s.currency_code,
                        max_length=3,
                        key=s.currency_code,
                    ),
                    field(
                        "Units per USD",
                        "exchange_rate",
                        default_value=s.exchange_rate,
                        key=s.exchange_rate,
                        input_mode="decimal",
                    ),
                    field(
                        "Decimals",
                        "decimals",
                        default_value=s.decimals,
                        type="number",
                        min=0,
                        max=8,
                        key=s.decimals,
                    ),
                    columns=rx.breakpoints(initial="1", sm="2", md="4"),
                    spacing="3",
                    width="100%",
                ),
                rx.button("Save currency", type="submit", size="2"),
                width="100%",
            ),
            on_submit=s.save_currency,
            data_unsaved_guard=True,
            width="100%",
        ),
    )
