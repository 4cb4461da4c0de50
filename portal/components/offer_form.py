"""What the mission editor and the quest builder share: the offer's common inputs, the
targeting card (operating systems, and countries picked by name), the form that takes no
typing until its page has loaded, and the row with Save and "Back to missions"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from api.core.countries import countries
from api.missions import PICKERS, TYPED
from models.offer_schemas import OPERATING_SYSTEMS
from portal import routes
from portal.components.forms import field_error, submission_count
from portal.components.layout import card

COUNTRY_LIST = "country-names"
# An input whose `form` names no form: Enter in it never submits the editor's form.
NO_FORM = {"form": "country-picker"}
Field = Callable[..., rx.Component]


def checkbox(name: str, label: str, checked: Any, value: str = "true") -> rx.Component:
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


def loaded_form(*children: rx.Component, on_submit: Any, key: rx.Var) -> rx.Component:
    """The editor's form, disabled until the page's load has filled it: nothing typed
    before then is lost to the refill (`key` changes when the state refills it)."""
    loading = ~rx.State.is_hydrated
    return rx.form(
        rx.el.fieldset(
            rx.vstack(*children, width="100%", spacing="4"),
            disabled=loading,
            aria_busy=rx.cond(loading, "true", "false"),
            style={"border": "none", "padding": 0, "margin": 0, "min-width": 0},
            opacity=rx.cond(loading, "0.6", "1"),
            data_testid="editor-fieldset",
        ),
        on_submit=on_submit,
        key=key,
        width="100%",
        # The server names every problem at once, beside its input; the browser's own
        # checks would stop at the first. Leaving with unsaved input asks first.
        no_validate=True,
        data_unsaved_guard=True,
    )


def url_fields(f: Field) -> list[rx.Component]:
    return [
        f(
            "Destination URL",
            "destinationUrl",
            required=True,
            type="url",
            hint="Where the tracking link sends the player (platformid is added).",
        ),
        f("Preview URL", "previewUrl", type="url", hint="A page that shows the game."),
        f("Thumbnail URL", "thumbnail", type="url", hint="An https image, square."),
        f("Expires on", "expirationDate", type="date", hint="Empty: never."),
    ]


def text_fields(f: Field) -> list[rx.Component]:
    return [
        f("Description", "description"),
        f("Instructions", "instructions"),
        f("Requirements", "requirements"),
        f("Tags", "tags", hint="Comma-separated."),
    ]


def _country_options() -> rx.Component:
    return rx.el.datalist(*[rx.el.option(value=c.label) for c in countries()], id=COUNTRY_LIST)


def country_picker(
    state: Any, which: str, label: str, hint: str, hint_when_empty: str = ""
) -> rx.Component:
    """Countries chosen by name from a list (type, pick with the arrows and Enter), shown
    as removable chips, submitted as ISO codes in one hidden input. Enter or leaving the
    box turns a name ("USA", "uk", "Deutschland") into its chip; text that names no
    country stays, with a message under it, and is submitted too, so a save refuses it."""
    chips = state.include_chips if which == "include" else state.exclude_chips
    codes = state.countries_include if which == "include" else state.countries_exclude
    typed = state.typed_include if which == "include" else state.typed_exclude

    def chip(c: rx.Var) -> rx.Component:
        return rx.badge(
            c["label"],
            rx.icon_button(
                rx.icon("x", size=12),
                size="1",
                variant="ghost",
                type="button",
                aria_label="Remove " + c["label"].to(str),
                on_click=state.remove_country(which, c["code"]),
            ),
            variant="soft",
            size="2",
            data_testid=f"country-chip-{which}",
        )

    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        rx.flex(rx.foreach(chips, chip), wrap="wrap", gap="2"),
        # Controlled (emptied once a country is added), every change sent at once: a pick
        # followed at once by more typing loses neither.
        rx.debounce_input(
            rx.input(
                aria_label=label,
                list=COUNTRY_LIST,
                placeholder="Type a name, then Enter",
                auto_complete="off",
                size="3",
                width="100%",
                on_change=state.type_country(which),
                on_key_down=state.country_key(which),
                on_blur=state.country_blur(which),
                custom_attrs=NO_FORM,
                aria_invalid=rx.cond(state.errors.contains(PICKERS[which]), "true", "false"),
                aria_describedby=f"{PICKERS[which]}-error",
            ),
            value=typed,
            debounce_timeout=0,
        ),
        rx.el.input(type="hidden", name=PICKERS[which], value=codes.join(",")),
        rx.el.input(type="hidden", name=TYPED + PICKERS[which], value=typed),
        rx.text(
            rx.cond(chips.length() == 0, hint_when_empty or hint, hint),
            size="1",
            color_scheme="gray",
        ),
        field_error(state.errors, PICKERS[which]),
        spacing="1",
        width="100%",
    )


def targeting_card(state: Any) -> rx.Component:
    return card(
        rx.heading("Targeting", size="4", as_="h2"),
        rx.text("Operating systems (none checked: all)", size="2", weight="medium"),
        rx.flex(
            *[
                checkbox(f"operatingSystem.{n}", os, state.operating_systems.contains(os), value=os)
                for n, os in enumerate(OPERATING_SYSTEMS)
            ],
            wrap="wrap",
            spacing="5",
        ),
        field_error(state.errors, "operatingSystem"),
        rx.grid(
            country_picker(
                state,
                "include",
                "Only in these countries",
                "Only players there can start it.",
                hint_when_empty="None chosen: everywhere.",
            ),
            country_picker(
                state, "exclude", "Not in these countries", "Players there cannot start it."
            ),
            columns=rx.breakpoints(initial="1", md="2"),
            spacing="3",
            width="100%",
        ),
        _country_options(),
    )


def save_row(label: str, game_id: rx.Var, *extra: rx.Component) -> rx.Component:
    return rx.hstack(
        submission_count(),
        rx.button(label, type="submit", size="3"),
        *extra,
        rx.link(
            rx.button("Back to missions", type="button", variant="soft", size="3"),
            href=routes.missions(game_id),
        ),
        spacing="3",
        wrap="wrap",
    )
