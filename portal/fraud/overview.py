"""The Fraud page's overview (staff and designers): what the screening refused, the
riskiest addresses, networks and uids, and the events anti-cheat rules set aside."""

from __future__ import annotations

import reflex as rx

from api.reports import DAYS
from portal.components.layout import card
from portal.components.tables import data_table
from portal.fraud.state import FraudState


def _counts(title: str, rows: rx.Var, label: str, test_id: str) -> rx.Component:
    return card(
        rx.heading(title, size="3", as_="h3"),
        rx.cond(
            rows.length() > 0,
            data_table(
                (label, "Count"),
                rows,
                lambda c: [rx.code(c.label, size="1", word_break="break-all"), c.count],
                test_id=test_id,
                size="1",
            ),
            rx.text("None.", size="2", color_scheme="gray"),
        ),
    )


def _refused() -> rx.Component:
    s = FraudState
    return card(
        rx.heading(f"Refused clicks, last {DAYS} days", size="4", as_="h2"),
        rx.cond(
            s.reasons.length() > 0,
            rx.flex(
                rx.foreach(
                    s.reasons,
                    lambda c: rx.badge(
                        c.label + " " + c.count.to_string(), size="2", variant="soft"
                    ),
                ),
                wrap="wrap",
                spacing="2",
                data_testid="refused-reasons",
            ),
        ),
        rx.cond(
            s.days.length() > 0,
            data_table(
                ("Day", "Total", "By reason"),
                s.days,
                lambda d: [rx.text(d.day, white_space="nowrap"), d.total, d.by_reason],
                test_id="refused-day",
            ),
            rx.text("No click was refused.", size="2", color_scheme="gray"),
        ),
    )


def _flags() -> rx.Component:
    s = FraudState
    return card(
        rx.heading("Set aside by anti-cheat rules", size="4", as_="h2"),
        rx.text(
            "The latest events a mission's limits kept from counting.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.flags.length() > 0,
            data_table(
                ("When", "Mission", "User", "Event", "Rule", "Detail"),
                s.flags,
                lambda f: [
                    rx.text(f.at, size="2", white_space="nowrap"),
                    f.mission,
                    rx.code(f.user_id, size="1", word_break="break-all"),
                    f.event,
                    rx.badge(f.rule, variant="soft"),
                    f.detail,
                ],
                test_id="cheat-flag",
            ),
            rx.text("No event was set aside.", size="2", color_scheme="gray"),
        ),
    )


def overview() -> rx.Component:
    s = FraudState
    return rx.vstack(
        _refused(),
        rx.grid(
            _counts("Riskiest IP addresses", s.ips, "IP address", "top-ip"),
            _counts("Riskiest networks", s.networks, "Network", "top-network"),
            _counts("Most refused uids", s.uids, "uid", "top-uid"),
            columns=rx.breakpoints(initial="1", md="3"),
            spacing="4",
            width="100%",
        ),
        _flags(),
        spacing="4",
        width="100%",
    )
