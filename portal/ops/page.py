"""Staff's System page: is each dependency ready, what waits in each outbox, which
processes deliver them and when they last said so, the last prune, and the schema's
revision against the code's. What an on-call person opens first."""

import reflex as rx

from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.components.wording import counted
from portal.ops.state import STALE_MINUTES, SystemState


def _section(title: str, *children: rx.Component, test_id: str) -> rx.Component:
    return card(rx.heading(title, size="4", as_="h2"), *children, data_testid=test_id)


def _ok_badge(ok: rx.Var, good: str = "ok", bad: str = "failing") -> rx.Component:
    return rx.cond(ok, rx.badge(good, color_scheme="green"), rx.badge(bad, color_scheme="red"))


def _check_row(check) -> rx.Component:
    return rx.flex(
        rx.vstack(
            rx.text(check.name, weight="medium"),
            rx.cond(check.why != "", rx.text(check.why, size="1", color_scheme="red")),
            spacing="0",
        ),
        _ok_badge(check.ok),
        justify="between",
        align="center",
        spacing="3",
        width="100%",
        data_testid="readiness-check",
    )


def _readiness() -> rx.Component:
    s = SystemState
    return _section(
        "Readiness",
        rx.text(
            "The checks of this server's /readyz: what a load balancer sees of it.",
            size="2",
            color_scheme="gray",
        ),
        rx.foreach(s.checks, _check_row),
        test_id="card-readiness",
    )


def _dash(text) -> rx.Component:
    return rx.cond(text != "", rx.text(text), rx.text("—", color_scheme="gray"))


def _outboxes() -> rx.Component:
    s = SystemState
    return _section(
        "Outboxes",
        rx.text(
            "Messages waiting in each outbox: due now, or later (another attempt "
            "scheduled after a failure), and how old the oldest is.",
            size="2",
            color_scheme="gray",
        ),
        data_table(
            # Short headers: the columns fit a phone's width.
            ("Outbox", "Due", "Later", "Oldest"),
            s.outboxes,
            lambda o: [
                rx.text(o.kind, weight="medium"),
                o.due,
                o.scheduled,
                _dash(o.oldest),
            ],
            test_id="outbox-row",
            # Four rows of figures: one line each on a phone too, not four tall cards,
            # in the small table's padding, which fits a phone's width.
            cards=False,
            size="1",
        ),
        rx.text(
            "Paused after failing: "
            + counted(s.paused_postbacks, "offerwall's postbacks", "offerwalls' postbacks")
            + ", "
            + counted(s.paused_webhooks, "webhook endpoint", "webhook endpoints")
            + ". Their messages wait until they are resumed.",
            size="2",
            data_testid="paused-endpoints",
        ),
        test_id="card-outboxes",
    )


def _workers() -> rx.Component:
    s = SystemState
    return _section(
        "Workers",
        rx.text(
            f"Processes that deliver the outboxes, each with its heartbeat (once a minute); "
            f"one silent for {STALE_MINUTES} minutes has stopped or hangs.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.workers.length() > 0,
            data_table(
                ("Process", "Kind", "Delivers", "Started", "Last heartbeat"),
                s.workers,
                lambda w: [
                    rx.code(w.id, variant="ghost"),
                    w.kind,
                    w.delivers,
                    rx.text(w.started, white_space="nowrap"),
                    rx.hstack(
                        rx.text(w.last_beat, title=w.last_beat_at, white_space="nowrap"),
                        rx.cond(w.stale, rx.badge("stale", color_scheme="red")),
                        align="center",
                        spacing="2",
                    ),
                ],
                test_id="worker-row",
            ),
            empty_state(
                "server-off",
                "No heartbeat yet",
                "No process that delivers postbacks has said it is alive: start `questwall "
                "serve` (with POSTBACK_DISPATCHER on) or `questwall worker`.",
            ),
        ),
        test_id="card-workers",
    )


def _prune() -> rx.Component:
    s = SystemState
    return _section(
        "Last prune",
        rx.cond(
            s.prune_ran != "",
            rx.vstack(
                rx.hstack(
                    rx.text(s.prune_ran, weight="medium", data_testid="prune-ran"),
                    rx.cond(s.prune_late, rx.badge("late", color_scheme="amber")),
                    align="center",
                    spacing="2",
                    wrap="wrap",
                ),
                rx.text("Removed " + s.prune_removed, size="2", color_scheme="gray"),
                spacing="1",
            ),
            rx.text(
                "No prune has run yet. Run `questwall prune` once a day (cron).",
                color_scheme="gray",
                data_testid="prune-ran",
            ),
        ),
        test_id="card-prune",
    )


def _schema() -> rx.Component:
    s = SystemState
    return _section(
        "Schema",
        rx.hstack(
            rx.text("Database at " + s.schema_at + ", code at " + s.schema_head),
            _ok_badge(s.schema_at == s.schema_head, "at head", "migrate"),
            align="center",
            spacing="2",
            wrap="wrap",
            data_testid="schema",
        ),
        test_id="card-schema",
    )


def system() -> rx.Component:
    s = SystemState
    return page(
        "System",
        rx.flex(
            rx.text("Read at " + s.read_at, size="2", color_scheme="gray"),
            rx.button(
                rx.icon("refresh-cw", size=14), "Refresh", variant="soft", on_click=s.refresh
            ),
            justify="between",
            align="center",
            spacing="3",
            width="100%",
        ),
        _readiness(),
        rx.cond(
            s.unread != "",
            rx.callout(
                "The database did not answer: " + s.unread,
                icon="triangle-alert",
                color_scheme="red",
                width="100%",
            ),
            rx.fragment(_outboxes(), _workers(), _prune(), _schema()),
        ),
    )
