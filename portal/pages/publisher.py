"""The publisher workspace: application status, offerwall overview, postback editor,
delivery log. Staff see the same pages for any publisher (`?offerwall=<id>`)."""

from typing import Any

import reflex as rx

from api.services.postback_url import LEGACY, MACROS
from portal import routes
from portal.components.confirm import confirm_button
from portal.components.forms import field, form_error, submission_count
from portal.components.layout import card, empty_state, page, status_badge
from portal.components.tables import data_table, pager
from portal.state.postbacks import (
    EXAMPLE_REVERSAL,
    EXAMPLE_TEMPLATE,
    DeliveryState,
    PostbackState,
)
from portal.state.workspace import ApplicationState, OfferwallScoped, WorkspaceState


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


def workspace_tabs(state: type[OfferwallScoped], current: str) -> rx.Component:
    def tab(label: str, href: str) -> rx.Component:
        return rx.link(
            rx.button(label, variant="solid" if href == current else "soft", size="2"),
            href=href + state.query,
        )

    # Staff moving between one publisher's pages; a publisher has the navigation.
    return rx.cond(
        state.staff_view,
        rx.vstack(
            rx.callout(
                rx.hstack(
                    rx.text("You are viewing this publisher as staff."),
                    rx.link("Back to publishers", href=routes.STAFF_PUBLISHERS),
                    spacing="2",
                    wrap="wrap",
                ),
                icon="shield",
                width="100%",
            ),
            rx.hstack(
                tab("Offerwall", routes.PUBLISHER),
                tab("Offers", routes.PUBLISHER_OFFERS),
                tab("Postback", routes.PUBLISHER_POSTBACK),
                tab("Deliveries", routes.PUBLISHER_DELIVERIES),
                spacing="2",
                wrap="wrap",
            ),
            width="100%",
        ),
    )


def endpoint_banner(state: type[OfferwallScoped]) -> rx.Component:
    """At the top of every workspace page: deliveries paused (what waits, the last errors,
    what to do, Resume), or a milder warning while attempts fail but nothing is paused."""
    return rx.cond(
        state.paused_since != "",
        _paused_banner(state),
        rx.cond(state.failures > 0, _failing_banner(state)),
    )


def _postbacks(count: rx.Var) -> rx.Var:
    return rx.cond(count == 1, "1 postback", count.to_string() + " postbacks")


# A numbered list (the theme's reset takes the numbers away).
STEPS_STYLE = {
    "paddingLeft": "1.25rem",
    "margin": "0",
    "listStyleType": "decimal",
    "fontSize": "var(--font-size-2)",
}


def _step(*text: Any) -> rx.Component:
    return rx.el.li(rx.text(*text, size="2"))


def _paused_banner(state: type[OfferwallScoped]) -> rx.Component:
    return rx.callout.root(
        rx.callout.icon(rx.icon("circle-pause")),
        rx.vstack(
            rx.heading("Postbacks are paused", size="4", as_="h2"),
            rx.text(
                "Every delivery attempt has failed since "
                + state.failing_since
                + ", so deliveries were paused on "
                + state.paused_since
                + ". ",
                rx.text.strong(_postbacks(state.waiting) + " waiting"),
                ": none is lost, and new ones wait too.",
                size="2",
            ),
            _errors_list(state),
            rx.text("To resume:", size="2", weight="medium"),
            rx.el.ol(
                _step(
                    "Fix the postback URL on the ",
                    rx.link("Postback", href=routes.PUBLISHER_POSTBACK + state.query),
                    " page (or the receiver behind it).",
                ),
                _step("Send a test postback from there and check that it answers 2xx."),
                _step(
                    "Resume deliveries: what waits goes out in the order it was made, "
                    "to the postback URL saved then."
                ),
                style=STEPS_STYLE,
            ),
            confirm_button(
                "Resume deliveries",
                title="Resume deliveries?",
                description=(
                    "Every waiting postback goes out again, in the order it was made, a few a "
                    "second, to the postback URL saved now. If it still fails, deliveries "
                    "pause again."
                ),
                confirm="Resume",
                on_confirm=OfferwallScoped.resume_deliveries(state.submitted),
                size="2",
            ),
            spacing="2",
            width="100%",
            min_width="0",
        ),
        color_scheme="red",
        variant="surface",
        width="100%",
        data_testid="paused-banner",
    )


def _errors_list(state: type[OfferwallScoped]) -> rx.Component:
    """The latest failed attempts, newest first: when, the answer, and what it said."""
    return rx.cond(
        state.last_errors.length() > 0,
        rx.vstack(
            rx.text("Last errors", size="2", weight="medium"),
            rx.foreach(
                state.last_errors,
                lambda e: rx.text(
                    rx.text.span(e.at, color_scheme="gray"),
                    " · ",
                    rx.text.strong(e.answer),
                    rx.cond(e.detail != "", rx.text.span(" · " + e.detail)),
                    size="2",
                    data_testid="endpoint-error",
                ),
            ),
            spacing="1",
            width="100%",
        ),
    )


def _failing_banner(state: type[OfferwallScoped]) -> rx.Component:
    latest = state.last_errors[0]
    return rx.callout.root(
        rx.callout.icon(rx.icon("triangle-alert")),
        rx.vstack(
            rx.text(
                rx.text.strong(
                    rx.cond(
                        state.failures == 1,
                        "The last delivery attempt failed",
                        "The last " + state.failures.to_string() + " delivery attempts failed",
                    )
                ),
                " (since " + state.failing_since + ")",
                rx.cond(
                    state.last_errors.length() > 0,
                    rx.text.span(
                        "; the latest: ",
                        rx.text.strong(latest.answer),
                        rx.cond(latest.detail != "", " (" + latest.detail + ")", ""),
                    ),
                ),
                ". Questwall retries them. If every attempt keeps failing for "
                + state.pause_after
                + ", deliveries pause until they are resumed. Check the postback URL and send "
                "a test postback from the ",
                rx.link("Postback", href=routes.PUBLISHER_POSTBACK + state.query),
                " page.",
                size="2",
            ),
            spacing="1",
            width="100%",
            min_width="0",
        ),
        color_scheme="amber",
        width="100%",
        data_testid="failing-banner",
    )


def _copyable(label: str, value: rx.Var, test_id: str) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        rx.hstack(
            rx.code(value, size="3", data_testid=test_id, word_break="break-all"),
            rx.icon_button(
                rx.icon("copy", size=14),
                size="1",
                variant="ghost",
                aria_label=f"Copy {label.lower()}",
                on_click=[rx.set_clipboard(value), rx.toast.info("Copied.")],
            ),
            align="center",
        ),
        spacing="1",
        width="100%",
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
                _copyable("Your API key", s.revealed_key, "api-key"),
                rx.button("Hide", variant="soft", size="2", on_click=s.hide_key),
            ),
            rx.form(
                rx.hstack(
                    rx.input(
                        name="password",
                        type="password",
                        placeholder="Your password",
                        required=True,
                        aria_label="Your password",
                        auto_complete="current-password",
                        size="2",
                    ),
                    rx.button("Reveal key", type="submit", size="2"),
                    wrap="wrap",
                ),
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
        _rotate_dialog(
            "Rotate key",
            title="Rotate the API key?",
            description=(
                "A new key is issued and shown once. Offer requests and new postback hashes "
                "use it from now on. How long should the current key keep working?"
            ),
            choice=s.key_grace,
            on_choose=s.choose_key_grace,
            on_rotate=s.rotate_key(s.key_grace, s.submitted),
            thing="key",
        ),
    )


# The grace a replaced key or secret keeps (api/services/endpoints.OVERLAP), in words.
GRACE_CHOICES = (("none", "None: the old {} stops now"), ("1h", "1 hour"), ("24h", "24 hours"))


def _grace_option(value: str, text: str) -> rx.Component:
    """One choice of the rotate dialog; its label names the radio button."""
    return rx.text(
        rx.flex(rx.radio_group.item(value=value), text, spacing="2", align="center"),
        as_="label",
        size="2",
    )


def _rotate_dialog(
    label: str,
    *,
    title: str,
    description: str,
    choice: rx.Var,
    on_choose: Any,
    on_rotate: Any,
    thing: str,
) -> rx.Component:
    """A rotate button whose dialog asks how long the replaced `thing` (key, secret)
    keeps working (none, 1 hour, 24 hours); Rotate stays off until one is picked, so
    nobody cuts off their servers, or keeps a leaked one alive, by a default."""
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(
            rx.button(
                label,
                type="button",
                color_scheme="red",
                variant="soft",
                size="2",
                on_click=on_choose(""),
            )
        ),
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(description, size="2"),
            rx.radio_group.root(
                rx.vstack(
                    *[_grace_option(value, text.format(thing)) for value, text in GRACE_CHOICES],
                    spacing="2",
                ),
                value=choice,
                on_change=on_choose,
                aria_label="How long the current one keeps working",
                margin_top="12px",
            ),
            rx.text(
                f"Choose none if the {thing} leaked: nobody can use it after this.",
                size="1",
                color_scheme="gray",
                margin_top="8px",
            ),
            rx.flex(
                rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(
                    rx.button(
                        "Rotate", color_scheme="red", disabled=choice == "", on_click=on_rotate
                    )
                ),
                spacing="3",
                margin_top="16px",
                justify="end",
            ),
            max_width="440px",
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


def overview() -> rx.Component:
    s = WorkspaceState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER),
        endpoint_banner(s),
        card(
            rx.hstack(rx.heading("Offerwall", size="4", as_="h2"), status_badge(s.status)),
            _copyable("Offerwall id (owid)", s.owid, "owid"),
            _copyable("Tracking link", s.tracking_link, "tracking-link"),
            rx.text(
                "The offers API returns each offer's link ready to use; replace {uid} with your user's id.",
                size="2",
                color_scheme="gray",
            ),
        ),
        _api_key_card(),
        _currency_card(),
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
                _step(
                    "Split the header on commas: take ",
                    rx.code("t"),
                    " (Unix seconds) and every ",
                    rx.code("v1"),
                    ".",
                ),
                _step("Refuse it when t is more than 5 minutes from your clock."),
                _step(
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
        rx.cond(
            s.previous_secret_until != "",
            rx.callout(
                "The previous secret also signs until "
                + s.previous_secret_until
                + ": each postback carries both signatures until then, so deploy the new one.",
                icon="clock",
                color_scheme="amber",
                width="100%",
                data_testid="previous-secret-until",
            ),
        ),
        rx.cond(
            s.revealed_secret != "",
            rx.vstack(
                _copyable("Your signing secret", s.revealed_secret, "signing-secret"),
                rx.callout(
                    "Copy it now: it is not shown again. Lost it? Rotate it for a new one.",
                    icon="info",
                    width="100%",
                ),
                rx.button("Hide", variant="soft", size="2", on_click=s.hide_secret),
                width="100%",
            ),
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
                    rx.hstack(
                        rx.input(
                            name="password",
                            type="password",
                            placeholder="Your password",
                            required=True,
                            aria_label="Your password",
                            auto_complete="current-password",
                            size="2",
                        ),
                        rx.button("Show signing secret", type="submit", size="2"),
                        wrap="wrap",
                    ),
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
        _rotate_dialog(
            "Rotate secret",
            title="Rotate the signing secret?",
            description=(
                "A new secret is issued and shown once, and signs every postback from now on. "
                "How long should the current secret also sign?"
            ),
            choice=s.secret_overlap,
            on_choose=s.choose_secret_overlap,
            on_rotate=s.rotate_secret(s.secret_overlap, s.submitted),
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
    """Conversion or Reversal, and under it the conversion's status now: a conversion's
    postback said approved, and says reversed here once it was taken back."""
    return rx.vstack(
        rx.cond(
            row.kind == "reversal",
            rx.badge("Reversal", color_scheme="orange"),
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
