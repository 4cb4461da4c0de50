"""What every page of a publisher's workspace shares: the tab row staff use inside it, the
banner of a failing or paused postback endpoint, copyable values, and the dialog that
rotates a key or a secret with the grace the old one keeps, after the password again."""

from typing import Any

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button
from portal.components.forms import submission_count
from portal.components.wording import counted
from portal.state.auth import AuthState
from portal.state.workspace import OfferwallScoped


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
                tab("Wall", routes.PUBLISHER_WALL),
                tab("Promotions", routes.PUBLISHER_PROMOTIONS),
                tab("Postback", routes.PUBLISHER_POSTBACK),
                tab("Deliveries", routes.PUBLISHER_DELIVERIES),
                tab("History", routes.PUBLISHER_HISTORY),
                tab("Security log", routes.PUBLISHER_SECURITY),
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


# A numbered list (the theme's reset takes the numbers away).
STEPS_STYLE = {
    "paddingLeft": "1.25rem",
    "margin": "0",
    "listStyleType": "decimal",
    "fontSize": "var(--font-size-2)",
}


def step(*text: Any) -> rx.Component:
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
                rx.text.strong(counted(state.waiting, "postback", "postbacks") + " waiting"),
                ": none is lost, and new ones wait too.",
                size="2",
            ),
            _errors_list(state),
            rx.text("To resume:", size="2", weight="medium"),
            rx.el.ol(
                step(
                    "Fix the postback URL on the ",
                    rx.link("Postback", href=routes.PUBLISHER_POSTBACK + state.query),
                    " page (or the receiver behind it).",
                ),
                step("Send a test postback from there and check that it answers 2xx."),
                step(
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


def copyable(label: str, value: rx.Var, test_id: str) -> rx.Component:
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


# The grace a replaced key or secret keeps (api/services/endpoints.OVERLAP), in words.
GRACE_CHOICES = (("none", "None: the old {} stops now"), ("1h", "1 hour"), ("24h", "24 hours"))
# A webhook endpoint's secret may also keep signing for a week (api/webhooks OVERLAP).
WEEK_CHOICES = (*GRACE_CHOICES, ("7d", "7 days"))


def overlap_notice(until: rx.Var, what: str) -> rx.Component:
    """While a rotated secret's overlap lasts: until when the previous one also signs
    (`what`: "postback", "message")."""
    return rx.cond(
        until != "",
        rx.callout(
            "The previous secret also signs until "
            + until.to(str)
            + f": each {what} carries both signatures until then, so deploy the new one.",
            icon="clock",
            color_scheme="amber",
            width="100%",
            data_testid="previous-secret-until",
        ),
    )


def secret_once(label: str, secret: rx.Var, test_id: str, on_hide: Any) -> rx.Component:
    """A secret shown once, with its copy button, the warning and a Hide button."""
    return rx.vstack(
        copyable(label, secret, test_id),
        rx.callout(
            "Copy it now: it is not shown again. Lost it? Rotate it for a new one.",
            icon="info",
            width="100%",
        ),
        rx.button("Hide", variant="soft", size="2", on_click=on_hide),
        width="100%",
    )


def _grace_option(value: str, text: str) -> rx.Component:
    """One choice of the rotate dialog; its label names the radio button."""
    return rx.text(
        rx.flex(rx.radio_group.item(value=value), text, spacing="2", align="center"),
        as_="label",
        size="2",
    )


def rotate_dialog(
    label: str,
    *,
    title: str,
    description: str,
    opened: rx.Var,
    on_open_change: Any,
    choice: rx.Var,
    on_choose: Any,
    error: rx.Var,
    on_rotate: Any,
    thing: str,
    choices: tuple[tuple[str, str], ...] = GRACE_CHOICES,
) -> rx.Component:
    """A rotate button whose dialog asks how long the replaced `thing` (key, secret)
    keeps working (`choices`: none, 1 hour, 24 hours; a webhook's secret a week too) and
    the user's password, as a reveal does: a rotation shows the new value. Rotate stays
    off until a grace is picked, so nobody cuts off their servers, or keeps a leaked one
    alive, by a default. The dialog stays
    open on a refusal (`error`, e.g. a wrong password) and closes when the state says so
    (`opened`); `on_open_change` gets the new openness and clears the pick and error."""
    return rx.alert_dialog.root(
        rx.alert_dialog.trigger(
            rx.button(label, type="button", color_scheme="red", variant="soft", size="2")
        ),
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(description, size="2"),
            # The pick sits outside the form, whose reset (clearing the password after a
            # refusal) would clear it too; a hidden input sends it.
            rx.radio_group.root(
                rx.vstack(
                    *[_grace_option(value, text.format(thing)) for value, text in choices],
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
            rx.form(
                submission_count(),
                rx.el.input(type="hidden", name="grace", value=choice),
                rx.text(
                    f"Enter your password to see the new {thing}.",
                    size="2",
                    margin_top="12px",
                    margin_bottom="4px",
                ),
                password_input(),
                rx.cond(
                    error != "",
                    rx.text(error, color_scheme="red", size="2", role="alert", margin_top="4px"),
                ),
                rx.flex(
                    rx.alert_dialog.cancel(
                        rx.button("Cancel", type="button", variant="soft", color_scheme="gray")
                    ),
                    rx.button("Rotate", type="submit", color_scheme="red", disabled=choice == ""),
                    spacing="3",
                    margin_top="16px",
                    justify="end",
                ),
                on_submit=on_rotate,
                reset_on_submit=True,
            ),
            max_width="440px",
        ),
        open=opened,
        on_open_change=on_open_change,
    )


def password_input() -> rx.Component:
    """The password a reveal or a rotation asks for again; not needed (it may stay empty)
    while it was entered in this session within the last ten minutes."""
    return rx.input(
        name="password",
        type="password",
        placeholder=rx.cond(
            AuthState.password_fresh, "Entered lately: not needed", "Your password"
        ),
        required=~AuthState.password_fresh,
        aria_label="Your password",
        auto_complete="current-password",
        size="2",
    )


def password_row(button: str) -> rx.Component:
    """The password input and the button that reveals a secret after it (the API key, the
    signing secret): the same sign-in limit guards both, and the rotations, on the server."""
    return rx.hstack(
        password_input(),
        rx.button(button, type="submit", size="2"),
        wrap="wrap",
    )


# A phone's width: the wall previews beside the workspace's forms are drawn at it.
PHONE_WIDTH = "390px"


def beside_preview(form: rx.Component, preview: rx.Component) -> rx.Component:
    """A form with the wall's preview at a phone's width beside it (under it on a phone)."""
    return rx.grid(
        form,
        preview,
        grid_template_columns=rx.breakpoints(
            initial="minmax(0, 1fr)", md=f"minmax(0, 1fr) calc({PHONE_WIDTH} + 3rem)"
        ),
        spacing="5",
        width="100%",
        align_items="start",
    )
