"""The Fraud page's offerwalls' rules (staff only): what each risk signal does on an
offerwall's traffic, and whether it hears of held and rejected conversions."""

from __future__ import annotations

import reflex as rx

from models.signals import CLICK_SIGNALS, COMPLETION_SIGNALS, allowed_actions
from portal.components.forms import form_error, signal_select
from portal.components.layout import card
from portal.components.offer_form import checkbox
from portal.fraud.state import REVIEW_POSTBACKS, FraudState


def _signal_select(wall, signal: str) -> rx.Component:
    return signal_select(
        signal,
        [(a, a.capitalize()) for a in allowed_actions(signal)],
        name=signal,
        input_id=wall.id + "-" + signal,
        value=wall.actions[signal].to(str),
    )


def _wall_rules(wall) -> rx.Component:
    s = FraudState
    signals = rx.grid(
        *[_signal_select(wall, signal) for signal in (*CLICK_SIGNALS, *COMPLETION_SIGNALS)],
        columns=rx.breakpoints(initial="1", sm="2", md="3"),
        spacing="3",
        width="100%",
    )
    return rx.form(
        rx.vstack(
            rx.hstack(
                rx.heading(wall.name, size="3", as_="h3"),
                rx.code(wall.owid, size="1"),
                align="center",
                wrap="wrap",
            ),
            rx.cond(
                s.rules_errors.contains(wall.id),
                rx.callout(
                    s.rules_errors[wall.id].to(str),
                    icon="triangle-alert",
                    color_scheme="red",
                    role="alert",
                    width="100%",
                ),
            ),
            signals,
            checkbox(
                REVIEW_POSTBACKS,
                "Send pending and rejected postbacks (held and rejected conversions)",
                wall.review_postbacks,
            ),
            rx.el.input(type="hidden", name="offerwall", value=wall.id),
            rx.button("Save rules", type="submit", size="2"),
            spacing="3",
            width="100%",
            padding_y="0.75rem",
            border_top="1px solid var(--gray-a5)",
        ),
        on_submit=s.save_rules,
        reset_on_submit=False,
        key=wall.id + "-" + s.version.to_string(),
        data_testid="offerwall-rules",
        aria_label="Rules of " + wall.name,
    )


def rules() -> rx.Component:
    s = FraudState
    return card(
        rx.heading("Offerwalls' rules", size="4", as_="h2"),
        rx.text(
            "What each risk signal does on an offerwall's traffic: refuse the click, hold "
            "the conversion for review, or allow it (the signal is only recorded).",
            size="2",
            color_scheme="gray",
        ),
        form_error(s.rules_errors.get("form", "").to(str)),
        rx.cond(
            s.walls.length() > 0,
            rx.vstack(rx.foreach(s.walls, _wall_rules), spacing="2", width="100%"),
            rx.text("No approved offerwall yet.", size="2", color_scheme="gray"),
        ),
    )
