"""The mission editor and the quest builder: every field an import file sets, the saved
offer's card as players see it, and a question before a save deactivates the offer."""

from __future__ import annotations

from typing import Any

import reflex as rx

from models.signals import SIGNALS, STRICTNESS, mission_actions
from portal import routes
from portal.components.confirm import confirm_dialog
from portal.components.forms import field, field_error, form_error, signal_select
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, page
from portal.components.offer_form import (
    checkbox,
    loaded_form,
    save_row,
    targeting_card,
    text_fields,
    url_fields,
)
from portal.missions.economics import revenue_and_payouts
from portal.missions.live_operations import live_operations, start_date
from portal.missions.offer_card import offer_card
from portal.missions.offer_editors_state import EditorState, QuestState
from portal.missions.rule_builder import rule_builder


def _inputs(state: Any):
    """The state's labelled inputs, each with its stored value and its error."""

    def f(label: str, name: str, **props: Any) -> rx.Component:
        return field(
            label,
            name,
            errors=state.errors,
            default_value=state.values[name].to(str),
            required=props.pop("required", False),
            **props,
        )

    return f


def _grid(*children: rx.Component) -> rx.Component:
    return rx.grid(
        *children, columns=rx.breakpoints(initial="1", md="2"), spacing="3", width="100%"
    )


def _beside_preview(state: Any, form: rx.Component) -> rx.Component:
    """The form, and the saved offer's preview beside it on wide screens (under it on
    narrow ones)."""
    return rx.flex(
        rx.box(form, flex="3", min_width="0", width="100%"),
        rx.cond(
            state.preview.title != "",
            rx.box(
                card(offer_card(state.preview, state.show_json, state.toggle_json)),
                flex="2",
                min_width="0",
                width="100%",
            ),
        ),
        direction=rx.breakpoints(initial="column", lg="row"),
        spacing="4",
        align="start",
        width="100%",
    )


# A mission's own action per signal: only stricter than its offerwall's (docs/fraud.md#rules).
OWN_ACTIONS = {"hold": "Hold for review", "refuse": "Refuse the click"}


def _signal_action(state: Any, signal: str) -> rx.Component:
    """The select of the mission's own action for `signal`, and its description (an
    error, which names the signal, shows under them all)."""
    name = f"fraudActions.{signal}"
    choices = [("", "Offerwall's rule")]
    choices += [(a, OWN_ACTIONS[a]) for a in sorted(mission_actions(signal), key=STRICTNESS.get)]
    return signal_select(
        signal, choices, name=name, input_id=name, value=state.values[name].to(str)
    )


def _deactivation(state: Any, kind: str) -> rx.Component:
    return confirm_dialog(
        open=state.confirm_deactivate,
        title=f"Deactivate {kind} “" + state.offer_name.to(str) + "”?",
        description="No one can start or complete it while it is inactive.",
        confirm="Save and deactivate",
        on_confirm=state.save_deactivated,
        on_cancel=state.keep_active,
    )


def editor() -> rx.Component:
    s = EditorState
    f = _inputs(s)
    return page(
        rx.cond(s.mission_id != "", "Edit mission", "New mission"),
        game_tabs(s, routes.MISSIONS),
        rx.cond(
            s.mission_id != "",
            rx.link(
                rx.icon("history", size=14),
                "This mission's history",
                href=routes.mission_history(s.game_id, s.mission_id),
                size="2",
            ),
        ),
        _beside_preview(
            s,
            loaded_form(
                form_error(rx.cond(s.errors.contains("form"), s.errors["form"].to(str), "")),
                card(
                    rx.heading("Offer", size="4", as_="h2"),
                    _grid(
                        f("Title", "title", required=True),
                        f(
                            "Payout (USD)",
                            "payout",
                            input_mode="decimal",
                            hint="With stages: leave empty for their sum.",
                        ),
                        *url_fields(f),
                        f(
                            "Cap (total conversions)",
                            "cap",
                            type="number",
                            min=1,
                            hint="Empty: unlimited.",
                        ),
                        f(
                            "Time limit (hours)",
                            "timeLimitSeconds",
                            input_mode="decimal",
                            hint="From the click; empty: none.",
                        ),
                    ),
                    *text_fields(f),
                    rx.hstack(
                        checkbox("isActive", "Active", s.values["isActive"] == "true"),
                        checkbox(
                            "allowMultipleConversions",
                            "Allow multiple conversions",
                            s.values["allowMultipleConversions"] == "true",
                        ),
                        spacing="5",
                        wrap="wrap",
                    ),
                ),
                revenue_and_payouts(s, f),
                targeting_card(s),
                live_operations(s, f),
                card(
                    rx.heading("Fraud screening", size="4", as_="h2"),
                    rx.text(
                        "Optional. A completion sooner than the minimum time waits for "
                        "review; an event over a maximum does not count and shows in the "
                        "debugger.",
                        size="2",
                        color_scheme="gray",
                    ),
                    _grid(
                        f(
                            "Minimum time (minutes)",
                            "minCompletionSeconds",
                            input_mode="decimal",
                            hint="From the click to completion; empty: none.",
                        ),
                        f(
                            "Most matching events a minute",
                            "maxEventsPerMinute",
                            type="number",
                            min=1,
                            hint="Per player; empty: no limit.",
                        ),
                        f("Highest value", "maxEventValue", input_mode="decimal"),
                        f("Trait", "maxTraitField", hint="e.g. kills"),
                        f("Highest trait value", "maxTraitValue", input_mode="decimal"),
                    ),
                    rx.heading("Risk signals", size="3", as_="h3"),
                    rx.text(
                        "Each follows the offerwall's rule unless this mission is stricter: "
                        "hold its conversions for review, or refuse the click.",
                        size="2",
                        color_scheme="gray",
                    ),
                    _grid(*[_signal_action(s, signal) for signal in SIGNALS]),
                    field_error(s.errors, "fraudActions"),
                ),
                card(
                    rx.heading("Rule", size="4", as_="h2"),
                    rx.cond(
                        s.rule_summary != "",
                        rx.callout(
                            "Saved rule: " + s.rule_summary,
                            icon="list-checks",
                            size="1",
                            data_testid="rule-summary",
                        ),
                    ),
                    rule_builder(s),
                ),
                _history(s),
                save_row(
                    "Save mission",
                    s.game_id,
                    rx.cond(
                        s.mission_id != "",
                        rx.link(
                            rx.button("Test this rule", type="button", variant="soft", size="3"),
                            href=routes.tester(s.game_id, s.mission_id),
                        ),
                    ),
                ),
                on_submit=s.save,
                key=s.form_key.to_string(),
            ),
        ),
        _deactivation(s, "mission"),
    )


def _history(s: type[EditorState]) -> rx.Component:
    """Try on history: the mission as the form has it, over the game's stored events."""
    return card(
        rx.heading("Try on history", size="4", as_="h2"),
        rx.text(
            "Runs the mission as this form has it (nothing is saved) over the game's stored "
            "events, as if every player who sent one had started it at their first.",
            size="2",
            color_scheme="gray",
        ),
        rx.hstack(
            rx.el.label(rx.text("Days", size="2"), html_for="historyDays"),
            rx.input(
                name="historyDays",
                id="historyDays",
                default_value=s.history_days,
                input_mode="numeric",
                width="80px",
                size="2",
                aria_invalid=rx.cond(s.errors.contains("historyDays"), "true", "false"),
                aria_describedby="historyDays-error",
            ),
            rx.button(
                rx.icon("history", size=16),
                "Try on history",
                type="submit",
                variant="soft",
                size="2",
                loading=s.history_running,
                on_click=s.intend("history"),
            ),
            align="center",
            wrap="wrap",
        ),
        field_error(s.errors, "historyDays"),
        rx.cond(
            s.history_progress != "",
            rx.text(s.history_progress, size="2", data_testid="history-progress"),
        ),
        rx.cond(
            s.history.length() > 0,
            rx.vstack(
                rx.data_list.root(
                    rx.foreach(
                        s.history,
                        lambda line: rx.data_list.item(
                            rx.data_list.label(line.label),
                            rx.data_list.value(line.figure),
                        ),
                    ),
                    data_testid="history-figures",
                    size="2",
                    orientation={"initial": "vertical", "sm": "horizontal"},
                ),
                rx.cond(
                    s.history_per_day.length() > 0,
                    rx.vstack(
                        rx.text("Completions per day (UTC)", size="2", weight="medium"),
                        rx.flex(
                            rx.foreach(
                                s.history_per_day,
                                lambda day: rx.badge(day.label + ": " + day.figure, variant="soft"),
                            ),
                            wrap="wrap",
                            gap="1",
                            data_testid="history-days",
                        ),
                        spacing="1",
                    ),
                ),
                spacing="3",
            ),
        ),
    )


def _chosen_row(m: rx.Var, i: rx.Var) -> rx.Component:
    s = QuestState
    return rx.hstack(
        rx.text((i + 1).to_string() + ".", width="2em"),
        rx.text(m["title"], flex="1"),
        rx.icon_button(
            rx.icon("arrow-up", size=14),
            size="1",
            variant="soft",
            aria_label="Move up",
            on_click=s.move(i, -1),
            type="button",
        ),
        rx.icon_button(
            rx.icon("arrow-down", size=14),
            size="1",
            variant="soft",
            aria_label="Move down",
            on_click=s.move(i, 1),
            type="button",
        ),
        rx.button(
            "Remove",
            size="1",
            variant="soft",
            color_scheme="red",
            on_click=s.remove(m["id"]),
            type="button",
        ),
        width="100%",
        align="center",
        data_testid="quest-mission",
    )


def _available_row(m: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.text(m["title"], flex="1"),
        rx.button("Add", size="1", variant="soft", on_click=QuestState.add(m["id"]), type="button"),
        width="100%",
    )


def quest() -> rx.Component:
    s = QuestState
    f = _inputs(s)
    return page(
        rx.cond(s.quest_id != "", "Edit quest", "New quest"),
        game_tabs(s, routes.MISSIONS),
        _beside_preview(
            s,
            loaded_form(
                form_error(rx.cond(s.errors.contains("form"), s.errors["form"].to(str), "")),
                card(
                    rx.heading("Quest", size="4", as_="h2"),
                    _grid(
                        f("Name", "name", required=True),
                        f(
                            "Start cap (players)",
                            "startCap",
                            type="number",
                            min=1,
                            hint="Empty: unlimited.",
                        ),
                        *url_fields(f),
                        start_date(f),
                    ),
                    *text_fields(f),
                    checkbox("isActive", "Active", s.values["isActive"] == "true"),
                ),
                targeting_card(s),
                card(
                    rx.heading("Missions, in order", size="4", as_="h2"),
                    rx.foreach(s.chosen, _chosen_row),
                    rx.cond(
                        s.chosen.length() == 0,
                        rx.text("Add missions from the list below.", color_scheme="gray"),
                    ),
                    field_error(s.errors, "missions"),
                    rx.divider(),
                    rx.text("Standalone missions of this game", size="2", weight="medium"),
                    rx.foreach(s.available, _available_row),
                ),
                save_row("Save quest", s.game_id),
                on_submit=s.save,
                key=s.form_key.to_string(),
            ),
        ),
        _deactivation(s, "quest"),
    )
