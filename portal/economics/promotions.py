"""The workspace's Promotions page (docs/publisher-integration.md#promotions): the
offerwall's currency sales with "End now", the form that adds one, and beside it a
preview of the wall with the banner and boosted payouts. Staff see it for any publisher
(`?offerwall=<id>`)."""

from zoneinfo import available_timezones

import reflex as rx

from portal import routes
from portal.components.confirm import confirm_button
from portal.components.forms import (
    TIME_ZONES,
    field,
    field_error,
    form_error,
    native_select,
    submission_count,
)
from portal.components.layout import card, empty_state, page
from portal.components.offer_form import loaded_form
from portal.components.workspace import (
    PHONE_WIDTH,
    beside_preview,
    endpoint_banner,
    workspace_tabs,
)
from portal.economics.promotions_state import SAMPLE_MULTIPLIER, SAMPLE_NAME, PromotionsState

PREVIEW_HEIGHT = rx.breakpoints(initial="480px", md="min(600px, calc(100vh - 200px))")
STATE_COLOURS = (("running", "green"), ("scheduled", "blue"), ("ended", "gray"))


def promotions() -> rx.Component:
    s = PromotionsState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_PROMOTIONS),
        endpoint_banner(s),
        _list_card(),
        beside_preview(_add_form(), _preview_card()),
    )


# --- the list -------------------------------------------------------------------------


def _list_card() -> rx.Component:
    s = PromotionsState
    return card(
        rx.heading("Promotions", size="4", as_="h2"),
        rx.text(
            "A promotion multiplies the currency your players get for a while, e.g. double "
            "gems for a weekend. You pay the extra from your margin: the network's payout "
            "to you does not change. When two run at once, the larger multiplier wins.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.promotions.length() > 0,
            rx.vstack(
                rx.foreach(s.promotions, _promotion_row),
                spacing="3",
                width="100%",
            ),
            empty_state(
                "badge-percent",
                "No promotions yet",
                "Add one below: your players see it on your wall and in the offers API.",
            ),
        ),
    )


def _promotion_row(p) -> rx.Component:
    s = PromotionsState
    return rx.box(
        rx.flex(
            rx.vstack(
                rx.hstack(
                    rx.text(p.name, weight="bold", size="3", overflow_wrap="anywhere"),
                    rx.badge(p.multiplier, color_scheme="violet", variant="solid"),
                    rx.match(
                        p.state,
                        *[(state, rx.badge(state, color_scheme=c)) for state, c in STATE_COLOURS],
                        rx.badge(p.state),
                    ),
                    align="center",
                    spacing="2",
                    wrap="wrap",
                ),
                rx.text(p.window, size="2"),
                rx.text(
                    p.countries,
                    rx.cond(p.first_only, " · a player's first conversion only", ""),
                    size="2",
                    color_scheme="gray",
                ),
                rx.text("Added by " + p.created_by, size="1", color_scheme="gray"),
                spacing="1",
                min_width="0",
                flex="1",
            ),
            rx.cond(
                p.state != "ended",
                confirm_button(
                    "End now",
                    title="End “" + p.name + "” now?",
                    description="Conversions from now on get the usual amount. A conversion "
                    "already recorded keeps its promotion. A promotion cannot be restarted: "
                    "add a new one instead.",
                    confirm="End now",
                    on_confirm=s.end(p.id, s.submitted),
                    size="2",
                    color_scheme="red",
                    variant="soft",
                    # Its visible words first, then which promotion.
                    aria_label="End now: " + p.name,
                ),
            ),
            gap="3",
            align="start",
            direction=rx.breakpoints(initial="column", sm="row"),
            width="100%",
        ),
        padding="0.75rem",
        border="1px solid var(--gray-a5)",
        border_radius="var(--radius-3)",
        width="100%",
        data_testid="promotion",
        data_state=p.state,
    )


# --- the form -------------------------------------------------------------------------


def _add_form() -> rx.Component:
    s = PromotionsState
    return rx.box(
        loaded_form(
            card(
                rx.heading("Add a promotion", size="4", as_="h2"),
                form_error(s.errors.get("form", "").to(str)),
                submission_count(),
                field(
                    "Name",
                    "name",
                    errors=s.errors,
                    placeholder=SAMPLE_NAME,
                    hint="Players see it on the wall's banner; the {promotion} macro sends it.",
                    max_length=80,
                    on_change=s.edit_name.debounce(250),
                ),
                field(
                    "Multiplier",
                    "multiplier",
                    errors=s.errors,
                    placeholder=SAMPLE_MULTIPLIER,
                    hint="From 1.01 to 10, at most 2 decimals: 2 doubles every payout in "
                    "your currency, 1.5 adds half.",
                    input_mode="decimal",
                    on_change=s.edit_multiplier.debounce(250),
                ),
                _window(),
                _countries(),
                rx.el.label(
                    rx.hstack(
                        rx.el.input(
                            type="checkbox",
                            name="firstConversionOnly",
                            value="true",
                            aria_describedby="first-hint",
                            style={"width": "1rem", "height": "1rem", "margin": 0},
                        ),
                        rx.text("A player's first conversion only", size="2", weight="medium"),
                        align="center",
                        spacing="2",
                    ),
                ),
                rx.text(
                    "Only a player who has no conversion at your offerwall yet gets it: a "
                    "welcome offer.",
                    size="1",
                    color_scheme="gray",
                    id="first-hint",
                ),
                rx.hstack(
                    rx.button("Add promotion", type="submit", size="3"),
                    rx.cond(
                        s.errors.length() > 0,
                        rx.text("Fix the fields marked in red.", size="2", color_scheme="red"),
                    ),
                    align="center",
                    spacing="3",
                    wrap="wrap",
                ),
            ),
            on_submit=s.add,
            key=s.form_key.to_string(),
        ),
        min_width="0",
        width="100%",
    )


def _window() -> rx.Component:
    s = PromotionsState
    return rx.vstack(
        rx.el.label(
            rx.hstack(
                rx.switch(checked=s.weekly, on_change=s.set_weekly, aria_describedby="weekly-hint"),
                rx.text("Repeat every week", size="2", weight="medium"),
                align="center",
                spacing="2",
            ),
        ),
        rx.text(
            rx.cond(
                s.weekly,
                "Each week from the start's day and time to the end's, in the time zone, "
                "beginning the week of the start (e.g. Friday 18:00 to Sunday 23:00). Less "
                "than a week long.",
                "Once, from the start to the end, in the time zone.",
            ),
            size="1",
            color_scheme="gray",
            id="weekly-hint",
        ),
        rx.grid(
            field(
                rx.cond(s.weekly, "First start", "Start"),
                "start",
                errors=s.errors,
                type="datetime-local",
            ),
            field(
                rx.cond(s.weekly, "First end", "End"),
                "end",
                errors=s.errors,
                type="datetime-local",
            ),
            columns=rx.breakpoints(initial="1", sm="2"),
            spacing="3",
            width="100%",
        ),
        field(
            "Time zone",
            "timeZone",
            errors=s.errors,
            default_value="UTC",
            list=TIME_ZONES,
            hint="The start and end are in this zone, e.g. Europe/Berlin; a weekly one "
            "keeps its local times when the clocks change.",
            spell_check=False,
            auto_complete="off",
        ),
        rx.el.datalist(*_zone_options(), id=TIME_ZONES),
        spacing="3",
        width="100%",
    )


def _zone_options() -> list[rx.Component]:
    return [rx.el.option(value=z) for z in sorted(available_timezones())]


def _countries() -> rx.Component:
    s = PromotionsState
    return rx.vstack(
        rx.el.label(rx.text("Countries", size="2", weight="medium"), html_for="countries"),
        rx.flex(
            native_select(
                rx.el.option("Only in", value="false"),
                rx.el.option("Everywhere but", value="true"),
                name="excludeCountries",
                id="excludeCountries",
                aria_label="Only in these countries, or everywhere but them",
                default_value="false",
            ),
            rx.input(
                name="countries",
                id="countries",
                placeholder="US, CA or Germany",
                size="3",
                width="100%",
                auto_complete="off",
                aria_invalid=rx.cond(s.errors.contains("countries"), "true", "false"),
                aria_describedby="countries-hint countries-error",
            ),
            gap="2",
            direction=rx.breakpoints(initial="column", sm="row"),
            width="100%",
        ),
        rx.text(
            "Country codes or names, separated by commas. Empty: every country.",
            size="1",
            color_scheme="gray",
            id="countries-hint",
        ),
        field_error(s.errors, "countries"),
        field_error(s.errors, "excludeCountries"),
        spacing="1",
        width="100%",
    )


# --- the preview ----------------------------------------------------------------------------


def _preview_card() -> rx.Component:
    s = PromotionsState
    return rx.card(
        rx.vstack(
            rx.heading("Preview", size="4", as_="h2"),
            rx.text(
                "Your wall on a phone while the promotion runs: its banner, and each payout "
                "in " + s.currency + " beside the usual amount, struck through. It follows "
                "the name and multiplier you type.",
                size="2",
                color_scheme="gray",
            ),
            rx.cond(
                s.preview != "",
                rx.el.iframe(
                    src_doc=s.preview,
                    sandbox="",
                    title="Preview of your wall with the promotion",
                    style={
                        "width": "100%",
                        "maxWidth": PHONE_WIDTH,
                        "margin": "0 auto",
                        "border": "1px solid var(--gray-a6)",
                        "borderRadius": "var(--radius-4)",
                        "background": "#f6f6fa",
                        "display": "block",
                    },
                    height=PREVIEW_HEIGHT,
                    data_testid="promotion-preview",
                ),
                rx.box(height=PREVIEW_HEIGHT),
            ),
            spacing="3",
            width="100%",
        ),
        size=rx.breakpoints(initial="1", sm="3"),
        width="100%",
        min_width="0",
        position=rx.breakpoints(initial="static", md="sticky"),
        top="76px",
    )
