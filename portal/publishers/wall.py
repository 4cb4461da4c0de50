"""The workspace's Wall page: the hosted wall's link (a webview opens it, an iframe embeds
it, a server signs it), and beside a live preview the form for its theme, the sites that
may frame it and signed links. Staff see it for any publisher (`?offerwall=<id>`)."""

import reflex as rx

from api.publishers import ORIGINS_MAX, TITLE_MAX
from models.tracking import TEST_UID
from portal import routes
from portal.components.forms import field, field_error
from portal.components.layout import card, page
from portal.components.offer_form import loaded_form
from portal.components.workspace import (
    PHONE_WIDTH,
    STEPS_STYLE,
    beside_preview,
    copyable,
    endpoint_banner,
    step,
    workspace_tabs,
)
from portal.publishers.wall_state import WallState

# The frame a phone's screen would be: the preview's width on a wide screen.
# Shorter on a phone, where the page scrolls around it; on a wide screen it stays in view
# beside the form.
PREVIEW_HEIGHT = rx.breakpoints(initial="520px", md="min(640px, calc(100vh - 200px))")
LANGUAGES = (("Python", "python"), ("Node.js", "javascript"), ("PHP", "php"))
ORIGINS_EXAMPLE = "https://games.example.com\nhttps://*.example.com"


def wall() -> rx.Component:
    s = WallState
    return page(
        s.company,
        workspace_tabs(s, routes.PUBLISHER_WALL),
        endpoint_banner(s),
        _link_card(),
        rx.cond(s.test_link != "", _test_player_card()),
        beside_preview(_settings_form(), _preview_card()),
    )


# --- the link -------------------------------------------------------------------------


def _link_card() -> rx.Component:
    s = WallState
    return card(
        rx.heading("Your wall", size="4", as_="h2"),
        rx.text(
            "A page with your players' offers and their progress, in your colours. "
            "Open it in your app or embed it in your site.",
            size="2",
            color_scheme="gray",
        ),
        rx.cond(
            s.wall_link != "",
            rx.vstack(
                copyable("Wall link", s.wall_link, "wall-link"),
                rx.text(
                    "Replace {uid} with your player's id",
                    rx.cond(
                        s.wall_link.contains("{sig}"),
                        " and {sig} with the link's signature (below)",
                        "",
                    ),
                    ", URL-encoded.",
                    size="2",
                    color_scheme="gray",
                ),
                _how_to_open(),
                _signing(),
                spacing="3",
                width="100%",
            ),
            rx.text("The wall gets its link once the offerwall is approved.", size="2"),
        ),
    )


def _test_player_card() -> rx.Component:
    s = WallState
    return card(
        rx.heading("Try it as a player", size="4", as_="h2"),
        rx.text(
            "Your wall for your test player, uid ",
            rx.code(TEST_UID),
            ". Its clicks and conversions are marked as tests: never paid, and not in "
            "your reports.",
            size="2",
            color_scheme="gray",
        ),
        rx.button(
            rx.el.a(
                rx.icon("external-link", size=16),
                "Open my wall as a test player",
                href=s.test_link,
                target="_blank",
                rel="noopener noreferrer",
                data_testid="open-test-wall",
            ),
            as_child=True,
            size="3",
            variant="soft",
            width="fit-content",
            max_width="100%",
        ),
        *_switch(
            "Send postbacks for test conversions",
            s.test_postbacks,
            s.set_test_postbacks,
            hint_id="test-postbacks-hint",
            hint="Off: the test player's conversions send none. On: your postback URL "
            f"receives them like any other, with uid {TEST_UID}.",
        ),
    )


def _switch(
    label: str, checked: rx.Var, on_change: rx.EventHandler, *, hint_id: str, hint: str
) -> tuple[rx.Component, rx.Component]:
    """A switch with its label, and the hint under it."""
    return (
        rx.el.label(
            rx.hstack(
                rx.switch(checked=checked, on_change=on_change, aria_describedby=hint_id),
                rx.text(label, size="2", weight="medium"),
                align="center",
                spacing="2",
            ),
        ),
        rx.text(hint, size="1", color_scheme="gray", id=hint_id),
    )


def _how_to_open() -> rx.Component:
    s = WallState
    return rx.vstack(
        rx.text("How to open it", size="2", weight="medium"),
        rx.el.ol(
            step(
                rx.text.strong("In an app: "),
                "open the link in a webview (Android WebView, iOS WKWebView) or the browser.",
            ),
            step(
                rx.text.strong("On a website: "),
                "embed it in an iframe. List your site's origin under “Sites that may frame "
                "the wall” below, or browsers will not show it.",
            ),
            style=STEPS_STYLE,
        ),
        copyable("Iframe", s.iframe_snippet, "iframe-snippet"),
        spacing="2",
        width="100%",
    )


def _signing() -> rx.Component:
    s = WallState
    return rx.el.details(
        rx.el.summary(
            rx.text("Signing links on your server", size="2", weight="medium", as_="span")
        ),
        rx.vstack(
            rx.text(
                "sig is the lowercase hex HMAC-SHA256 of owid + uid, keyed with your API key. "
                "Compute it on your server: the API key never goes into your app or page.",
                size="2",
            ),
            rx.tabs.root(
                rx.tabs.list(*[rx.tabs.trigger(name, value=name) for name, _ in LANGUAGES]),
                *[
                    rx.tabs.content(_code(s.examples[name].to(str), language), value=name)
                    for name, language in LANGUAGES
                ],
                default_value="Python",
                width="100%",
            ),
            spacing="2",
            width="100%",
            padding_top="0.5rem",
        ),
        width="100%",
    )


def _code(code: rx.Var, language: str) -> rx.Component:
    """A code example that wraps its long lines instead of widening the page."""
    return rx.box(
        rx.code_block(
            code,
            language=language,
            wrap_long_lines=True,
            width="100%",
            custom_style={"overflowX": "hidden"},
            code_tag_props={"style": {"whiteSpace": "pre-wrap", "overflowWrap": "anywhere"}},
        ),
        width="100%",
        min_width="0",
        data_testid=f"signing-{language}",
    )


# --- the form ---------------------------------------------------------------------------


def _settings_form() -> rx.Component:
    s = WallState
    return rx.box(
        loaded_form(
            _theme_card(),
            _access_card(),
            rx.hstack(
                rx.button("Save", type="submit", size="3"),
                rx.cond(
                    s.errors.length() > 0,
                    rx.text("Fix the fields marked in red.", size="2", color_scheme="red"),
                    rx.cond(
                        s.changed,
                        rx.text(
                            "Unsaved changes",
                            size="2",
                            color_scheme="amber",
                            data_testid="unsaved",
                        ),
                    ),
                ),
                align="center",
                spacing="3",
                wrap="wrap",
            ),
            on_submit=s.save,
            key=s.form_key.to_string(),
        ),
        min_width="0",
        width="100%",
    )


def _theme_card() -> rx.Component:
    s = WallState
    return card(
        rx.heading("Theme", size="4", as_="h2"),
        field(
            "Title",
            "title",
            errors=s.errors,
            default_value=s.title,
            placeholder=s.default_title,
            hint=f"The heading players see, at most {TITLE_MAX} characters. Empty: your "
            "offerwall's name.",
            required=False,
            max_length=TITLE_MAX,
            on_change=s.edit_title.debounce(250),
        ),
        field(
            "Logo URL",
            "logo_url",
            errors=s.errors,
            type="url",
            default_value=s.logo_url,
            placeholder="https://cdn.example.com/logo.png",
            hint="Shown beside the title, 32 px high. Empty: no logo.",
            required=False,
            on_change=s.edit_logo.debounce(250),
        ),
        _http_warning(s.logo_url),
        _accent_field(),
        field(
            "Currency icon URL",
            "currency_icon",
            errors=s.errors,
            type="url",
            default_value=s.currency_icon,
            placeholder="https://cdn.example.com/coin.png",
            hint="A small square image shown before every payout. Empty: the currency's name "
            "alone.",
            required=False,
            on_change=s.edit_icon.debounce(250),
        ),
        _http_warning(s.currency_icon),
    )


def _http_warning(url: rx.Var) -> rx.Component:
    """Under an image address typed with http://: browsers block it on an https page."""
    return rx.cond(
        url.lower().startswith("http://"),
        rx.text(
            "An http:// image does not show on https pages (nor in the preview): "
            "use https:// if you can.",
            size="1",
            color_scheme="amber",
        ),
    )


def _accent_field() -> rx.Component:
    """The accent colour: a picker and its hex value, each following the other."""
    s = WallState
    return rx.vstack(
        rx.el.label(rx.text("Accent colour", size="2", weight="medium"), html_for="accent"),
        rx.hstack(
            rx.debounce_input(
                rx.el.input(
                    type="color",
                    aria_label="Colour picker",
                    on_change=s.edit_accent,
                    style={
                        "width": "3rem",
                        "height": "2.5rem",
                        "padding": "2px",
                        "border": "1px solid var(--gray-a7)",
                        "borderRadius": "var(--radius-2)",
                        "background": "var(--color-surface)",
                        "cursor": "pointer",
                    },
                ),
                value=s.swatch,
                debounce_timeout=120,
            ),
            rx.debounce_input(
                rx.input(
                    name="accent",
                    id="accent",
                    size="3",
                    max_length=7,
                    width="9rem",
                    font_family="monospace",
                    spell_check=False,
                    auto_complete="off",
                    aria_invalid=rx.cond(s.errors.contains("accent"), "true", "false"),
                    aria_describedby="accent-hint accent-error",
                    on_change=s.edit_accent,
                ),
                value=s.accent,
                debounce_timeout=250,
            ),
            align="center",
            spacing="2",
        ),
        rx.text(
            "Buttons, badges, progress and the header's line. A hex colour such as #4f46e5.",
            size="1",
            color_scheme="gray",
            id="accent-hint",
        ),
        field_error(s.errors, "accent"),
        spacing="1",
        width="100%",
    )


def _access_card() -> rx.Component:
    s = WallState
    return card(
        rx.heading("Embedding and links", size="4", as_="h2"),
        rx.vstack(
            rx.el.label(
                rx.text("Sites that may frame the wall", size="2", weight="medium"),
                html_for="origins",
            ),
            rx.text_area(
                name="origins",
                id="origins",
                default_value=s.origins,
                placeholder=ORIGINS_EXAMPLE,
                rows="4",
                width="100%",
                font_family="monospace",
                spell_check=False,
                aria_invalid=rx.cond(s.errors.contains("origins"), "true", "false"),
                aria_describedby="origins-hint origins-error",
                on_change=s.edit_origins.debounce(300),
            ),
            rx.text(
                f"One origin per line, at most {ORIGINS_MAX}: https://host or https://host:port, "
                "https://*.example.com for every subdomain, http://localhost:port while you "
                "develop. No path. Empty: no site may frame it (a webview opens it either way).",
                size="1",
                color_scheme="gray",
                id="origins-hint",
            ),
            field_error(s.errors, "origins"),
            spacing="1",
            width="100%",
        ),
        *_switch(
            "Require signed links",
            s.require_signature,
            s.set_signed,
            hint_id="signed-hint",
            hint="Links without the right sig are refused, so nobody opens another player's "
            "wall by changing the uid. Your server signs each link with your API key.",
        ),
    )


# --- the preview ----------------------------------------------------------------------------


def _preview_card() -> rx.Component:
    s = WallState
    return rx.card(
        rx.vstack(
            rx.heading("Preview", size="4", as_="h2"),
            rx.text(
                "Your wall on a phone, with sample offers. It follows what you type; "
                "players see it once you save.",
                size="2",
                color_scheme="gray",
            ),
            # Drawn once the preview is there, with it: a frame first drawn from the empty
            # srcdoc of the prerendered page and given the preview after hydration
            # navigates twice, and headless Chromium now and then left that sandboxed
            # frame (a process of its own) without a document until a reload.
            rx.cond(s.preview != "", _preview_frame(), rx.box(height=PREVIEW_HEIGHT)),
            spacing="3",
            width="100%",
        ),
        # A phone gives the frame all the width it can.
        size=rx.breakpoints(initial="1", sm="3"),
        width="100%",
        min_width="0",
        position=rx.breakpoints(initial="static", md="sticky"),
        top="76px",
    )


def _preview_frame() -> rx.Component:
    return rx.el.iframe(
        src_doc=WallState.preview,
        # Nothing in it runs, submits or navigates the portal.
        sandbox="",
        title="Preview of your wall",
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
        data_testid="wall-preview",
    )
