"""Reports: a chart and a table per day, offer, offerwall, country, operating system or sub
value, with reversed and net payout (and for publishers the currency given with and
without promotions; for staff and designers the games' spend); CSV export. Staff also
have the Margin tab: revenue, payout and margin."""

import reflex as rx

from api.reports import PRESETS
from portal import routes
from portal.components.forms import field_error, native_select
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table, pager
from portal.reports import margin_state
from portal.reports.margin_state import MarginState
from portal.reports.reports_state import FORM_ID, SUBMIT_FORM, ReportState
from portal.state.auth import AuthState


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


# A publisher's currency given with and without promotions (after the figures above).
GIVEN_HEADERS = ("Currency given", "Without promotions", "Under a promotion")
# Staff and designers: what the games spent (their revenue).
SPEND_HEADERS = ("Spend (USD)",)


def _given(r) -> list:
    return [*_amounts(r.given, r.given_base), r.promoted]


def _spend(r) -> list:
    return _amounts(r.spend)


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
    spend = _figures((*HEADERS, *SPEND_HEADERS), lambda r: [*_usd(r), *_spend(r)])
    usd_given = _figures((*HEADERS, *GIVEN_HEADERS), lambda r: [*_usd(r), *_given(r)])
    local_given = _figures((*LOCAL_HEADERS, *GIVEN_HEADERS), lambda r: [*_local(r), *_given(r)])
    return card(
        rx.cond(s.spends, spend, rx.cond(local, local_given, usd_given)),
        # Rows come a page at a time (the totals are every row's); one page needs no pager.
        rx.cond(
            s.pages > 1,
            rx.box(pager(s.page, s.pages, s.total, s.go), width="100%", data_testid="report-pager"),
        ),
        rx.cond(local, rx.text(s.currency_note, size="2", color_scheme="gray")),
        rx.text(
            "Conversions and payout count every approved conversion, those reversed since "
            "included; net payout is payout minus reversed payout. A reversal counts on its "
            "conversion's day. Refused clicks were not redirected (targeting, a cap, the "
            "fraud screening) and are not among the clicks.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.spends,
            rx.text(
                "Spend is what the games pay for their conversions: the revenue of the "
                "approved and held ones (rejected and reversed ones give theirs back).",
                size="2",
                color_scheme="gray",
            ),
            rx.text(
                "Currency given is what your players received, with your promotions' "
                "multipliers; without promotions it is the payout. Under a promotion "
                "counts the conversions a promotion multiplied.",
                size="2",
                color_scheme="gray",
            ),
        ),
    )


def report_tabs(current: str) -> rx.Component:
    """Staff's two reports: traffic (this page) and margin."""

    def tab(label: str, href: str) -> rx.Component:
        return rx.link(
            rx.button(label, variant="solid" if href == current else "soft", size="2"),
            href=href,
            aria_current="page" if href == current else None,
        )

    return rx.cond(
        AuthState.user_role == "staff",
        rx.hstack(
            tab("Traffic", routes.REPORTS),
            tab("Margin", routes.REPORTS_MARGIN),
            spacing="2",
            wrap="wrap",
            data_testid="report-tabs",
        ),
    )


def reports() -> rx.Component:
    s = ReportState
    return page(
        "Reports",
        report_tabs(routes.REPORTS),
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


MARGIN_HEADERS = ("", "Conversions", "Held", "Revenue", "Payout", "Margin", "Margin %")


def _margin_filters() -> rx.Component:
    s = MarginState
    return rx.form(
        rx.flex(
            rx.el.label(
                rx.vstack(
                    rx.text("Group", size="2", weight="medium"),
                    native_select(
                        rx.foreach(s.groupings, lambda g: rx.el.option(g.label, value=g.value)),
                        name="by",
                        default_value=s.by,
                        key=s.by,
                        on_change=rx.call_script(margin_state.SUBMIT_FORM),
                    ),
                    field_error(s.errors, "by"),
                    spacing="1",
                )
            ),
            rx.el.label(
                rx.vstack(
                    rx.text("From", size="2", weight="medium"),
                    rx.input(name="start", type="date", default_value=s.start, key=s.start),
                    field_error(s.errors, "start"),
                    spacing="1",
                )
            ),
            rx.el.label(
                rx.vstack(
                    rx.text("To", size="2", weight="medium"),
                    rx.input(name="end", type="date", default_value=s.end, key=s.end),
                    field_error(s.errors, "end"),
                    spacing="1",
                )
            ),
            rx.button("Show", type="submit", size="2"),
            spacing="3",
            align="end",
            wrap="wrap",
        ),
        id=margin_state.FORM_ID,
        on_submit=s.apply,
    )


def _margin_presets() -> rx.Component:
    return rx.flex(
        *[
            rx.button(
                text, type="button", size="1", variant="soft", on_click=MarginState.preset(key)
            )
            for key, text in PRESETS.items()
        ],
        rx.button(
            "Export CSV",
            type="button",
            size="1",
            variant="outline",
            on_click=MarginState.export,
            margin_left="auto",
        ),
        spacing="2",
        wrap="wrap",
        width="100%",
        role="group",
        aria_label="Date presets",
    )


def _stat(label: str, value: rx.Var, test_id: str, negative: rx.Var | bool = False) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.text(label, size="2", color_scheme="gray"),
            rx.text(
                value,
                size="6",
                weight="bold",
                white_space="nowrap",
                color=rx.cond(negative, "var(--red-11)", "inherit"),
                data_testid=test_id,
            ),
            spacing="1",
        ),
        flex="1 1 10rem",
    )


def _margin_totals() -> rx.Component:
    t = MarginState.totals
    return rx.flex(
        _stat("Revenue", t.revenue, "margin-revenue"),
        _stat("Payout", t.payout, "margin-payout"),
        _stat("Margin", t.margin, "margin-margin", t.negative),
        _stat("Margin %", t.share, "margin-share", t.negative),
        spacing="3",
        wrap="wrap",
        width="100%",
    )


def _margin_cells(r) -> list:
    label = rx.text(
        r.label,
        white_space=rx.cond(MarginState.by == "day", "nowrap", "normal"),
        min_width="7rem",
    )
    margin_text = rx.text(
        r.margin, white_space="nowrap", color=rx.cond(r.negative, "var(--red-11)", "inherit")
    )
    return [
        label,
        r.conversions,
        r.held,
        *_amounts(r.revenue, r.payout),
        margin_text,
        rx.text(r.share, white_space="nowrap"),
    ]


def _margin_table() -> rx.Component:
    s, t = MarginState, MarginState.totals
    total = rx.table.row(
        rx.table.row_header_cell("Total"),
        *[
            rx.table.cell(c, data_label=h)
            for h, c in zip(MARGIN_HEADERS[1:], _margin_cells(t)[1:], strict=True)
        ],
        data_testid="margin-total",
    )
    return card(
        data_table(
            MARGIN_HEADERS,
            s.rows,
            _margin_cells,
            test_id="margin-row",
            extra_rows=[rx.cond(t, total)],
            cards=s.by != "day",
        ),
        rx.text(
            "Revenue is what the games pay, payout what the publishers are paid, and margin "
            "the difference (its share of revenue; – without revenue). They count the "
            "approved conversions and those held for review, on each conversion's UTC "
            "day; rejected, reversed and test conversions are left out, and a conversion "
            "from before revenue existed counts as revenue 0. Amounts here are in cents; "
            "the CSV has them to the micro, its totals the exact sums of its rows.",
            size="2",
            color_scheme="gray",
        ),
    )


def margin() -> rx.Component:
    s = MarginState
    return page(
        "Reports",
        report_tabs(routes.REPORTS_MARGIN),
        card(
            _margin_filters(),
            _margin_presets(),
            rx.cond(
                s.errors.contains("form"),
                rx.text(s.errors["form"].to(str), color_scheme="red", size="2", role="alert"),
            ),
        ),
        rx.cond(s.totals, _margin_totals()),
        rx.cond(
            s.rows.length() > 0,
            _margin_table(),
            card(
                empty_state(
                    "chart-column",
                    "Nothing in this range",
                    "Revenue and margin appear here as conversions are made.",
                )
            ),
        ),
    )
