"""Revenue, country payouts and budgets in the portal (docs/economics.md): the mission
editor's "Revenue and payouts" card, and the game's budgets on its missions page (the
game's budget form, and each budget's burn).

The editor's inputs are uncontrolled and named after the definition's field paths
(`revenue`, `payouts.0.countries`, `payouts.0.payout`, `budget.amount`, `budget.every`,
`budget.timeZone`), as api/missions/forms.py reads them; a budget whose amount is empty is
no budget. Only designers and staff reach these pages: publishers never see revenue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zoneinfo import available_timezones

import reflex as rx

from portal.components.forms import field_error, native_select, remove_row_button
from portal.components.layout import card
from portal.missions.rule_builder import TIME_ZONES, marked, row_error

Field = Callable[..., rx.Component]
BUDGET_EVERY = [
    ("day", "Each day"),
    ("week", "Each week (from Monday)"),
    ("month", "Each month"),
    ("total", "In total"),
]
# A country payout's row: its countries, its payout and its remove button, as wide as a
# phone.
PAYOUT_GRID = {
    "grid_template_columns": "minmax(0, 1fr) minmax(0, 6.5em) auto",
    "gap": "0.5rem",
    "align": "center",
    "width": "100%",
}
BUDGET_ZONES = "budget-time-zones"


def _grid(*children: rx.Component, md: str = "3") -> rx.Component:
    return rx.grid(*children, columns=rx.breakpoints(initial="1", md=md), spacing="3", width="100%")


def every_select(name: str, value: Any, errors: rx.Var, label: str = "Spends") -> rx.Component:
    """How often a budget starts again: each day, week, month, or never (in total)."""
    return rx.vstack(
        rx.el.label(rx.text(label, size="2", weight="medium"), html_for=name),
        native_select(
            *[rx.el.option(text, value=value) for value, text in BUDGET_EVERY],
            name=name,
            id=name,
            default_value=value,
            width="100%",
            **marked(errors, name),
        ),
        field_error(errors, name),
        spacing="1",
        width="100%",
    )


def budget_inputs(f: Field, errors: rx.Var, every: Any, zones: str = TIME_ZONES) -> rx.Component:
    """A budget's amount, how often it starts again and the zone its days turn in."""
    return _grid(
        f(
            "Budget (USD)",
            "budget.amount",
            input_mode="decimal",
            placeholder="e.g. 500",
            hint="Revenue it may spend; empty: no budget.",
        ),
        every_select("budget.every", every, errors),
        f(
            "Budget's time zone",
            "budget.timeZone",
            list=zones,
            placeholder="UTC",
            auto_complete="off",
            hint="Its midnight starts each day, week, month.",
        ),
    )


def _payouts(state: Any) -> rx.Component:
    def row(n: rx.Var, i: rx.Var) -> rx.Component:
        number = (i + 1).to_string()
        countries, payout = "payouts." + n + ".countries", "payouts." + n + ".payout"

        def text(name: rx.Var, label: rx.Var, placeholder: str, **props: Any) -> rx.Component:
            return rx.input(
                name=name,
                aria_label=label,
                placeholder=placeholder,
                size="2",
                width="100%",
                default_value=state.values.get(name, "").to(str),
                on_blur=lambda value: state.keep(name, value),
                **marked(state.errors, name),
                **props,
            )

        return rx.vstack(
            rx.grid(
                text(countries, "Payout " + number + " countries", "e.g. US, CA"),
                text(payout, "Payout " + number + " (USD)", "e.g. 1.20", input_mode="decimal"),
                remove_row_button("Remove payout " + number, state.remove_payout(i)),
                **PAYOUT_GRID,
            ),
            row_error(state.errors, countries),
            row_error(state.errors, payout),
            spacing="1",
            width="100%",
            data_testid="country-payout",
        )

    heading = rx.grid(
        rx.text("Countries (codes or names)", size="1", color_scheme="gray"),
        rx.text("Pays (USD)", size="1", color_scheme="gray"),
        rx.box(width="24px"),
        **PAYOUT_GRID,
    )
    return rx.vstack(
        rx.heading("Payouts by country", size="3", as_="h3"),
        rx.text(
            "Optional: players in these countries earn this instead of the payout. A "
            "country is in one row at most.",
            size="2",
            color_scheme="gray",
        ),
        rx.vstack(
            rx.cond(state.payout_rows.length() > 0, heading),
            rx.foreach(state.payout_rows, row),
            spacing="2",
            width="100%",
            key=state.payouts_key.to_string(),
        ),
        # Always submitted: payouts whose rows are all removed are no payouts any more.
        rx.el.input(type="hidden", name="payouts", value=""),
        rx.button(
            rx.icon("plus", size=14),
            "Add country payout",
            size="2",
            variant="soft",
            type="button",
            on_click=state.add_payout,
            width="fit-content",
        ),
        field_error(state.errors, "payouts"),
        spacing="2",
        width="100%",
        data_testid="country-payouts",
    )


def revenue_and_payouts(state: Any, f: Field) -> rx.Component:
    """The mission editor's card: revenue, payouts per country, the mission's budget."""
    return card(
        rx.heading("Revenue and payouts", size="4", as_="h2"),
        rx.text(
            "What the game pays the network for each conversion, and what players earn in "
            "some countries. Publishers never see revenue.",
            size="2",
            color_scheme="gray",
        ),
        rx.box(
            f(
                "Revenue (USD)",
                "revenue",
                input_mode="decimal",
                placeholder="e.g. 1.60",
                hint="Per conversion (a ladder's: for all its stages); empty: none.",
            ),
            max_width="320px",
            width="100%",
        ),
        rx.divider(),
        _payouts(state),
        rx.divider(),
        rx.vstack(
            rx.heading("Budget", size="3", as_="h3"),
            rx.text(
                "Optional: at most this much revenue. When what is left is less than one "
                "conversion's revenue, the mission leaves the offerwalls until the period "
                "turns (a total budget: until it is raised). Needs the revenue above.",
                size="2",
                color_scheme="gray",
            ),
            budget_inputs(f, state.errors, state.values.get("budget.every", "day").to(str)),
            field_error(state.errors, "budget"),
            spacing="2",
            width="100%",
            data_testid="mission-budget",
        ),
        data_testid="revenue-and-payouts",
    )


def time_zone_list(list_id: str = BUDGET_ZONES) -> rx.Component:
    """The IANA time zones a zone input offers (its `list`)."""
    return rx.el.datalist(
        *[rx.el.option(value=z) for z in sorted(available_timezones())], id=list_id
    )


def burn_line(b: rx.Var) -> rx.Component:
    """One budget's burn: whose it is, spent of its amount, a bar, when it turns over."""
    return rx.vstack(
        rx.hstack(
            rx.text(b.label, size="2", weight="medium", data_testid="burn-label"),
            rx.spacer(),
            rx.text(
                b.spent + " of " + b.amount + " · " + b.percent.to_string() + "%",
                size="2",
                data_testid="burn-spent",
            ),
            wrap="wrap",
            width="100%",
        ),
        rx.progress(
            value=b.percent,
            max=100,
            color_scheme=rx.cond(
                b.percent >= 100, "red", rx.cond(b.percent >= 80, "amber", "blue")
            ),
            aria_label=b.label + ": " + b.percent.to_string() + "% spent",
            width="100%",
        ),
        rx.text(b.turns, size="1", color_scheme="gray", data_testid="burn-turns"),
        spacing="1",
        width="100%",
        data_testid="budget-burn",
    )
