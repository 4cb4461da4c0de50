"""Fraud (staff and designers): the held conversions to approve, reject or keep holding
(review.py); what the screening refused and set aside (overview.py); and, for staff, the
blocklist (blocklist.py) and each offerwall's rules (rules.py). This module is the page."""

from __future__ import annotations

import reflex as rx

from api.reports import DAYS
from portal.components.layout import card, page
from portal.fraud import blocklist, overview, review, rules
from portal.fraud.state import FraudState


def _stat(label: str, value: rx.Var, test_id: str) -> rx.Component:
    return card(
        rx.text(label, size="2", color_scheme="gray"),
        # A figure, not a heading (Radix draws a heading `as` anything else as an h1).
        rx.text(value.to_string(), size="7", weight="bold", data_testid=test_id),
    )


def fraud() -> rx.Component:
    s = FraudState
    return page(
        "Fraud",
        rx.grid(
            _stat("Held for review", s.held, "held-count"),
            _stat(f"Refused clicks, last {DAYS} days", s.refused, "refused-count"),
            columns="2",
            spacing="4",
            width="100%",
        ),
        review.review(),
        overview.overview(),
        rx.cond(
            s.is_staff, rx.vstack(blocklist.blocklist(), rules.rules(), spacing="5", width="100%")
        ),
        review.reject_dialog(),
        subtitle="Review held conversions, and see what the screening refused and set aside.",
    )
