"""A game's missions and quests (with each mission's funnel) and the rule tester. The
mission editor and the quest builder are in offer_editors.py."""

from typing import Any

import reflex as rx

from api.missions.tester_replay import MAX_REPLAY_EVENTS
from portal import routes
from portal.components.confirm import confirm_button
from portal.components.forms import field, field_error, form_error, submission_count
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page
from portal.components.offer_form import checkbox, loaded_form
from portal.components.tables import data_table
from portal.missions.economics import BUDGET_ZONES, budget_inputs, burn_line, time_zone_list
from portal.missions.missions_state import MissionsState, RuleTesterState
from portal.missions.offer_editors import editor, quest
from portal.missions.rule_builder import rule_builder

__all__ = ["editor", "missions", "quest", "tester"]

FUNNEL_HINT = (
    "Clicks on its tracking link (a quest's, for the missions in it); started: players with "
    "any progress; median: from the click that started a player to their first completion. "
    "Per period, for a recurring or pooled mission: clicks · started · completed in its current "
    "period and in the one before."
)


def _offer_cell(r: rx.Var) -> rx.Component:
    s = MissionsState
    return rx.vstack(
        rx.link(
            r.title,
            href=rx.cond(
                r.kind == "mission", routes.mission(s.game_id, r.id), routes.quest(s.game_id, r.id)
            ),
            weight="medium",
        ),
        rx.hstack(
            rx.badge(r.kind, variant="outline"),
            rx.cond(r.payout != "", rx.text(r.payout, size="1", weight="medium")),
            rx.cond(
                r.revenue != "",
                rx.text(
                    "revenue " + r.revenue, size="1", color_scheme="gray", data_testid="revenue"
                ),
            ),
            wrap="wrap",
            align="center",
        ),
        rx.cond(r.quest != "", rx.text("in " + r.quest, size="1", color_scheme="gray")),
        rx.text(r.cap, size="1", color_scheme="gray", data_testid="cap"),
        rx.cond(
            r.live.length() > 0,
            rx.flex(rx.foreach(r.live, _live_badge), wrap="wrap", gap="1"),
        ),
        spacing="1",
        min_width="160px",
    )


# What each fact of live operations looks like: a full mission stands out.
LIVE_COLORS = {
    "recurring": "blue",
    "pool": "violet",
    "stages": "cyan",
    "full": "red",
    "budget": "red",
    "scheduled": "amber",
}


def _live_badge(b: rx.Var) -> rx.Component:
    return rx.badge(
        b.text,
        color_scheme=rx.match(b.kind, *LIVE_COLORS.items(), "gray"),
        variant="soft",
        # A long one ("Budget spent · reopens 29 Nov 05:00 (America/New_York)") wraps
        # rather than running out of a phone's narrow cell or widening a laptop's table
        # past its card; a long zone's name too ("America/Argentina/ComodRivadavia").
        white_space="normal",
        overflow_wrap="anywhere",
        height="auto",
        max_width="100%",
        data_testid="live-" + b.kind.to(str),
    )


def _per_period(r: rx.Var) -> rx.Component:
    """A recurring or pooled mission's clicks, starts and completions this period and the
    one before: each period's name, its three figures under it."""
    return rx.cond(
        r.periods.length() > 0,
        rx.vstack(
            rx.foreach(
                r.periods,
                lambda p: rx.vstack(
                    rx.text(
                        p.label,
                        size="1",
                        color_scheme="gray",
                        white_space="nowrap",
                        title="From " + p.first_day,
                    ),
                    rx.text(
                        p.clicks + " · " + p.started + " · " + p.completed,
                        size="2",
                        white_space="nowrap",
                        data_testid="period-figures",
                    ),
                    spacing="0",
                ),
            ),
            spacing="2",
            data_testid="per-period",
        ),
        rx.text("–", size="2"),
    )


def _status(r: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.cond(
            r.active,
            rx.badge("active", color_scheme="green"),
            rx.badge("inactive", color_scheme="gray"),
        ),
        _active_toggle(r),
        spacing="2",
        align="start",
    )


def _active_toggle(r: rx.Var) -> rx.Component:
    s = MissionsState
    kind = rx.cond(r.kind == "mission", "mission", "quest")
    return rx.cond(
        r.active,
        confirm_button(
            "Deactivate",
            title="Deactivate " + kind + " “" + r.title + "”?",
            description="No one can start or complete it while it is inactive. "
            "Players keep what they have done so far.",
            confirm="Deactivate",
            on_confirm=s.set_active(r.kind, r.id, False),
            size="1",
            variant="soft",
            color_scheme="red",
        ),
        rx.button("Activate", size="1", variant="soft", on_click=s.set_active(r.kind, r.id, True)),
    )


def _funnel(value: rx.Var, test_id: str) -> rx.Component:
    return rx.text(rx.cond(value != "", value, "–"), size="2", data_testid=test_id)


def _budgets() -> rx.Component:
    """The game's budgets: each one's burn this period, and the game's own budget's form."""
    s = MissionsState

    def f(label: str, name: str, **props: Any) -> rx.Component:
        return field(
            label,
            name,
            errors=s.budget_errors,
            default_value=s.budget_values.get(name, "").to(str),
            required=False,
            **props,
        )

    return card(
        rx.heading("Budgets", size="4", as_="h2"),
        rx.text(
            "Revenue the game's missions may spend. A mission whose budget, or the game's, "
            "cannot take one more conversion leaves the offerwalls until the period turns.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.burns.length() > 0,
            rx.vstack(rx.foreach(s.burns, burn_line), spacing="3", width="100%"),
            rx.text(
                "No budgets yet: set the game's below, or a mission's in its editor.",
                size="2",
                data_testid="no-budgets",
            ),
        ),
        rx.divider(),
        rx.heading("Game budget", size="3", as_="h3"),
        rx.text(
            "Counts the revenue of all the game's missions that have revenue.",
            size="2",
            color_scheme="gray",
        ),
        rx.form(
            rx.vstack(
                form_error(s.budget_errors.get("form", "").to(str)),
                budget_inputs(
                    f,
                    s.budget_errors,
                    s.budget_values.get("budget.every", "day").to(str),
                    BUDGET_ZONES,
                ),
                field_error(s.budget_errors, "budget"),
                time_zone_list(),
                rx.hstack(
                    submission_count(),
                    rx.button("Save game budget", type="submit", size="2"),
                    rx.cond(
                        s.has_game_budget,
                        confirm_button(
                            "Remove game budget",
                            title="Remove the game's budget?",
                            description="Its missions spend without a game-wide limit (their "
                            "own budgets still hold).",
                            confirm="Remove budget",
                            on_confirm=s.remove_budget,
                            size="2",
                            variant="soft",
                            color_scheme="red",
                        ),
                    ),
                    spacing="3",
                    wrap="wrap",
                ),
                spacing="3",
                width="100%",
            ),
            on_submit=s.save_budget,
            key=s.budget_form_key.to_string(),
            no_validate=True,
            width="100%",
            data_testid="game-budget-form",
        ),
        data_testid="budgets",
    )


def missions() -> rx.Component:
    s = MissionsState
    return page(
        s.game_name,
        game_tabs(s, routes.MISSIONS),
        card(
            rx.hstack(
                rx.heading("Missions and quests", size="4", as_="h2"),
                rx.spacer(),
                rx.link(
                    rx.button("New mission", size="2"),
                    href=routes.with_game(routes.MISSION, s.game_id),
                ),
                rx.link(
                    rx.button("New quest", size="2", variant="soft"),
                    href=routes.with_game(routes.QUEST, s.game_id),
                ),
                wrap="wrap",
                width="100%",
            ),
            rx.cond(
                s.rows.length() > 0,
                rx.vstack(
                    data_table(
                        (
                            "Offer",
                            "Rule",
                            "Clicks",
                            "Started",
                            "In progress",
                            "Completed",
                            "Median time",
                            "Per period",
                            "Status",
                        ),
                        s.rows,
                        lambda r: [
                            _offer_cell(r),
                            rx.text(r.rule, size="2", min_width="180px", data_testid="rule"),
                            _funnel(r.clicks, "clicks"),
                            _funnel(r.started, "started"),
                            _funnel(r.in_progress, "in-progress"),
                            _funnel(r.completed, "completed"),
                            _funnel(r.median_time, "median-time"),
                            _per_period(r),
                            _status(r),
                        ],
                        test_id="offer-row",
                    ),
                    rx.text(FUNNEL_HINT, size="1", color_scheme="gray"),
                    width="100%",
                ),
                empty_state(
                    "target", "No missions yet", "Create one: an event, a filter, a completion."
                ),
            ),
        ),
        _budgets(),
    )


def _source(value: str, label: str) -> rx.Component:
    """One of the tester's sources of events: a radio of the form's `source`."""
    s = RuleTesterState
    return rx.el.label(
        rx.hstack(
            rx.el.input(
                type="radio", name="source", value=value, default_checked=s.source == value
            ),
            rx.text(label, size="2", weight="medium"),
            spacing="2",
            align="center",
        ),
    )


def _events_card() -> rx.Component:
    s = RuleTesterState
    return card(
        rx.heading("Events", size="4", as_="h2"),
        _source("typed", "Typed events, in order"),
        rx.text(
            'One per line: EVENT [value] [trait=value …], or a JSON object such as {"event": '
            '"KILL", "time": "2026-11-20T10:00:00Z", "groupId": "m1"} (a time and a group for '
            "the kinds that read them).",
            size="2",
            color_scheme="gray",
        ),
        rx.text_area(
            name="events",
            default_value=s.events,
            rows="8",
            width="100%",
            font_family="monospace",
            aria_label="Events",
            aria_invalid=rx.cond(s.errors.contains("events"), "true", "false"),
            aria_describedby="events-error",
        ),
        field_error(s.errors, "events"),
        rx.divider(),
        _source("player", "A player's stored events"),
        rx.grid(
            field(
                "Game user id",
                "player",
                errors=s.errors,
                default_value=s.player,
                required=False,
                list="player-ids",
                auto_complete="off",
                placeholder="player-42",
            ),
            field("From", "from", errors=s.errors, type="date", default_value=s.day_from),
            field("To", "to", errors=s.errors, type="date", default_value=s.day_to),
            columns=rx.breakpoints(initial="1", md="3"),
            spacing="3",
            width="100%",
        ),
        rx.el.datalist(rx.foreach(s.players, lambda p: rx.el.option(value=p)), id="player-ids"),
        rx.text(
            f"Days in UTC, both included; the events the rule reads, in time order, at most "
            f"{MAX_REPLAY_EVENTS:,}.",
            size="1",
            color_scheme="gray",
        ),
        rx.button("Run", type="submit", size="3"),
    )


def tester() -> rx.Component:
    s = RuleTesterState
    return page(
        "Rule tester",
        game_tabs(s, routes.TESTER),
        loaded_form(
            card(
                rx.heading("Rule", size="4", as_="h2"),
                rule_builder(s),
                checkbox("repeatable", "Repeatable (allow multiple conversions)", s.repeatable),
            ),
            _events_card(),
            on_submit=s.run,
            key=s.form_key.to_string(),
        ),
        rx.cond(
            s.rule_summary != "",
            card(
                rx.heading("Event by event", size="4", as_="h2"),
                rx.text(
                    "Rule: ", rx.text.strong(s.rule_summary), size="2", data_testid="rule-summary"
                ),
                rx.cond(s.note != "", rx.text(s.note, size="2", data_testid="replay-note")),
                rx.cond(
                    s.completed_at > 0,
                    rx.callout(
                        "The mission completes at event " + s.completed_at.to_string() + ".",
                        icon="trophy",
                        color_scheme="green",
                        data_testid="completes-at",
                    ),
                    rx.callout(
                        "These events do not complete the mission.",
                        icon="info",
                        data_testid="completes-at",
                    ),
                ),
                rx.cond(
                    s.steps.length() > 0,
                    data_table(
                        (
                            "#",
                            "Time (UTC)",
                            "Event",
                            "Value",
                            "Traits",
                            "Group",
                            "Outcome",
                            "Why",
                            "Progress",
                            "",
                        ),
                        s.steps,
                        lambda t: [
                            t.n,
                            rx.text(t.time, white_space="nowrap"),
                            rx.text(t.event, white_space="nowrap"),
                            t.value,
                            t.traits,
                            t.group,
                            rx.match(
                                t.outcome,
                                ("passes", rx.badge("passes", color_scheme="green")),
                                (
                                    "fails the filter",
                                    rx.badge("fails the filter", color_scheme="red"),
                                ),
                                rx.badge(t.outcome, color_scheme="gray"),
                            ),
                            rx.text(t.why, size="1", min_width="160px"),
                            rx.text(t.progress, white_space="nowrap", data_testid="progress"),
                            rx.cond(
                                t.completed,
                                rx.badge("completes", color_scheme="green"),
                                rx.cond(
                                    t.after_completion,
                                    rx.badge("after completion: not counted", color_scheme="amber"),
                                ),
                            ),
                        ],
                        test_id="test-step",
                        size="1",
                    ),
                ),
            ),
        ),
    )
