"""The publisher workspace: application status, offerwall overview (API key, currency),
delivery log. Staff see the same pages for any publisher (`?offerwall=<id>`); the
postback page is portal/pages/postback.py."""

import reflex as rx

from portal import routes
from portal.components.forms import field, form_error
from portal.components.layout import card, empty_state, page, status_badge
from portal.components.tables import data_table, pager
from portal.components.workspace import (
    copyable,
    endpoint_banner,
    password_row,
    rotate_dialog,
    workspace_tabs,
)
from portal.state.postbacks import (
    DeliveryState,
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
                rx.heading(ApplicationState.company, size="5"),
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


def _attempts_panel() -> rx.Component:
    s = DeliveryState
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Postback attempts"),
            rx.vstack(
                rx.hstack(status_badge(s.open_status), rx.code(s.open_url, word_break="break-all")),
                rx.cond(
                    s.attempts.length() > 0,
                    data_table(
                        ("When", "Status", "Time", "Answer or error"),
                        s.attempts,
                        lambda a: [
                            a.started_at,
                            a.status_code,
                            rx.cond(a.sent, a.duration_ms.to_string() + " ms", "not sent"),
                            rx.cond(a.error != "", a.error, a.answer),
                        ],
                        size="1",
                    ),
                    rx.text("No attempt yet.", color_scheme="gray"),
                ),
                rx.hstack(
                    rx.button("Resend now", on_click=s.resend(s.open_id)),
                    rx.dialog.close(
                        rx.button("Close", variant="soft", color_scheme="gray", on_click=s.close)
                    ),
                    justify="end",
                    spacing="3",
                    width="100%",
                ),
                spacing="3",
            ),
            max_width="900px",
        ),
        open=s.open_id != 0,
        on_open_change=lambda _open: s.close(),
    )


def _created(row) -> rx.Component:
    """The day, and the time under it: the log has many columns, and the mission's name
    needs the room more than one line of date and time does."""
    day, time = row.created_at.split(" ")[0], row.created_at.split(" ")[1]
    return rx.vstack(
        rx.text(day, white_space="nowrap"),
        rx.text(time + " UTC", size="1", color_scheme="gray", white_space="nowrap"),
        spacing="0",
    )


def _kind(row) -> rx.Component:
    """Conversion, Reversal, Held or Rejection (the last two for offerwalls that hear of
    reviews), and under it the conversion's status now: a conversion's postback said
    approved, and says reversed here once it was taken back."""
    return rx.vstack(
        rx.match(
            row.kind,
            ("reversal", rx.badge("Reversal", color_scheme="orange")),
            ("held", rx.badge("Held for review", color_scheme="amber")),
            ("rejection", rx.badge("Rejection", color_scheme="red")),
            rx.badge("Conversion", color_scheme="blue"),
        ),
        rx.text(row.conversion_status, size="1", color_scheme="gray"),
        spacing="1",
        data_testid="delivery-kind",
    )


def deliveries() -> rx.Component:
    s = DeliveryState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_DELIVERIES),
        endpoint_banner(s),
        card(
            rx.flex(
                rx.heading("Delivery log", size="4", as_="h2"),
                # Spelled out so the trigger (the control a user reaches) carries the
                # name; the root renders no element of its own.
                rx.select.root(
                    rx.select.trigger(aria_label="Filter by status"),
                    rx.select.content(
                        *[
                            rx.select.item(status.capitalize(), value=status)
                            for status in ("all", "pending", "delivered", "failed")
                        ]
                    ),
                    value=s.status_choice,
                    on_change=s.filter_status,
                    size="2",
                ),
                justify="between",
                align="center",
                width="100%",
            ),
            rx.form(
                rx.hstack(
                    rx.input(
                        name="search",
                        placeholder="Player uid, click id or transaction id",
                        size="2",
                        aria_label="Search by player uid, click id or transaction id",
                        flex="1",
                        max_width="28rem",
                    ),
                    rx.button("Search", type="submit", size="2", variant="soft"),
                    width="100%",
                ),
                on_submit=s.find,
                width="100%",
            ),
            rx.cond(
                s.rows.length() > 0,
                data_table(
                    (
                        "Created",
                        "Kind",
                        "Transaction",
                        "Player",
                        "Mission",
                        "Payout",
                        "Status",
                        "Attempts",
                        "Last answer",
                        "",
                    ),
                    s.rows,
                    lambda r: [
                        _created(r),
                        _kind(r),
                        rx.code(r.transaction_id, size="1"),
                        rx.vstack(
                            rx.text(r.uid, size="2"),
                            rx.cond(
                                r.clickid != "",
                                rx.text("click id " + r.clickid, size="1", color_scheme="gray"),
                            ),
                            spacing="0",
                        ),
                        r.mission,
                        rx.text(r.payout, white_space="nowrap"),
                        status_badge(r.status),
                        r.attempts,
                        r.last_status,
                        rx.button("Open", size="1", variant="soft", on_click=s.open(r.id)),
                    ],
                ),
                empty_state(
                    "inbox", "No postbacks yet", "Each conversion of your users appears here."
                ),
            ),
            pager(s.page, s.pages, s.total, s.go),
        ),
        _attempts_panel(),
    )
