"""An offerwall's staff page (Publishers → a publisher's "Payout rules"): the publisher,
its payout rules (its revenue share for every mission, its rules for one mission) and a
preview of what it gets for one mission. Its state is portal/economics/payout_rules_state.py."""

from typing import Any

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button
from portal.components.forms import field, field_error, form_error, native_select, submission_count
from portal.components.layout import card, empty_state, page, status_badge
from portal.components.reauth import reauth_dialog
from portal.components.tables import data_table
from portal.economics.payout_rules_state import PAYOUT, SHARE, PayoutRulesState

PRECEDENCE = (
    "Which payout applies, most specific first: the mission's payout for the player's "
    "country › this offerwall's rule for the mission › its revenue share › the mission's "
    "own payout. A share needs the mission's revenue; without it the next rule applies."
)


def _header() -> rx.Component:
    s = PayoutRulesState
    return rx.flex(
        status_badge(s.status),
        rx.cond(s.owid != "", rx.code(s.owid, size="2")),
        rx.spacer(),
        rx.link(
            rx.button("All publishers", size="2", variant="soft"), href=routes.STAFF_PUBLISHERS
        ),
        rx.cond(
            s.owid != "",
            rx.link(
                rx.button("Open workspace", size="2", variant="outline"),
                href=routes.publisher(s.offerwall_id),
            ),
        ),
        rx.cond(
            s.offerwall_id != "",
            rx.link(
                rx.button("History", size="2", variant="outline"),
                href=routes.PUBLISHER_HISTORY + routes.offerwall_query(s.offerwall_id),
            ),
        ),
        gap="3",
        align="center",
        wrap="wrap",
        width="100%",
    )


def _every_mission() -> rx.Component:
    s = PayoutRulesState
    return rx.vstack(
        rx.heading("Revenue share for every mission", size="3", as_="h3"),
        rx.cond(
            s.share != "",
            rx.text(
                "Every mission with revenue pays ",
                rx.text.strong(s.share, data_testid="every-share"),
                " of its revenue here, unless a rule for the mission says otherwise. Set by "
                + s.share_set_by
                + ".",
                size="2",
            ),
            rx.text(
                "None: missions pay their own payout here, unless a rule for the mission "
                "says otherwise.",
                size="2",
                color_scheme="gray",
            ),
        ),
        rx.form(
            rx.flex(
                rx.box(
                    field(
                        "Share of every mission's revenue (%)",
                        SHARE,
                        id="every-share-input",
                        errors=s.share_errors,
                        placeholder="70",
                        input_mode="decimal",
                        auto_complete="off",
                        hint="0 to 100, at most two decimals.",
                    ),
                    flex="1 1 16rem",
                    max_width="22rem",
                ),
                rx.button("Save share", type="submit", size="3", margin_top="1.5rem"),
                rx.cond(
                    s.share != "",
                    rx.box(
                        confirm_button(
                            "Clear share",
                            title="Clear the revenue share?",
                            description="Missions then pay their own payout here, unless "
                            "a rule for the mission says otherwise.",
                            confirm="Clear share",
                            on_confirm=s.clear_share,
                            size="3",
                            variant="soft",
                            color_scheme="red",
                        ),
                        margin_top="1.5rem",
                    ),
                ),
                gap="3",
                wrap="wrap",
                align="start",
                width="100%",
            ),
            form_error(s.share_errors.get("form", "").to(str)),
            submission_count(),
            on_submit=s.set_share,
        ),
        spacing="2",
        width="100%",
    )


def _rules_table() -> rx.Component:
    s = PayoutRulesState
    return rx.cond(
        s.rules.length() > 0,
        data_table(
            ("Mission", "Rule", "Set by", ""),
            s.rules,
            lambda r: [
                rx.vstack(
                    rx.text(r.title, weight="medium"),
                    rx.text(r.game, size="1", color_scheme="gray"),
                    spacing="1",
                ),
                rx.vstack(
                    rx.text(r.rule, weight="medium", data_testid="rule-short"),
                    rx.text(r.words, size="2", color_scheme="gray", data_testid="rule-words"),
                    spacing="1",
                ),
                rx.vstack(
                    rx.text(r.by, size="1"),
                    rx.text(r.at, size="1", color_scheme="gray"),
                    spacing="1",
                ),
                rx.hstack(
                    rx.button(
                        "Preview",
                        size="1",
                        variant="soft",
                        on_click=s.pick(r.mission_id),
                        aria_label="Preview " + r.title,
                    ),
                    confirm_button(
                        "Remove",
                        title="Remove the rule for " + r.title + "?",
                        description="The mission then pays here as the other rules say.",
                        confirm="Remove",
                        on_confirm=s.remove_rule(r.mission_id),
                        size="1",
                        variant="soft",
                        color_scheme="red",
                        aria_label="Remove the rule for " + r.title,
                    ),
                    spacing="2",
                ),
            ],
            test_id="payout-rule-row",
        ),
        empty_state("percent", "No rules for one mission", "Add one below."),
    )


def _mission_search() -> rx.Component:
    """The picker's search, outside the rule's form: Enter here searches, it never saves."""
    s = PayoutRulesState
    return rx.vstack(
        rx.el.label(rx.text("Find a mission", size="2", weight="medium"), html_for="find-mission"),
        rx.debounce_input(
            rx.input(
                id="find-mission",
                type="search",
                placeholder="Game or title",
                auto_complete="off",
                size="3",
                width="100%",
                on_change=s.find_missions,
            ),
            value=s.mission_search,
            debounce_timeout=300,
        ),
        spacing="1",
        width="100%",
        max_width="32rem",
    )


def _mission_select() -> rx.Component:
    s = PayoutRulesState
    errors = s.rule_errors
    return rx.vstack(
        rx.el.label(rx.text("Mission", size="2", weight="medium"), html_for="rule-mission"),
        native_select(
            rx.el.option("Pick a mission", value=""),
            rx.foreach(s.choices, lambda c: rx.el.option(c.label, value=c.id)),
            name="mission",
            id="rule-mission",
            value=s.picked,
            on_change=s.pick,
            width="100%",
            aria_invalid=rx.cond(errors.contains("mission"), "true", "false"),
            aria_describedby="rule-mission-error",
        ),
        rx.text(
            rx.cond(
                s.choices.length() == 0,
                "No mission matches: try part of a game's name or of a title.",
                rx.cond(
                    s.more_choices,
                    "Only the first 50 are listed: type more of a game or title.",
                    "Listed by game and title, with their payout and revenue.",
                ),
            ),
            size="1",
            color_scheme="gray",
        ),
        field_error(errors, "mission", input_id="rule-mission"),
        spacing="1",
        width="100%",
    )


def _kind_option(value: str, text: str) -> rx.Component:
    return rx.text(
        rx.flex(rx.radio_group.item(value=value), text, spacing="2", align="center"),
        as_="label",
        size="2",
        margin_right="1.5rem",
    )


def _rule_form() -> rx.Component:
    s = PayoutRulesState
    errors = s.rule_errors
    return rx.vstack(
        rx.heading("Add or change a rule", size="2", as_="h4"),
        _mission_search(),
        rx.form(
            rx.vstack(
                _mission_select(),
                rx.text("It pays", size="2", weight="medium", id="rule-kind-label"),
                rx.radio_group.root(
                    rx.flex(
                        _kind_option(PAYOUT, "A fixed payout (USD)"),
                        _kind_option(SHARE, "A share of its revenue (%)"),
                        gap="4",
                        wrap="wrap",
                    ),
                    value=s.kind,
                    on_change=s.choose_kind,
                    aria_labelledby="rule-kind-label",
                ),
                rx.el.input(type="hidden", name="kind", value=s.kind),
                rx.box(
                    rx.cond(
                        s.kind == SHARE,
                        field(
                            "Share of this mission's revenue (%)",
                            SHARE,
                            id="rule-share",
                            errors=errors,
                            placeholder="70",
                            input_mode="decimal",
                            auto_complete="off",
                            hint="0 to 100, at most two decimals.",
                        ),
                        field(
                            "Payout (USD)",
                            PAYOUT,
                            id="rule-payout",
                            errors=errors,
                            placeholder="1.20",
                            input_mode="decimal",
                            auto_complete="off",
                            hint="Paid here for every conversion, whatever the mission's revenue.",
                        ),
                    ),
                    width="100%",
                    max_width="22rem",
                ),
                rx.cond(
                    (s.kind == SHARE) & (s.picked != "") & ~s.picked_has_revenue,
                    rx.callout(
                        "This mission has no revenue: a share of it cannot apply. Set its "
                        "revenue first, or give a fixed payout.",
                        icon="info",
                        color_scheme="amber",
                        size="1",
                    ),
                ),
                form_error(errors.get("form", "").to(str)),
                submission_count(),
                rx.button("Save rule", type="submit", size="3"),
                spacing="3",
                width="100%",
            ),
            on_submit=s.save_rule,
            width="100%",
        ),
        spacing="3",
        width="100%",
    )


def _preview() -> rx.Component:
    s = PayoutRulesState

    def figure(label: str, value: rx.Var, test_id: str, note: Any = "", **props) -> rx.Component:
        return rx.vstack(
            rx.text(label, size="1", color_scheme="gray"),
            rx.text(value, size="4", weight="bold", data_testid=test_id, **props),
            rx.cond(note != "", rx.text(note, size="1", color_scheme="gray")),
            spacing="1",
        )

    def shown(p) -> rx.Component:
        return rx.vstack(
            rx.text(
                rx.text.strong(p.title),
                " · ",
                p.game,
                size="2",
            ),
            rx.grid(
                figure("This offerwall gets", p.payout, "preview-payout"),
                figure("Mission's payout", p.default, "preview-default"),
                figure("Revenue", p.revenue, "preview-revenue"),
                figure(
                    "Margin",
                    p.margin,
                    "preview-margin",
                    note=p.margin_note,
                    color_scheme=rx.cond(p.losing, "red", "gray"),
                    high_contrast=~p.losing,
                ),
                columns=rx.breakpoints(initial="2", md="4"),
                gap="4",
                width="100%",
            ),
            rx.text(p.why, size="2", data_testid="preview-why"),
            rx.cond(
                p.countries != "",
                rx.text(
                    "Players in these countries get the mission's payout for their country "
                    "instead: " + p.countries + ".",
                    size="2",
                    color_scheme="gray",
                ),
            ),
            spacing="3",
            width="100%",
        )

    return card(
        rx.heading("Preview", size="4", as_="h2"),
        rx.cond(
            s.preview.length() > 0,
            rx.foreach(s.preview, shown),
            rx.text(
                "Pick a mission above (or Preview in a rule's row) to see what this offerwall "
                "gets for it, for a player whose country has no payout of its own.",
                size="2",
                color_scheme="gray",
            ),
        ),
        data_testid="payout-preview",
    )


def payout_rules() -> rx.Component:
    s = PayoutRulesState
    return page(
        rx.cond(s.company != "", s.company, "Offerwall"),
        _header(),
        card(
            rx.heading("Payout rules", size="4", as_="h2"),
            rx.text(PRECEDENCE, size="2", color_scheme="gray", data_testid="precedence"),
            rx.divider(),
            _every_mission(),
            rx.divider(),
            rx.heading("Rules for one mission", size="3", as_="h3"),
            _rules_table(),
            _rule_form(),
        ),
        _preview(),
        reauth_dialog(s),
    )
