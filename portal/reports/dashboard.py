"""The staff dashboard: what needs attention, each card with the page that deals with it:
applications, today's figures, support tickets, paused and failing postbacks, and the
alerts ALERT_WEBHOOK_URL did not take (sent again from here)."""

import reflex as rx

from portal import routes
from portal.components.layout import card, page, status_badge
from portal.components.wording import counted
from portal.reports.dashboard_state import DashboardState


def _card(title: str, *children: rx.Component, test_id: str) -> rx.Component:
    return card(rx.heading(title, size="4", as_="h2"), *children, data_testid=test_id)


def _figure(label: str, value: rx.Var, test_id: str) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="2", color_scheme="gray"),
        rx.text(value, size="7", weight="bold", data_testid=test_id),
        spacing="0",
    )


def _link(text: str, href) -> rx.Component:
    return rx.link(
        rx.hstack(rx.text(text), rx.icon("arrow-right", size=14), align="center"),
        href=href,
        size="2",
        weight="medium",
    )


def _pending() -> rx.Component:
    s = DashboardState
    return _card(
        "Applications",
        _figure("Waiting for a decision", s.pending, "pending-applications"),
        _link("Review applications", routes.publishers_with_status("pending")),
        test_id="card-applications",
    )


def _tickets() -> rx.Component:
    s = DashboardState
    return _card(
        "Support tickets",
        _figure("Waiting for an answer", s.open_tickets, "open-tickets"),
        _link("Answer tickets", routes.TICKETS + "?status=open"),
        test_id="card-tickets",
    )


def _today() -> rx.Component:
    t = DashboardState.today
    return _card(
        "Today",
        rx.text(DashboardState.day + " (UTC)", size="2", color_scheme="gray"),
        rx.cond(
            t,
            rx.flex(
                _figure("Clicks", t.clicks, "today-clicks"),
                _figure("Conversions", t.conversions, "today-conversions"),
                _figure("Payout", t.payout, "today-payout"),
                _figure("Net payout", t.net_payout, "today-net-payout"),
                spacing="5",
                wrap="wrap",
            ),
        ),
        _link("Open today's report", routes.REPORTS + "?preset=today"),
        test_id="card-today",
    )


def _failing_row(row) -> rx.Component:
    status = rx.cond(row.failed > 0, "failed", "pending")
    return rx.flex(
        rx.vstack(
            rx.text(row.company, weight="medium"),
            rx.text(
                row.retrying.to_string()
                + " retrying · "
                + row.failed.to_string()
                + " failed · latest "
                + row.last_due,
                size="1",
                color_scheme="gray",
            ),
            spacing="0",
        ),
        _link("Delivery log", routes.deliveries(row.offerwall_id, "") + "&status=" + status),
        justify="between",
        align="center",
        spacing="3",
        wrap="wrap",
        width="100%",
        data_testid="failing-endpoint",
    )


def _failing() -> rx.Component:
    s = DashboardState
    return _card(
        "Failing postbacks",
        rx.cond(
            s.failing.length() > 0,
            rx.vstack(
                rx.text(
                    "Publishers whose postbacks are being retried or failed in the last 24 hours.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.foreach(s.failing, _failing_row),
                spacing="3",
                width="100%",
            ),
            rx.text("Every publisher's postbacks are going through.", color_scheme="gray"),
        ),
        test_id="card-failing",
    )


def _paused_row(row) -> rx.Component:
    return rx.flex(
        rx.vstack(
            rx.text(row.company, weight="medium"),
            rx.text(
                "paused since "
                + row.paused_since
                + " · "
                + row.queued.to_string()
                + " queued · "
                + counted(row.failures, "failure", "failures")
                + " in a row",
                size="1",
                color_scheme="gray",
            ),
            spacing="0",
        ),
        _link("Workspace", routes.PUBLISHER_POSTBACK + routes.offerwall_query(row.offerwall_id)),
        justify="between",
        align="center",
        spacing="3",
        wrap="wrap",
        width="100%",
        data_testid="paused-endpoint",
    )


def _paused() -> rx.Component:
    s = DashboardState
    return _card(
        "Paused postbacks",
        rx.cond(
            s.paused.length() > 0,
            rx.vstack(
                rx.text(
                    "Every attempt failed for a long time: their postbacks wait until the "
                    "publisher, or you in their workspace, fix the URL and resume.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.foreach(s.paused, _paused_row),
                spacing="3",
                width="100%",
            ),
            rx.text("No publisher's deliveries are paused.", color_scheme="gray"),
        ),
        test_id="card-paused",
    )


def _alert_attempt(attempt) -> rx.Component:
    return rx.el.li(
        rx.text(
            attempt.started_at + " · " + attempt.answer + " · " + attempt.duration,
            size="1",
            weight="medium",
        ),
        rx.cond(
            attempt.reply != "",
            rx.code(attempt.reply, size="1", word_break="break-all", white_space="pre-wrap"),
        ),
        data_testid="alert-attempt",
    )


def _alert_row(row) -> rx.Component:
    return rx.flex(
        rx.vstack(
            rx.hstack(
                rx.code(row.event, size="2"),
                rx.match(
                    row.status,
                    ("queued", rx.badge("retrying", color_scheme="amber")),
                    status_badge(row.status),
                ),
                spacing="2",
                align="center",
                wrap="wrap",
            ),
            rx.text(
                rx.cond(row.offerwall != "", row.offerwall + " · ", "")
                + "made "
                + row.created_at
                + rx.cond(row.next_attempt_at != "", " · next try " + row.next_attempt_at, ""),
                size="1",
                color_scheme="gray",
            ),
            rx.text(row.last_error, size="2", color_scheme="red", word_break="break-word"),
            rx.el.details(
                rx.el.summary(
                    rx.text(
                        counted(row.attempts.length(), "attempt", "attempts"),
                        size="1",
                        as_="span",
                    )
                ),
                rx.el.ol(
                    rx.foreach(row.attempts, _alert_attempt),
                    style={"margin": "0.25rem 0 0", "paddingLeft": "1.25rem"},
                ),
            ),
            spacing="1",
            min_width="0",
            flex="1 1 16rem",
        ),
        rx.button(
            "Send again",
            size="1",
            variant="soft",
            on_click=DashboardState.send_alert_again(row.id),
        ),
        justify="between",
        align="start",
        spacing="3",
        wrap="wrap",
        width="100%",
        data_testid="failing-alert",
    )


def _alerts() -> rx.Component:
    s = DashboardState
    return _card(
        "Failing alerts",
        rx.cond(
            s.alerts.length() > 0,
            rx.vstack(
                rx.text(
                    "Alerts ALERT_WEBHOOK_URL did not take: given up after their last attempt, "
                    "or being retried. Send one again once the webhook is fixed.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.cond(
                    s.failing_alerts > s.alerts.length(),
                    rx.text(
                        "The newest "
                        + s.alerts.length().to_string()
                        + " of "
                        + s.failing_alerts.to_string()
                        + ".",
                        size="1",
                        color_scheme="gray",
                    ),
                ),
                rx.foreach(s.alerts, _alert_row),
                spacing="3",
                width="100%",
            ),
            rx.text("Every alert reached the alert webhook.", color_scheme="gray"),
        ),
        test_id="card-alerts",
    )


def staff_dashboard() -> rx.Component:
    return page(
        "Dashboard",
        rx.grid(
            _pending(),
            _today(),
            _tickets(),
            columns=rx.breakpoints(initial="1", md="2"),
            spacing="4",
            width="100%",
        ),
        rx.grid(
            _paused(),
            _failing(),
            columns=rx.breakpoints(initial="1", md="2"),
            spacing="4",
            width="100%",
        ),
        _alerts(),
    )
