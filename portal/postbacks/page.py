"""The publisher's postbacks: the Postback page (the postback and reversal URLs with their
live preview and test postback, the signing secret: shown once, then rotated) and the
Deliveries page (the delivery log, each postback's attempts, resend). Staff see both for
any publisher (`?offerwall=<id>`)."""

import reflex as rx

from api.postbacks import LEGACY, MACROS
from portal import routes
from portal.components.forms import form_error, submission_count
from portal.components.layout import card, empty_state, page, status_badge
from portal.components.players import marked_test, players_filter
from portal.components.tables import data_table, pager
from portal.components.workspace import (
    STEPS_STYLE,
    endpoint_banner,
    overlap_notice,
    password_row,
    rotate_dialog,
    secret_once,
    step,
    workspace_tabs,
)
from portal.postbacks.state import (
    EXAMPLE_REVERSAL,
    EXAMPLE_TEMPLATE,
    DeliveryState,
    PostbackState,
)


def postback() -> rx.Component:
    s = PostbackState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_POSTBACK),
        endpoint_banner(s),
        card(
            rx.heading("Postback URL", size="4", as_="h2"),
            rx.text(
                "Questwall requests this URL (GET) for every conversion, filling in the macros.",
                size="2",
                color_scheme="gray",
            ),
            rx.form(
                rx.vstack(
                    form_error(s.error),
                    rx.el.label(rx.text("URL", size="2", weight="medium"), html_for="postback_url"),
                    rx.text_area(
                        name="postback_url",
                        id="postback_url",
                        default_value=s.saved_url,
                        key=s.saved_url,
                        placeholder=EXAMPLE_TEMPLATE,
                        on_change=s.edit.debounce(250),
                        rows="3",
                        width="100%",
                        font_family="monospace",
                    ),
                    rx.cond(
                        s.unknown.length() > 0,
                        rx.callout(
                            rx.text(
                                "Unknown macros stay as written: ",
                                rx.foreach(s.unknown, lambda m: rx.code("{" + m + "} ")),
                            ),
                            icon="triangle-alert",
                            color_scheme="amber",
                            width="100%",
                            data_testid="unknown-macros",
                        ),
                    ),
                    _reversal_field(),
                    rx.hstack(
                        rx.button("Save", type="submit", size="2"),
                        rx.button(
                            "Send test postback",
                            type="button",
                            variant="soft",
                            size="2",
                            on_click=s.send_test(s.submitted),
                            loading=s.sending,
                            disabled=s.saved_url == "",
                        ),
                        spacing="3",
                    ),
                    width="100%",
                ),
                on_submit=s.save,
                data_unsaved_guard=True,
                width="100%",
            ),
            rx.cond(
                s.preview != "",
                rx.vstack(
                    rx.text("Preview of a sample postback", size="2", weight="medium"),
                    rx.code(s.preview, word_break="break-all", data_testid="preview", width="100%"),
                    width="100%",
                ),
            ),
        ),
        rx.cond(
            s.tested,
            card(
                rx.heading("Test postback", size="4", as_="h2"),
                rx.data_list.root(
                    rx.data_list.item(
                        rx.data_list.label("Request"),
                        rx.data_list.value(rx.code(s.test_url, word_break="break-all")),
                    ),
                    rx.data_list.item(
                        rx.data_list.label("Status"),
                        rx.data_list.value(rx.text(s.test_status, data_testid="test-status")),
                    ),
                    rx.data_list.item(
                        rx.data_list.label("Latency"), rx.data_list.value(s.test_latency)
                    ),
                    rx.data_list.item(
                        rx.data_list.label("Answer"),
                        rx.data_list.value(rx.code(s.test_answer, data_testid="test-answer")),
                    ),
                    rx.cond(
                        s.test_error != "",
                        rx.data_list.item(
                            rx.data_list.label("Error"), rx.data_list.value(s.test_error)
                        ),
                    ),
                ),
            ),
        ),
        _signing_secret_card(),
        card(
            rx.heading("Macros", size="4", as_="h2"),
            rx.flex(*[rx.code("{" + m + "}") for m in MACROS], wrap="wrap", gap="2"),
            rx.text(
                "Also accepted (older names): " + ", ".join("{" + m + "}" for m in sorted(LEGACY)),
                size="2",
                color_scheme="gray",
            ),
            rx.text(
                "Without a {hash_key} macro, hash_key is appended as a query parameter.",
                size="2",
                color_scheme="gray",
            ),
        ),
    )


def _reversal_field() -> rx.Component:
    s = PostbackState
    return rx.vstack(
        rx.el.label(
            rx.text("Reversal URL (optional)", size="2", weight="medium"),
            html_for="reversal_url",
        ),
        rx.input(
            name="reversal_url",
            id="reversal_url",
            default_value=s.saved_reversal_url,
            key=s.saved_reversal_url,
            placeholder=EXAMPLE_REVERSAL,
            size="2",
            width="100%",
            font_family="monospace",
            aria_describedby="reversal_url-hint",
        ),
        rx.text(
            "Where reversals go when a conversion is taken back (same macros, with {status} "
            "reversed and the {reason}). Empty: reversals go to the postback URL above, with "
            "status=reversed added when it has no {status} macro.",
            size="1",
            color_scheme="gray",
            id="reversal_url-hint",
        ),
        spacing="1",
        width="100%",
    )


def _signing_secret_card() -> rx.Component:
    s = PostbackState
    return card(
        rx.heading("Signing secret", size="4", as_="h2"),
        rx.text(
            "Every postback carries a ",
            rx.code("Questwall-Signature"),
            " header: an HMAC-SHA256 of the time and the URL, keyed with this secret "
            "(qw_ps_…, not your API key). Check it and you know a postback came from Questwall.",
            size="2",
            color_scheme="gray",
        ),
        rx.el.details(
            rx.el.summary(rx.text("How to check it", size="2", weight="medium", as_="span")),
            rx.el.ol(
                step(
                    "Split the header on commas: take ",
                    rx.code("t"),
                    " (Unix seconds) and every ",
                    rx.code("v1"),
                    ".",
                ),
                step("Refuse it when t is more than 5 minutes from your clock."),
                step(
                    "Compute the HMAC-SHA256, keyed with the secret, of t, a dot and the URL as "
                    "requested (scheme, host, path and query), in lowercase hex; one v1 must "
                    "match (compare in constant time)."
                ),
                style={**STEPS_STYLE, "margin": "0.5rem 0"},
            ),
            rx.text(
                "The integration guide has the details and receivers in Python, Node.js and "
                "PHP (publisher integration, section Signatures).",
                size="1",
                color_scheme="gray",
            ),
        ),
        overlap_notice(s.previous_secret_until, "postback"),
        rx.cond(
            s.revealed_secret != "",
            secret_once("Your signing secret", s.revealed_secret, "signing-secret", s.hide_secret),
            rx.cond(
                s.secret_shown_at != "",
                rx.text(
                    "Shown on "
                    + s.secret_shown_at
                    + ". It is not shown again: rotate it to get a new one.",
                    size="2",
                    data_testid="secret-shown-at",
                ),
                rx.form(
                    submission_count(),
                    password_row("Show signing secret"),
                    rx.text(
                        "It is shown once: have somewhere safe to keep it.",
                        size="1",
                        color_scheme="gray",
                    ),
                    rx.cond(
                        s.secret_error != "",
                        rx.text(s.secret_error, color_scheme="red", size="2", role="alert"),
                    ),
                    on_submit=s.reveal_secret,
                    reset_on_submit=True,
                ),
            ),
        ),
        rotate_dialog(
            "Rotate secret",
            title="Rotate the signing secret?",
            description=(
                "A new secret is issued and shown once, and signs every postback from now on. "
                "How long should the current secret also sign?"
            ),
            opened=s.rotating_secret,
            on_open_change=s.open_secret_rotation,
            choice=s.secret_overlap,
            on_choose=s.choose_secret_overlap,
            error=s.rotate_secret_error,
            on_rotate=s.rotate_secret,
            thing="secret",
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
        marked_test(row.test),
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
                rx.flex(
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
                    players_filter(s, "Filter by player: real or test"),
                    spacing="2",
                    align="center",
                    wrap="wrap",
                ),
                justify="between",
                align="center",
                wrap="wrap",
                gap="2",
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
