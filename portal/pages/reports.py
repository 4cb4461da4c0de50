"""Reports: a chart and a table per day, offer, offerwall or country; CSV export."""

import reflex as rx

from api.services.reports import PRESETS
from portal.components.forms import field_error, native_select
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.state.reports import FORM_ID, SUBMIT_FORM, ReportState

LABELS = [
    ("day", "Per day"),
    ("offer", "Per offer"),
    ("offerwall", "Per offerwall"),
    ("country", "Per country"),
]


def _labelled(label: str, control: rx.Component, error: str = "") -> rx.Component:
    parts = [rx.text(label, size="2", weight="medium"), control]
    if error:
        parts.append(field_error(ReportState.errors, error))
    return rx.el.label(rx.vstack(*parts, spacing="1"))


def _choice(label: str, name: str, value: rx.Var, everything: str, options, **props):
    """A select that applies the report as soon as it changes."""
    return _labelled(
        label,
        native_select(
            rx.el.option(everything, value=""),
            rx.foreach(options, lambda o: rx.el.option(o.label, value=o.value)),
            name=name,
            default_value=value,
            on_change=rx.call_script(SUBMIT_FORM),
            **props,
        ),
        name,
    )


def _filters() -> rx.Component:
    s = ReportState
    return rx.form(
        rx.flex(
            _labelled(
                "Group",
                native_select(
                    *[rx.el.option(text, value=value) for value, text in LABELS],
                    name="dimension",
                    default_value=s.dimension,
                    key=s.dimension,
                    on_change=rx.call_script(SUBMIT_FORM),
                ),
            ),
            rx.cond(
                s.games.length() > 0,
                rx.fragment(
                    _choice("Game", "game", s.game, "All games", s.games, key="g" + s.game),
                    _choice(
                        "Offer",
                        "offer",
                        s.offer,
                        rx.cond(s.game == "", "Choose a game first", "All offers"),
                        s.offers,
                        key="o" + s.game + s.offer,
                        disabled=s.game == "",
                    ),
                ),
            ),
            _labelled(
                "From",
                rx.input(name="start", type="date", default_value=s.start, key=s.start),
                "start",
            ),
            _labelled(
                "To", rx.input(name="end", type="date", default_value=s.end, key=s.end), "end"
            ),
            rx.button("Show", type="submit", size="2"),
            spacing="3",
            align="end",
            wrap="wrap",
        ),
        id=FORM_ID,
        on_submit=s.apply,
    )


def _presets() -> rx.Component:
    return rx.flex(
        *[
            rx.button(
                text, type="button", size="1", variant="soft", on_click=ReportState.preset(key)
            )
            for key, text in PRESETS.items()
        ],
        rx.button(
            "Export CSV",
            type="button",
            size="1",
            variant="outline",
            on_click=ReportState.export,
            margin_left="auto",
        ),
        spacing="2",
        wrap="wrap",
        width="100%",
        role="group",
        aria_label="Date presets",
    )


def _chart() -> rx.Component:
    return card(
        rx.heading("Clicks and conversions", size="4", as_="h2"),
        rx.recharts.composed_chart(
            # Drawn at once: a new range or filter replaces the figures, nothing grows.
            rx.recharts.bar(
                data_key="clicks",
                fill="var(--violet-8)",
                name="Clicks",
                is_animation_active=False,
            ),
            rx.recharts.line(
                data_key="conversions",
                stroke="var(--green-9)",
                name="Conversions",
                type_="monotone",
                is_animation_active=False,
            ),
            rx.recharts.x_axis(data_key="label"),
            # Counts: whole numbers on the axis, never half a click.
            rx.recharts.y_axis(allow_decimals=False, width=40),
            rx.recharts.legend(),
            rx.recharts.graphing_tooltip(),
            data=ReportState.chart,
            width="100%",
            height=280,
        ),
    )


HEADERS = ("", "Clicks", "Starts", "Conversions", "Conversion rate", "EPC", "Payout (USD)")


def _table() -> rx.Component:
    s, t = ReportState, ReportState.totals
    local = s.currency_note != ""

    def cells(r) -> list:
        return [
            # A day stays on one line; an offer's long name may wrap.
            rx.text(
                r.label,
                white_space=rx.cond(s.dimension == "day", "nowrap", "normal"),
                min_width="7rem",
            ),
            r.clicks,
            r.starts,
            r.conversions,
            r.rate,
            rx.cond(local, r.epc_local, r.epc),
            r.payout,
        ]

    def with_currency(r) -> list:
        return [*cells(r)[:-1], r.payout_local, r.payout]

    total = rx.table.row(
        rx.table.row_header_cell("Total"),
        *[rx.table.cell(c) for c in [t.clicks, t.starts, t.conversions, t.rate]],
        rx.table.cell(rx.cond(local, t.epc_local, t.epc)),
        rx.cond(local, rx.table.cell(t.payout_local)),
        rx.table.cell(t.payout),
        data_testid="report-total",
    )
    return card(
        rx.cond(
            local,
            data_table(
                (*HEADERS[:-1], "Payout", "Payout (USD)"),
                s.rows,
                with_currency,
                test_id="report-row",
                extra_rows=[rx.cond(t, total)],
            ),
            data_table(
                HEADERS, s.rows, cells, test_id="report-row", extra_rows=[rx.cond(t, total)]
            ),
        ),
        rx.cond(local, rx.text(s.currency_note, size="2", color_scheme="gray")),
    )


def reports() -> rx.Component:
    s = ReportState
    return page(
        "Reports",
        card(
            _filters(),
            _presets(),
            rx.cond(
                s.errors.contains("form"),
                rx.text(s.errors["form"].to(str), color_scheme="red", size="2", role="alert"),
            ),
        ),
        rx.cond(
            s.rows.length() > 0,
            rx.vstack(_chart(), _table(), width="100%", spacing="4"),
            card(
                empty_state(
                    "chart-column",
                    "Nothing in this range",
                    "Clicks and conversions appear here as players arrive.",
                )
            ),
        ),
    )
