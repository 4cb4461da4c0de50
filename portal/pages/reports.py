"""Reports: a chart and a table per day, offer, offerwall or country; CSV export."""

import reflex as rx

from portal.components.forms import native_select
from portal.components.layout import card, empty_state, page
from portal.components.tables import data_table
from portal.state.reports import ReportState

LABELS = [
    ("day", "Per day"),
    ("offer", "Per offer"),
    ("offerwall", "Per offerwall"),
    ("country", "Per country"),
]


def reports() -> rx.Component:
    s = ReportState
    return page(
        "Reports",
        card(
            rx.form(
                rx.flex(
                    rx.el.label(
                        rx.vstack(
                            rx.text("Group", size="2", weight="medium"),
                            native_select(
                                *[rx.el.option(text, value=value) for value, text in LABELS],
                                name="dimension",
                                default_value=s.dimension,
                                key=s.dimension,
                            ),
                            spacing="1",
                        )
                    ),
                    rx.el.label(
                        rx.vstack(
                            rx.text("From", size="2", weight="medium"),
                            rx.input(name="start", type="date", default_value=s.start, key=s.start),
                            spacing="1",
                        )
                    ),
                    rx.el.label(
                        rx.vstack(
                            rx.text("To", size="2", weight="medium"),
                            rx.input(name="end", type="date", default_value=s.end, key=s.end),
                            spacing="1",
                        )
                    ),
                    rx.button("Show", type="submit", size="2"),
                    rx.button(
                        "Export CSV", type="button", size="2", variant="soft", on_click=s.export
                    ),
                    gap="3",
                    align="end",
                    wrap="wrap",
                ),
                on_submit=s.apply,
            ),
            rx.cond(s.error != "", rx.text(s.error, color_scheme="red", size="2", role="alert")),
        ),
        rx.cond(
            s.rows.length() > 0,
            rx.vstack(
                card(
                    rx.heading("Clicks and conversions", size="4", as_="h2"),
                    rx.recharts.composed_chart(
                        rx.recharts.bar(data_key="clicks", fill="var(--violet-8)", name="Clicks"),
                        rx.recharts.line(
                            data_key="conversions",
                            stroke="var(--green-9)",
                            name="Conversions",
                            type_="monotone",
                        ),
                        rx.recharts.x_axis(data_key="label"),
                        rx.recharts.y_axis(),
                        rx.recharts.legend(),
                        rx.recharts.graphing_tooltip(),
                        data=s.chart,
                        width="100%",
                        height=280,
                    ),
                ),
                card(
                    data_table(
                        ("", "Clicks", "Starts", "Conversions", "Conversion rate", "Payout (USD)"),
                        s.rows,
                        lambda r: [r.label, r.clicks, r.starts, r.conversions, r.rate, r.payout],
                        test_id="report-row",
                        extra_rows=[
                            rx.cond(
                                s.totals,
                                rx.table.row(
                                    rx.table.row_header_cell("Total"),
                                    rx.table.cell(s.totals.clicks),
                                    rx.table.cell(s.totals.starts),
                                    rx.table.cell(s.totals.conversions),
                                    rx.table.cell(s.totals.rate),
                                    rx.table.cell(s.totals.payout),
                                    data_testid="report-total",
                                ),
                            )
                        ],
                    ),
                ),
                width="100%",
                spacing="4",
            ),
            card(
                empty_state(
                    "chart-column", "Nothing in this range", "Clicks and conversions appear here."
                )
            ),
        ),
    )
