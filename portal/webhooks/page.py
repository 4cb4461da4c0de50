"""A game's webhooks (docs/game-integration.md#webhooks): the Webhooks tab lists the
endpoints and adds one (its signing secret shown once), disables, enables and removes
them; an endpoint's own page sends a test event, rotates the secret after the password,
and keeps the delivery log, where a message opens with its body and attempts and is sent
again, and a time range is replayed. Their states are portal/webhooks/state.py."""

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button, form_dialog
from portal.components.forms import field, field_error, form_error, native_select, submission_count
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page, status_badge
from portal.components.tables import choice_filter, data_table, pager
from portal.components.workspace import (
    WEEK_CHOICES,
    copyable,
    overlap_notice,
    rotate_dialog,
    secret_once,
)
from portal.webhooks.state import TYPES, WebhooksState, WebhookState, type_field


def _endpoint_status(status: rx.Var, reason: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.cond(
            status == "active",
            rx.badge("active", color_scheme="green"),
            rx.badge("disabled", color_scheme="gray"),
        ),
        rx.cond(reason != "", rx.text(reason, size="1", color_scheme="gray")),
        spacing="1",
        data_testid="endpoint-status",
    )


def _url(e: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.link(
            rx.code(e.url, size="1", word_break="break-all"),
            href=routes.webhook(WebhooksState.game_id, e.id),
        ),
        rx.cond(e.description != "", rx.text(e.description, size="1", color_scheme="gray")),
        spacing="1",
        min_width="0",
    )


def _actions(e: rx.Var) -> rx.Component:
    s = WebhooksState
    return rx.hstack(
        rx.link(
            rx.button("Open", size="1", variant="soft", type="button"),
            href=routes.webhook(s.game_id, e.id),
        ),
        rx.cond(
            e.status == "active",
            rx.button(
                "Disable",
                size="1",
                variant="soft",
                color_scheme="gray",
                on_click=s.set_active(e.id, False),
            ),
            rx.button("Enable", size="1", variant="soft", on_click=s.set_active(e.id, True)),
        ),
        confirm_button(
            "Remove",
            title="Remove the endpoint " + e.url + "?",
            description="It is removed with every message to it and their attempts: none of "
            "them is sent. This cannot be undone.",
            confirm="Remove",
            on_confirm=s.remove(e.id),
            size="1",
            color_scheme="red",
            variant="soft",
        ),
        spacing="2",
        wrap="wrap",
    )


def _fresh_secret() -> rx.Component:
    s = WebhooksState
    return rx.callout(
        rx.vstack(
            rx.text(
                "New endpoint ",
                rx.code(s.fresh_url, word_break="break-all"),
                ". Copy its signing secret now: it is not shown again.",
                weight="bold",
            ),
            copyable("Signing secret", s.fresh_secret, "fresh-webhook-secret"),
            rx.button("I have stored it", size="1", variant="soft", on_click=s.dismiss_secret),
            spacing="2",
            min_width="0",
            width="100%",
        ),
        icon="key-round",
        color_scheme="amber",
        width="100%",
    )


def _type_box(index: int, name: str) -> rx.Component:
    return rx.text(
        rx.flex(
            # Its own name: a Radix checkbox is a label of its own, which the outer one
            # cannot name.
            rx.checkbox(name=type_field(index), aria_label=name),
            rx.code(name),
            spacing="2",
            align="center",
        ),
        as_="label",
        size="2",
    )


def _add_form() -> rx.Component:
    s = WebhooksState
    return card(
        rx.heading("Add an endpoint", size="4", as_="h2"),
        rx.form(
            rx.vstack(
                form_error(s.add_errors.get("form", "").to(str)),
                field(
                    "URL",
                    "url",
                    id="webhook-url",
                    placeholder="https://game.example/questwall-hooks",
                    hint="Where Questwall POSTs the messages: http(s), and public.",
                    max_length=2048,
                ),
                field(
                    "Description (optional)",
                    "description",
                    id="webhook-description",
                    required=False,
                    placeholder="e.g. badges on the production server",
                    max_length=300,
                ),
                rx.el.fieldset(
                    rx.el.legend(rx.text("Event types", size="2", weight="medium")),
                    rx.text(
                        "None ticked: every type, and those added later.",
                        size="1",
                        color_scheme="gray",
                    ),
                    rx.grid(
                        *[_type_box(i, t) for i, t in enumerate(TYPES)],
                        columns=rx.breakpoints(initial="1", sm="2", md="3"),
                        spacing="2",
                        margin_top="6px",
                    ),
                    style={"border": "none", "padding": "0", "margin": "0"},
                ),
                submission_count(),
                rx.button("Add endpoint", type="submit", size="2"),
                spacing="3",
                width="100%",
            ),
            on_submit=s.add,
            key=s.add_form_key.to_string(),
            width="100%",
        ),
    )


def webhooks() -> rx.Component:
    s = WebhooksState
    return page(
        s.game_name,
        game_tabs(s, routes.WEBHOOKS),
        rx.cond(s.fresh_secret != "", _fresh_secret()),
        card(
            rx.heading("Webhooks", size="4", as_="h2"),
            rx.text(
                "Questwall POSTs what your players achieve to your own server, signed as "
                "Standard Webhooks says. Open an endpoint for its test events, its secret "
                "and its delivery log.",
                size="2",
                color_scheme="gray",
            ),
            rx.cond(
                s.endpoints.length() > 0,
                data_table(
                    ("Endpoint", "Event types", "Status", ""),
                    s.endpoints,
                    lambda e: [
                        _url(e),
                        rx.text(e.events, size="2"),
                        _endpoint_status(e.status, e.status_reason),
                        _actions(e),
                    ],
                    test_id="webhook-row",
                ),
                empty_state("webhook", "No endpoints yet", "Add your server's URL below."),
            ),
        ),
        _add_form(),
    )


# --- one endpoint -------------------------------------------------------------------


def _test_card() -> rx.Component:
    s = WebhookState
    return card(
        rx.heading("Send a test event", size="4", as_="h2"),
        rx.text(
            "A made-up message of the type chosen, signed with the current secret and sent "
            "now; it is not stored, and its webhook-id starts with test-.",
            size="2",
            color_scheme="gray",
        ),
        rx.flex(
            native_select(
                *[rx.el.option(t, value=t) for t in TYPES],
                value=s.test_type,
                on_change=s.choose_test_type,
                aria_label="Type of the test event",
            ),
            rx.button(
                "Send test event",
                type="button",
                size="2",
                on_click=s.send_test(s.submitted),
                loading=s.sending,
            ),
            spacing="3",
            wrap="wrap",
            align="center",
        ),
        rx.cond(
            s.tested,
            rx.data_list.root(
                rx.data_list.item(
                    rx.data_list.label("Result"),
                    rx.data_list.value(
                        rx.cond(
                            s.test_delivered,
                            rx.badge("delivered", color_scheme="green"),
                            rx.badge("not delivered", color_scheme="red"),
                        ),
                        data_testid="test-result",
                    ),
                ),
                rx.data_list.item(
                    rx.data_list.label("Status"),
                    rx.data_list.value(
                        rx.cond(s.test_status != "", s.test_status, "no answer"),
                        data_testid="test-status",
                    ),
                ),
                rx.data_list.item(rx.data_list.label("Time"), rx.data_list.value(s.test_duration)),
                rx.cond(
                    s.test_error != "",
                    rx.data_list.item(
                        rx.data_list.label("Error"),
                        rx.data_list.value(rx.text(s.test_error, data_testid="test-error")),
                    ),
                ),
                orientation=rx.breakpoints(initial="vertical", sm="horizontal"),
            ),
        ),
    )


def _secret_card() -> rx.Component:
    s = WebhookState
    return card(
        rx.heading("Signing secret", size="4", as_="h2"),
        rx.text(
            "Every message carries a webhook-signature header keyed with this secret "
            "(whsec_…); any Standard Webhooks library checks it. It was shown once, when the "
            "endpoint was added: rotate it for a new one.",
            size="2",
            color_scheme="gray",
        ),
        overlap_notice(s.endpoint.previous_until, "message"),
        rx.cond(
            s.revealed_secret != "",
            secret_once(
                "Your new signing secret", s.revealed_secret, "webhook-secret", s.hide_secret
            ),
        ),
        rotate_dialog(
            "Rotate secret",
            title="Rotate the signing secret?",
            description=(
                "A new secret is issued, shown once, and signs every message from now on. "
                "How long should the current secret also sign?"
            ),
            opened=s.rotating,
            on_open_change=s.open_rotation,
            choice=s.overlap,
            on_choose=s.choose_overlap,
            error=s.rotate_error,
            on_rotate=s.rotate,
            thing="secret",
            choices=WEEK_CHOICES,
        ),
    )


def _created(moment: rx.Var) -> rx.Component:
    """The day, and the time under it (the log has several columns on a laptop)."""
    return rx.vstack(
        rx.text(moment.split(" ")[0], white_space="nowrap"),
        rx.text(moment.split(" ")[1] + " UTC", size="1", color_scheme="gray", white_space="nowrap"),
        spacing="0",
    )


def _delivered(m: rx.Var) -> rx.Component:
    return rx.cond(
        m.delivered_at != "",
        _created(m.delivered_at),
        rx.cond(
            m.next_attempt_at != "",
            rx.text("next try " + m.next_attempt_at, size="1", color_scheme="gray"),
            rx.text("—", color_scheme="gray"),
        ),
    )


def _type_filter() -> rx.Component:
    s = WebhookState
    return native_select(
        rx.el.option("Every type", value="all"),
        *[rx.el.option(t, value=t) for t in TYPES],
        value=s.type_choice,
        on_change=s.filter_type,
        aria_label="Filter by event type",
    )


def _log_card() -> rx.Component:
    s = WebhookState
    return card(
        rx.flex(
            rx.heading("Delivery log", size="4", as_="h2"),
            rx.flex(
                rx.button(
                    rx.icon("refresh-cw", size=14),
                    "Refresh",
                    size="2",
                    variant="soft",
                    on_click=s.refresh,
                ),
                rx.button("Replay a time range", size="2", variant="soft", on_click=s.open_replay),
                spacing="2",
                wrap="wrap",
            ),
            justify="between",
            align="center",
            wrap="wrap",
            spacing="3",
            width="100%",
        ),
        rx.flex(
            _type_filter(),
            choice_filter(s, ("pending", "delivered", "failed"), "Filter by status"),
            spacing="3",
            wrap="wrap",
            align="center",
            width="100%",
        ),
        rx.cond(
            s.rows.length() > 0,
            data_table(
                ("Created", "Type", "Status", "Attempts", "Delivered", "Last answer", ""),
                s.rows,
                lambda m: [
                    _created(m.created_at),
                    rx.code(m.type, size="1"),
                    status_badge(m.status),
                    m.attempts,
                    _delivered(m),
                    m.last_status,
                    rx.button("Open", size="1", variant="soft", on_click=s.open(m.id)),
                ],
                test_id="message-row",
            ),
            rx.cond(
                (s.status_filter != "") | (s.type_filter != ""),
                empty_state("search", "No matches", "No message here matches the filters."),
                empty_state(
                    "inbox",
                    "No messages yet",
                    "Each message to this endpoint appears here: send a test event to check "
                    "the URL meanwhile (test events are not stored).",
                ),
            ),
        ),
        pager(s.page, s.pages, s.total, s.go),
    )


def _message_panel() -> rx.Component:
    s = WebhookState
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Message"),
            rx.cond(
                s.opened,
                rx.vstack(
                    rx.flex(
                        status_badge(s.opened.status),
                        rx.code(s.opened.type),
                        rx.text(
                            "webhook-id ",
                            rx.code(s.opened.message_id, data_testid="open-webhook-id"),
                            size="2",
                            word_break="break-all",
                        ),
                        spacing="2",
                        wrap="wrap",
                        align="center",
                    ),
                    rx.text(
                        "Created " + s.opened.created_at,
                        rx.cond(
                            s.opened.delivered_at != "",
                            ", delivered " + s.opened.delivered_at,
                            "",
                        ),
                        size="2",
                        color_scheme="gray",
                    ),
                    rx.text("Body", size="2", weight="medium"),
                    rx.box(
                        rx.el.pre(
                            s.open_body,
                            style={
                                "whiteSpace": "pre-wrap",
                                "overflowWrap": "anywhere",
                                "margin": "0",
                                "fontSize": "var(--font-size-1)",
                                "fontFamily": "var(--code-font-family)",
                            },
                            data_testid="open-body",
                        ),
                        background="var(--gray-3)",
                        padding="0.75rem",
                        border_radius="6px",
                        width="100%",
                        max_height="40vh",
                        overflow_y="auto",
                    ),
                    rx.text("Attempts", size="2", weight="medium"),
                    rx.cond(
                        s.attempts.length() > 0,
                        data_table(
                            ("When", "Status", "Time", "Answer or error"),
                            s.attempts,
                            lambda a: [
                                a.started_at,
                                rx.cond(a.status_code != "", a.status_code, "no answer"),
                                a.duration_ms.to_string() + " ms",
                                rx.text(
                                    rx.cond(a.error != "", a.error, a.body_excerpt),
                                    size="1",
                                    word_break="break-all",
                                ),
                            ],
                            test_id="attempt-row",
                            size="1",
                        ),
                        rx.text("No attempt yet.", color_scheme="gray", size="2"),
                    ),
                    rx.flex(
                        rx.button("Send again", on_click=s.send_again(s.open_id)),
                        rx.dialog.close(
                            rx.button(
                                "Close", variant="soft", color_scheme="gray", on_click=s.close
                            )
                        ),
                        justify="end",
                        spacing="3",
                        wrap="wrap",
                        width="100%",
                    ),
                    spacing="3",
                    width="100%",
                ),
            ),
            max_width="900px",
        ),
        open=s.open_id != 0,
        on_open_change=lambda _open: s.close(),
    )


def _replay_dialog() -> rx.Component:
    s = WebhookState
    return form_dialog(
        form_error(s.replay_errors.get("form", "").to(str)),
        field(
            "From (UTC)",
            "from",
            id="replay-from",
            type="datetime-local",
            default_value=s.replay_from,
        ),
        field(
            "To (UTC)",
            "to",
            id="replay-to",
            type="datetime-local",
            default_value=s.replay_to,
            hint="At most 7 days after the start, and at most 10,000 messages.",
        ),
        rx.el.label(rx.text("Event type", size="2", weight="medium"), html_for="replay-type"),
        native_select(
            rx.el.option("Every type", value="all"),
            *[rx.el.option(t, value=t) for t in TYPES],
            name="type",
            id="replay-type",
            width="100%",
        ),
        field_error(s.replay_errors, "type"),
        submission_count(),
        title="Replay a time range",
        description=(
            "Every message to this endpoint made in the range is sent again, in the order it "
            "was made, with its own webhook-id: dedupe on it."
        ),
        open=s.replaying,
        submit="Replay",
        on_submit=s.replay,
        on_cancel=s.cancel_replay,
    )


def webhook() -> rx.Component:
    s = WebhookState
    return page(
        s.game_name,
        game_tabs(s, routes.WEBHOOKS),
        rx.link("← All endpoints", href=s.back, size="2"),
        rx.cond(
            s.endpoint,
            rx.vstack(
                card(
                    rx.heading("Endpoint", size="4", as_="h2"),
                    rx.code(s.endpoint.url, word_break="break-all", data_testid="endpoint-url"),
                    rx.cond(
                        s.endpoint.description != "",
                        rx.text(s.endpoint.description, size="2"),
                    ),
                    rx.flex(
                        _endpoint_status(s.endpoint.status, s.endpoint.status_reason),
                        rx.text("Event types: " + s.endpoint.events.to(str), size="2"),
                        spacing="4",
                        wrap="wrap",
                        align="start",
                    ),
                    rx.cond(
                        s.endpoint.status != "active",
                        rx.text(
                            "Disabled: its messages wait (a test event still goes out). "
                            "Enable it on the endpoints list.",
                            size="2",
                            color_scheme="gray",
                        ),
                    ),
                ),
                _test_card(),
                _secret_card(),
                _log_card(),
                spacing="5",
                width="100%",
            ),
            rx.cond(
                s.missing,
                card(
                    empty_state(
                        "webhook",
                        "No such endpoint",
                        "This game has no webhook endpoint here: open one from the list.",
                    )
                ),
            ),
        ),
        _message_panel(),
        _replay_dialog(),
    )
