"""A game's missions and quests, the mission editor and the rule tester."""

import reflex as rx

from portal import routes
from portal.components.forms import field, field_error, form_error
from portal.components.game_tabs import game_tabs
from portal.components.layout import card, empty_state, page
from portal.components.rule_builder import rule_builder
from portal.components.tables import data_table
from portal.state.missions import (
    OS_CHOICES,
    EditorState,
    MissionsState,
    QuestState,
    RuleTesterState,
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
                data_table(
                    ("Offer", "Rule", "Payout", "Conversions", "Status", ""),
                    s.rows,
                    lambda r: [
                        rx.vstack(
                            rx.link(
                                r.title,
                                href=rx.cond(
                                    r.kind == "mission",
                                    routes.mission(s.game_id, r.id),
                                    routes.quest(s.game_id, r.id),
                                ),
                            ),
                            rx.hstack(
                                rx.badge(r.kind, variant="outline"),
                                rx.cond(
                                    r.quest != "",
                                    rx.text("in " + r.quest, size="1", color_scheme="gray"),
                                ),
                            ),
                            spacing="1",
                        ),
                        rx.text(r.rule, size="2"),
                        r.payout,
                        r.progress,
                        rx.cond(
                            r.active,
                            rx.badge("active", color_scheme="green"),
                            rx.badge("inactive", color_scheme="gray"),
                        ),
                        rx.button(
                            rx.cond(r.active, "Deactivate", "Activate"),
                            size="1",
                            variant="soft",
                            on_click=s.set_active(r.kind, r.id, ~r.active),
                        ),
                    ],
                    test_id="offer-row",
                ),
                empty_state(
                    "target", "No missions yet", "Create one: an event, a filter, a completion."
                ),
            ),
        ),
    )


def _checkbox(name: str, label: str, checked, value: str = "true") -> rx.Component:
    """A checkbox after a hidden input of the same name: an unchecked box submits "" (or
    "false"), so the form always says what the box shows."""
    unchecked = "false" if value == "true" else ""
    return rx.el.label(
        rx.hstack(
            rx.el.input(type="hidden", name=name, value=unchecked),
            rx.el.input(type="checkbox", name=name, value=value, default_checked=checked),
            rx.text(label, size="2"),
            spacing="1",
            align="center",
        ),
    )


def editor() -> rx.Component:
    s = EditorState
    v, errors = s.values, s.errors

    def f(label: str, name: str, **props) -> rx.Component:
        return field(
            label,
            name,
            errors=errors,
            default_value=v[name].to(str),
            required=props.pop("required", False),
            **props,
        )

    return page(
        rx.cond(s.mission_id != "", "Edit mission", "New mission"),
        game_tabs(s, routes.MISSIONS),
        rx.form(
            rx.vstack(
                form_error(rx.cond(errors.contains("form"), errors["form"].to(str), "")),
                card(
                    rx.heading("Offer", size="4", as_="h2"),
                    rx.grid(
                        f("Title", "title", required=True),
                        f("Payout (USD)", "payout", required=True, input_mode="decimal"),
                        f(
                            "Destination URL",
                            "destinationUrl",
                            required=True,
                            type="url",
                            hint="Where the tracking link sends the player (platformid is added).",
                        ),
                        f("Preview URL", "previewUrl", type="url"),
                        f("Thumbnail URL", "thumbnail", type="url"),
                        f("Expires on", "expirationDate", type="date"),
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
                        columns=rx.breakpoints(initial="1", md="2"),
                        spacing="3",
                        width="100%",
                    ),
                    f("Description", "description"),
                    f("Instructions", "instructions"),
                    f("Requirements", "requirements"),
                    f("Tags", "tags", hint="Comma-separated."),
                    rx.hstack(
                        _checkbox("isActive", "Active", v["isActive"] == "true"),
                        _checkbox(
                            "allowMultipleConversions",
                            "Allow multiple conversions",
                            v["allowMultipleConversions"] == "true",
                        ),
                        spacing="5",
                    ),
                ),
                card(
                    rx.heading("Targeting", size="4", as_="h2"),
                    rx.text("Operating systems (none checked: all)", size="2", weight="medium"),
                    rx.flex(
                        *[
                            _checkbox(
                                f"operatingSystem.{n}",
                                os,
                                s.operating_systems.contains(os),
                                value=os,
                            )
                            for n, os in enumerate(OS_CHOICES)
                        ],
                        wrap="wrap",
                        gap="4",
                    ),
                    field_error(errors, "operatingSystem"),
                    rx.grid(
                        f(
                            "Countries (only these)",
                            "geotargeting.countriesInclude",
                            placeholder="US, DE",
                            hint="ISO codes; empty: everywhere.",
                        ),
                        f(
                            "Countries (not these)",
                            "geotargeting.countriesExclude",
                            placeholder="FR",
                        ),
                        columns=rx.breakpoints(initial="1", md="2"),
                        spacing="3",
                        width="100%",
                    ),
                ),
                card(rx.heading("Rule", size="4", as_="h2"), rule_builder(s)),
                rx.hstack(
                    rx.button("Save mission", type="submit", size="3"),
                    rx.cond(
                        s.mission_id != "",
                        rx.link(
                            rx.button("Test this rule", type="button", variant="soft", size="3"),
                            href=routes.tester(s.game_id, s.mission_id),
                        ),
                    ),
                    spacing="3",
                ),
                width="100%",
                spacing="4",
            ),
            on_submit=s.save,
            key=s.form_key.to_string(),
            width="100%",
        ),
        rx.cond(
            s.preview != "",
            card(
                rx.heading("As the offers API shows it", size="4", as_="h2"),
                rx.text(
                    "Each offerwall sees the payout in its currency and its own tracking link.",
                    size="2",
                    color_scheme="gray",
                ),
                rx.code_block(
                    s.preview, language="json", width="100%", data_testid="offer-preview"
                ),
            ),
        ),
    )


def tester() -> rx.Component:
    s = RuleTesterState
    return page(
        "Rule tester",
        game_tabs(s, routes.TESTER),
        rx.form(
            rx.vstack(
                card(
                    rx.heading("Rule", size="4", as_="h2"),
                    rule_builder(s),
                    _checkbox(
                        "repeatable", "Repeatable (allow multiple conversions)", s.repeatable
                    ),
                ),
                card(
                    rx.heading("Events, in order", size="4", as_="h2"),
                    rx.text(
                        "One per line: EVENT [value] [trait=value …], or a JSON object.",
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
                    ),
                    field_error(s.errors, "events"),
                    rx.button("Run", type="submit", size="3"),
                ),
                width="100%",
                spacing="4",
            ),
            on_submit=s.run,
            key=s.form_key.to_string(),
            width="100%",
        ),
        rx.cond(
            s.steps.length() > 0,
            card(
                rx.heading("Event by event", size="4", as_="h2"),
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
                data_table(
                    ("#", "Event", "Value", "Traits", "Outcome", "Count", "Run", "Sum", ""),
                    s.steps,
                    lambda t: [
                        t.n,
                        t.event,
                        t.value,
                        t.traits,
                        rx.match(
                            t.outcome,
                            ("passes", rx.badge("passes", color_scheme="green")),
                            ("fails the filter", rx.badge("fails the filter", color_scheme="red")),
                            rx.badge(t.outcome, color_scheme="gray"),
                        ),
                        t.count,
                        t.run,
                        t.total,
                        rx.cond(t.completed, rx.badge("completes", color_scheme="green")),
                    ],
                    test_id="test-step",
                    size="1",
                ),
            ),
        ),
    )


def quest() -> rx.Component:
    s = QuestState
    v, errors = s.values, s.errors

    def f(label: str, name: str, **props) -> rx.Component:
        return field(
            label,
            name,
            errors=errors,
            default_value=v[name].to(str),
            required=props.pop("required", False),
            **props,
        )

    def chosen_row(m: rx.Var, i: rx.Var) -> rx.Component:
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

    return page(
        rx.cond(s.quest_id != "", "Edit quest", "New quest"),
        game_tabs(s, routes.MISSIONS),
        rx.form(
            rx.vstack(
                card(
                    rx.heading("Quest", size="4", as_="h2"),
                    f("Name", "name", required=True),
                    f("Destination URL", "destinationUrl", required=True, type="url"),
                    f("Description", "description"),
                    f("Instructions", "instructions"),
                    f(
                        "Start cap (players)",
                        "startCap",
                        type="number",
                        min=1,
                        hint="Empty: unlimited.",
                    ),
                    _checkbox("isActive", "Active", v["isActive"] == "true"),
                ),
                card(
                    rx.heading("Missions, in order", size="4", as_="h2"),
                    rx.foreach(s.chosen, chosen_row),
                    rx.cond(
                        s.chosen.length() == 0,
                        rx.text("Add missions from the list below.", color_scheme="gray"),
                    ),
                    field_error(errors, "missions"),
                    rx.divider(),
                    rx.text("Standalone missions of this game", size="2", weight="medium"),
                    rx.foreach(
                        s.available,
                        lambda m: rx.hstack(
                            rx.text(m["title"], flex="1"),
                            rx.button(
                                "Add",
                                size="1",
                                variant="soft",
                                on_click=s.add(m["id"]),
                                type="button",
                            ),
                            width="100%",
                        ),
                    ),
                ),
                rx.button("Save quest", type="submit", size="3"),
                width="100%",
                spacing="4",
            ),
            on_submit=s.save,
            key=s.form_key.to_string(),
            width="100%",
        ),
    )
