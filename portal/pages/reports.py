"""Reports: a chart and a table per day, offer, offerwall, country, operating system or sub
value, with reversed and net payout; CSV export."""

import reflex as rx

from api.reports import PRESETS
from portal.components.forms import field_error, native_select
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.state.reports import FORM_ID, SUBMIT_FORM, ReportState


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
                    rx.foreach(s.groupings, lambda g: rx.el.option(g.label, value=g.value)),
                    name="dimension",
                    default_value=s.dimension,
                    # Drawn again once the account's groupings are there to choose from.
                    key=s.dimension + s.groupings.length().to_string(),
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


HEADERS = (
    "",
    "Clicks",
    "Starts",
    "Conversions",
    "Conversion rate",
    "EPC",
    "Payout (USD)",
    "Reversed",
    "Net payout (USD)",
    "Refused clicks",
)
# A publisher paid in another currency: the amounts in theirs, and the payout in USD.
LOCAL_HEADERS = (
    *HEADERS[:6],
    "Payout",
    "Reversed",
    "Net payout",
    "Payout (USD)",
    "Refused clicks",
)


def _reversed(count: rx.Var, amount: rx.Var) -> rx.Var:
    """How many conversions were reversed and their payout ("2 · $3.00"), or 0."""
    return rx.cond(count > 0, count.to_string() + " · " + amount, "0")


def _amounts(*values) -> list[rx.Component]:
    # An amount stays on one line: "200" above "GEM" reads as two figures.
    return [rx.text(v, white_space="nowrap") for v in values]


def _usd(r) -> list:
    reversed_ = _reversed(r.reversed, r.reversed_payout)
    return [
        r.clicks,
        r.starts,
        r.conversions,
        r.rate,
        *_amounts(r.epc, r.payout, reversed_, r.net_payout),
        r.refused,
    ]


def _local(r) -> list:
    reversed_ = _reversed(r.reversed, r.reversed_local)
    return [
        r.clicks,
        r.starts,
        r.conversions,
        r.rate,
        *_amounts(r.epc_local, r.payout_local, reversed_, r.net_local, r.payout),
        r.refused,
    ]


def _figures(headers: tuple[str, ...], figures) -> rx.Component:
    """The rows and the totals, each row's label then `figures(row)` under `headers`."""
    s, t = ReportState, ReportState.totals

    def cells(r) -> list:
        # A day stays on one line; an offer's long name may wrap.
        label = rx.text(
            r.label, white_space=rx.cond(s.dimension == "day", "nowrap", "normal"), min_width="7rem"
        )
        return [label, *figures(r)]

    total = rx.table.row(
        rx.table.row_header_cell("Total"),
        # Named on a phone too, where the row is a card.
        *[rx.table.cell(c, data_label=h) for h, c in zip(headers[1:], figures(t), strict=True)],
        data_testid="report-total",
    )
    return data_table(
        headers,
        s.rows,
        cells,
        test_id="report-row",
        extra_rows=[rx.cond(t, total)],
        # A month of days as cards would be some 12,000 px on a phone: lines instead.
        cards=s.dimension != "day",
    )


def _table() -> rx.Component:
    s = ReportState
    local = s.currency_note != ""
    return card(
        rx.cond(local, _figures(LOCAL_HEADERS, _local), _figures(HEADERS, _usd)),
        rx.cond(local, rx.text(s.currency_note, size="2", color_scheme="gray")),
        rx.text(
            "Conversions and payout count every approved conversion, those reversed since "
            "included; net payout is payout minus reversed payout. A reversal counts on its "
            "conversion's day. Refused clicks were not redirected (targeting, a cap, the "
            "fraud screening) and are not among the clicks.",
            size="2",
            color_scheme="gray",
        ),
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
