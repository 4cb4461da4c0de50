"""The mission editor's "Live operations" card (docs/missions.md#live-operations): when the
mission starts, how often it starts over, its ladder of stages, its caps per period and
per offerwall, and the pool it rotates in (picked from the game's or made by name).

Uncontrolled inputs named after the definition's field paths (`recurrence.every`,
`stages.0.threshold`, `periodCaps.timeZone`, `pool`, …), as api/missions/forms.py reads
them; a group left empty is no part of the definition. Time zones are picked from the
IANA names the rule builder lists (`time-zones`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from api.missions.editor import NEW_POOL
from models.offer_schemas import WEEKDAYS
from portal.components.forms import field_error, native_select, remove_row_button
from portal.components.layout import card
from portal.missions.rule_builder import TIME_ZONES, marked, row_error

Field = Callable[..., rx.Component]
EVERY = [
    ("", "Does not repeat"),
    ("day", "Every day"),
    ("week", "Every week"),
    ("month", "Every month"),
]
POOL_EVERY = [("day", "Every day"), ("week", "Every week"), ("month", "Every month")]
POOL_NAMES = "pool-names"
# A ladder's row: its name, threshold, payout and remove button, as wide as a phone.
STAGE_GRID = {
    "grid_template_columns": "4.5em minmax(0, 160px) minmax(0, 160px) auto",
    "gap": "2",
    "align": "center",
    "width": "100%",
}


def start_date(f: Field) -> rx.Component:
    return f(
        "Starts on",
        "startDate",
        type="date",
        hint="Listed and clickable from 00:00 UTC that day; empty: at once.",
    )


def _label(text: str, name: str) -> rx.Component:
    return rx.el.label(rx.text(text, size="2", weight="medium"), html_for=name)


def _select(state: Any, name: str, label: str, choices: list[tuple[str, str]], **props: Any):
    return rx.vstack(
        _label(label, name),
        native_select(
            *[rx.el.option(text, value=value) for value, text in choices],
            name=name,
            id=name,
            default_value=state.values.get(name, props.pop("default", "")).to(str),
            width="100%",
            **marked(state.errors, name),
            **props,
        ),
        field_error(state.errors, name),
        spacing="1",
        width="100%",
    )


def _zone(f: Field, name: str, label: str, hint: str) -> rx.Component:
    """A time zone typed or picked from the list of IANA names (empty: UTC)."""
    return f(
        label,
        name,
        list=TIME_ZONES,
        placeholder="UTC",
        auto_complete="off",
        hint=hint,
    )


def _grid(*children: rx.Component, md: str = "2") -> rx.Component:
    return rx.grid(*children, columns=rx.breakpoints(initial="1", md=md), spacing="3", width="100%")


def _section(title: str, words: str, *children: rx.Component, test_id: str) -> rx.Component:
    return rx.vstack(
        rx.heading(title, size="3", as_="h3"),
        rx.text(words, size="2", color_scheme="gray"),
        *children,
        spacing="2",
        width="100%",
        data_testid=test_id,
    )


def _recurrence(state: Any, f: Field) -> rx.Component:
    return _section(
        "Recurrence",
        "The mission starts over each period, from midnight in its time zone: progress "
        "counts the period's events, and a player converts once per period.",
        _grid(
            _select(
                state,
                "recurrence.every",
                "Repeats",
                EVERY,
                on_change=state.choose_every,
            ),
            rx.cond(
                state.every == "week",
                _select(
                    state,
                    "recurrence.weekStartsOn",
                    "Weeks start on",
                    [(day, day.capitalize()) for day in WEEKDAYS],
                    default="monday",
                ),
            ),
            _zone(
                f, "recurrence.timeZone", "Recurrence time zone", "Its midnight starts each period."
            ),
        ),
        test_id="recurrence",
    )


def _stages(state: Any) -> rx.Component:
    def row(n: rx.Var, i: rx.Var) -> rx.Component:
        number = (i + 1).to_string()
        threshold, payout = "stages." + n + ".threshold", "stages." + n + ".payout"

        def text(name: rx.Var, label: str, placeholder: str) -> rx.Component:
            return rx.input(
                name=name,
                aria_label="Stage " + number + " " + label,
                placeholder=placeholder,
                input_mode="decimal",
                size="2",
                width="100%",
                default_value=state.values.get(name, "").to(str),
                on_blur=lambda value: state.keep(name, value),
                **marked(state.errors, name),
            )

        return rx.vstack(
            rx.grid(
                rx.text("Stage " + number, size="2", weight="medium"),
                text(threshold, "threshold", "e.g. 5"),
                text(payout, "payout", "0.40"),
                remove_row_button("Remove stage " + number, state.remove_stage(i)),
                **STAGE_GRID,
            ),
            row_error(state.errors, threshold),
            row_error(state.errors, payout),
            spacing="1",
            width="100%",
            data_testid="stage",
        )

    heading = rx.grid(
        rx.box(),
        rx.text("Progress reaches", size="1", color_scheme="gray"),
        rx.text("Pays (USD)", size="1", color_scheme="gray"),
        rx.box(),
        **STAGE_GRID,
    )

    return _section(
        "Ladder",
        "Optional: each stage the player's progress reaches is paid on its own. The rule "
        "completes at the last stage; thresholds go up.",
        rx.vstack(
            rx.cond(state.stage_rows.length() > 0, heading),
            rx.foreach(state.stage_rows, row),
            spacing="2",
            width="100%",
            key=state.stages_key.to_string(),
        ),
        # Always submitted: a ladder whose rows are all removed is no ladder any more.
        rx.el.input(type="hidden", name="stages", value=""),
        rx.button(
            rx.icon("plus", size=14),
            rx.cond(state.stage_rows.length() > 0, "Add stage", "Add stages"),
            size="2",
            variant="soft",
            type="button",
            on_click=state.add_stage,
            width="fit-content",
        ),
        field_error(state.errors, "stages"),
        test_id="stages",
    )


def _caps(state: Any, f: Field) -> rx.Component:
    number = {"type": "number", "min": 1, "input_mode": "numeric"}
    return _section(
        "Caps per period",
        "Optional: at most this many conversions a day, a week, a month (a full mission "
        "comes back when the period turns), and at each offerwall in total.",
        _grid(
            f("Per day", "periodCaps.day", **number),
            f("Per week", "periodCaps.week", **number, hint="Weeks start on Monday."),
            f("Per month", "periodCaps.month", **number),
            md="3",
        ),
        _grid(
            _zone(f, "periodCaps.timeZone", "Caps' time zone", "Its midnight turns the periods."),
            f(
                "Cap per offerwall",
                "capPerOfferwall",
                **number,
                hint="Conversions at each offerwall, in total; empty: no limit.",
            ),
        ),
        field_error(state.errors, "periodCaps"),
        test_id="period-caps",
    )


def _pool(state: Any, f: Field) -> rx.Component:
    new = NEW_POOL + "."
    return _section(
        "Rotating pool",
        "Optional: each player sees only some of the pool's missions per period. A pooled "
        "mission has no recurrence of its own and is never in a quest.",
        rx.box(
            f(
                "Pool",
                "pool",
                list=POOL_NAMES,
                auto_complete="off",
                placeholder="daily-pvp",
                hint="Pick one of the game's pools, or type a new name.",
                on_blur=state.choose_pool,
            ),
            max_width="320px",
            width="100%",
        ),
        rx.el.datalist(
            rx.foreach(state.pools, lambda p: rx.el.option(p.words, value=p.name)),
            id=POOL_NAMES,
        ),
        rx.cond(
            state.new_pool,
            rx.vstack(
                rx.text(
                    "New pool “" + state.pool_name + "”: saved with the mission.",
                    size="2",
                    weight="medium",
                ),
                _grid(
                    f(
                        "Missions each player sees",
                        new + "size",
                        type="number",
                        min=1,
                        input_mode="numeric",
                        hint="Per period, 1 to 100.",
                    ),
                    _select(state, new + "every", "Picks change", POOL_EVERY, default="day"),
                    _zone(f, new + "timeZone", "Pool's time zone", "Its midnight changes them."),
                    md="3",
                ),
                spacing="2",
                width="100%",
                padding="0.75rem",
                border="1px solid var(--gray-a6)",
                border_radius="8px",
                data_testid="new-pool",
            ),
        ),
        test_id="pool",
    )


def live_operations(state: Any, f: Field) -> rx.Component:
    """The card: start date, recurrence, ladder, caps per period, pool."""
    return card(
        rx.heading("Live operations", size="4", as_="h2"),
        rx.box(start_date(f), max_width="320px", width="100%"),
        rx.divider(),
        _recurrence(state, f),
        rx.divider(),
        _stages(state),
        rx.divider(),
        _caps(state, f),
        rx.divider(),
        _pool(state, f),
    )
