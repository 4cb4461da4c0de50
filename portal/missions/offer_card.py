"""The editors' preview: the saved offer as a publisher's player sees it on an offerwall,
and, behind "Show JSON", the record the offers API returns for it."""

from __future__ import annotations

from typing import Any

import reflex as rx


def _thumbnail(src: rx.Var) -> rx.Component:
    # A background image over an icon: where there is no thumbnail, or it does not load, the
    # icon shows (an <img> would show the browser's broken-image sign). Decoration beside
    # the offer's name, so it has no text of its own.
    return rx.box(
        rx.center(rx.icon("image", size=28, color="var(--gray-8)"), position="absolute", inset="0"),
        rx.cond(
            src != "",
            rx.box(
                position="absolute",
                inset="0",
                background_image='url("' + src.to(str) + '")',
                background_size="cover",
                background_position="center",
                data_testid="preview-thumbnail",
            ),
        ),
        position="relative",
        width="88px",
        height="88px",
        flex_shrink="0",
        border_radius="10px",
        overflow="hidden",
        background="var(--gray-a3)",
    )


def _detail(label: str, text: rx.Var) -> rx.Component:
    return rx.cond(
        text != "",
        rx.box(
            rx.text(label, size="1", weight="bold", color_scheme="gray"),
            rx.text(text, size="2", white_space="pre-wrap"),
        ),
    )


def offer_card(preview: rx.Var, show_json: rx.Var, toggle: Any) -> rx.Component:
    """The card and its JSON; `preview` is an OfferPreview var, `toggle` flips `show_json`."""
    mission_line = lambda m: rx.hstack(  # noqa: E731
        rx.text(m.title, size="2", flex="1"),
        rx.text(m.payout, size="2", weight="medium"),
        width="100%",
    )
    card = rx.vstack(
        rx.hstack(
            _thumbnail(preview.thumbnail),
            rx.vstack(
                rx.text(preview.title, size="4", weight="bold"),
                rx.cond(
                    preview.description != "",
                    rx.text(preview.description, size="2", color_scheme="gray"),
                ),
                rx.hstack(
                    rx.badge(
                        rx.cond(preview.kind == "quest", "Up to " + preview.payout, preview.payout),
                        color_scheme="green",
                        size="2",
                        data_testid="preview-payout",
                    ),
                    rx.cond(
                        preview.expires != "",
                        rx.text(preview.expires, size="1", color_scheme="gray"),
                    ),
                    align="center",
                    wrap="wrap",
                ),
                spacing="1",
                min_width="0",
            ),
            spacing="3",
            width="100%",
        ),
        rx.cond(
            preview.missions.length() > 0,
            rx.vstack(
                rx.text("Missions", size="1", weight="bold", color_scheme="gray"),
                rx.foreach(preview.missions, mission_line),
                spacing="1",
                width="100%",
            ),
        ),
        _detail("Instructions", preview.instructions),
        _detail("Requirements", preview.requirements),
        spacing="3",
        width="100%",
        max_width="420px",
        padding="16px",
        border="1px solid var(--gray-a6)",
        border_radius="12px",
        background="var(--color-panel-solid)",
        data_testid="offer-card",
    )
    return rx.vstack(
        rx.heading("As players see it", size="4", as_="h2"),
        rx.text(
            "The saved offer, as an offerwall lists it. Each offerwall shows the payout in its "
            "own currency and links with its own owid.",
            size="2",
            color_scheme="gray",
        ),
        card,
        rx.text(
            "Tracking link: ",
            rx.code(preview.tracking_link, word_break="break-all"),
            size="2",
        ),
        rx.button(
            rx.cond(show_json, "Hide JSON", "Show JSON"),
            type="button",
            variant="soft",
            size="2",
            on_click=toggle,
            aria_expanded=rx.cond(show_json, "true", "false"),
        ),
        rx.cond(
            show_json,
            rx.code_block(
                preview.json,
                language="json",
                wrap_long_lines=True,
                width="100%",
                data_testid="offer-preview",
            ),
        ),
        spacing="3",
        width="100%",
    )
