"""The publisher's offer catalog: every offer their offerwall lists, as cards with the
payout in their currency and a tracking link to copy."""

import reflex as rx

from api.listing import UID_PLACEHOLDER
from portal import routes
from portal.components.layout import card, empty_state, page
from portal.components.wording import counted
from portal.components.workspace import endpoint_banner, workspace_tabs
from portal.listing.state import CatalogState


def _fact(label: str, value: rx.Var) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="1", color_scheme="gray"),
        rx.text(value, size="2"),
        spacing="0",
        min_width="8rem",
    )


def _link(offer) -> rx.Component:
    # The link ends with the placeholder; it is marked so nobody misses replacing it.
    before = offer.tracking_link.split(UID_PLACEHOLDER)[0]
    return rx.vstack(
        rx.text("Tracking link", size="1", color_scheme="gray"),
        rx.flex(
            rx.code(
                before,
                rx.el.mark(UID_PLACEHOLDER, style={"padding": "0 2px", "border-radius": "3px"}),
                size="2",
                word_break="break-all",
                data_testid="tracking-link",
            ),
            rx.button(
                rx.icon("copy", size=14),
                "Copy",
                size="1",
                variant="soft",
                aria_label="Copy the tracking link of " + offer.name,
                on_click=[rx.set_clipboard(offer.tracking_link), rx.toast.info("Copied.")],
            ),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        rx.text(
            "Replace " + UID_PLACEHOLDER + " with your user's id.",
            size="1",
            color_scheme="gray",
        ),
        spacing="1",
        width="100%",
    )


def _offer(offer) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.flex(
                rx.avatar(
                    src=offer.thumbnail,
                    fallback=offer.name[0],
                    size="5",
                    radius="medium",
                    alt="",
                ),
                rx.vstack(
                    rx.heading(offer.name, size="4", as_="h2"),
                    rx.hstack(
                        rx.badge(
                            offer.kind,
                            color_scheme=rx.cond(offer.kind == "quest", "violet", "blue"),
                        ),
                        rx.cond(
                            offer.missions > 0,
                            rx.text(
                                counted(offer.missions, "mission", "missions"),
                                size="1",
                                color_scheme="gray",
                            ),
                        ),
                        align="center",
                    ),
                    spacing="1",
                    flex="1",
                    min_width="0",
                ),
                rx.vstack(
                    rx.text(offer.payout, size="5", weight="bold", data_testid="offer-payout"),
                    rx.text(offer.payout_usd, size="1", color_scheme="gray"),
                    align="end",
                    spacing="0",
                ),
                spacing="3",
                align="center",
                width="100%",
            ),
            rx.flex(
                _fact("Caps", offer.caps_left),
                _fact("Expiry", offer.expires),
                _fact("Targeting", offer.targeting),
                spacing="4",
                wrap="wrap",
            ),
            _link(offer),
            spacing="3",
            width="100%",
        ),
        size="2",
        width="100%",
        data_testid="catalog-offer",
    )


def catalog() -> rx.Component:
    s = CatalogState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_OFFERS),
        endpoint_banner(s),
        card(
            rx.flex(
                rx.heading("Offers", size="4", as_="h2"),
                rx.form(
                    rx.hstack(
                        rx.input(
                            name="search",
                            placeholder="Name, description or tag",
                            size="2",
                            aria_label="Search offers",
                            default_value=s.search,
                            width="16rem",
                        ),
                        rx.button("Search", type="submit", size="2", variant="soft"),
                    ),
                    on_submit=s.find,
                ),
                justify="between",
                wrap="wrap",
                spacing="3",
                width="100%",
            ),
            rx.text(
                "Every offer your offerwall lists now, as the offers API returns them.",
                size="2",
                color_scheme="gray",
            ),
        ),
        rx.cond(
            s.offers.length() > 0,
            rx.grid(
                rx.foreach(s.offers, _offer),
                columns=rx.breakpoints(initial="1", md="2"),
                spacing="4",
                width="100%",
            ),
            card(
                rx.cond(
                    s.search != "",
                    empty_state("search-x", "No offer matches", "Try another word."),
                    empty_state("inbox", "No offers to list right now", "New offers appear here."),
                )
            ),
        ),
    )
