"""The workspace's Wall page: the hosted wall's link and how to embed it, its theme with a
live preview of the unsaved values, the origins that may frame it and signed links.

The form's text inputs are uncontrolled (`form_key` refills them after a load or a save);
each change is sent, debounced, to redraw the preview. The accent colour's two inputs (the
picker and its hex text) follow `accent`, so either one moves the other. The service
(api/publishers/wall_settings.py) checks the offerwall and the values on every save; the
preview is the hosted wall's (`api/wall/page.py`, `preview_html`) with the typed theme."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.core.refusals import DomainError
from api.publishers import DEFAULT_ACCENT, WallSettings, wall_settings
from api.wall.page import preview_html
from models import Offerwall
from portal.backend import box, settings
from portal.state.auth import refusals
from portal.state.workspace import OfferwallScoped


def _or_none(check: Callable[[str], object], value: str) -> object:
    try:
        return check(value)
    except ValueError:
        return None


class WallState(OfferwallScoped):
    # The saved wall's link, the iframe that embeds it, and code that signs it.
    wall_link: str = ""
    iframe_snippet: str = ""
    # The wall as the offerwall's test player sees it (signed), and whether the test
    # player's conversions send postbacks (saved as soon as it is switched).
    test_link: str = ""
    test_postbacks: bool = False
    examples: dict[str, str] = {}
    # The form's values as typed (not saved yet); the saved ones stay on the server.
    title: str = ""
    logo_url: str = ""
    accent: str = DEFAULT_ACCENT
    currency_icon: str = ""
    origins: str = ""
    require_signature: bool = False
    _saved: WallSettings = WallSettings()
    # The colour picker's value (the typed colour once it is one, else the saved one), and
    # whether the form differs from what is saved.
    swatch: str = DEFAULT_ACCENT
    changed: bool = False
    # The offerwall's name: the wall's title when none is given.
    default_title: str = ""
    errors: dict[str, str] = {}
    preview: str = ""
    form_key: int = 0

    @rx.event
    @refusals()
    async def load(self):
        self.errors = {}
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        self.default_title = wall.name
        self._show_saved(wall, wall_settings.read_settings(wall))
        await self._redraw()
        return None

    def _show_saved(self, wall: Offerwall, saved: WallSettings) -> None:
        """The saved settings in the form (refilled), and the link made from them."""
        self._saved = saved
        self.title, self.logo_url, self.accent = saved.title, saved.logo_url, saved.accent
        self.currency_icon, self.origins = saved.currency_icon, saved.origins_text
        self.require_signature = saved.require_signature
        self.form_key += 1
        base = settings().base_url
        self.wall_link = wall_settings.link_for(base_url=base, offerwall=wall)
        self.iframe_snippet = wall_settings.iframe_snippet(self.wall_link) if wall.owid else ""
        self.test_link = wall_settings.test_player_link(base_url=base, box=box(), offerwall=wall)
        self.test_postbacks = bool(wall.test_postbacks)
        self.examples = (
            wall_settings.signing_examples(base_url=base, owid=wall.owid) if wall.owid else {}
        )
        self._compare()

    def _compare(self) -> None:
        saved = self._saved
        accent = _or_none(wall_settings.normalised_accent, self.accent)
        self.swatch = str(accent or saved.accent)
        self.changed = (
            self.title.strip() != saved.title
            or self.logo_url.strip() != saved.logo_url
            or accent != saved.accent
            or self.currency_icon.strip() != saved.currency_icon
            or _or_none(wall_settings.normalised_origins, self.origins) != saved.origins
            or self.require_signature != saved.require_signature
        )

    async def _redraw(self) -> None:
        """The preview of the form's theme as it is now."""
        title, logo, accent, icon = self.title, self.logo_url, self.accent, self.currency_icon

        def work(_s: Session, offerwall: Offerwall, _a: Account) -> str:
            theme = wall_settings.preview_theme(
                offerwall, title=title, logo_url=logo, accent=accent, currency_icon=icon
            )
            return preview_html(
                theme, exchange_rate=offerwall.exchange_rate, decimals=offerwall.currency_decimals
            )

        self.preview = await self._on_offerwall(work)

    def _typed(self, name: str, value: str) -> bool:
        """Keep a typed value; True when it is new. (A debounced change that arrives after
        a save with the same value leaves the save's error beside its input.)"""
        if getattr(self, name) == value:
            return False
        setattr(self, name, value)
        self.errors = {k: v for k, v in self.errors.items() if k != name}
        self._compare()
        return True

    @rx.event
    @refusals()
    async def edit_title(self, value: str):
        if self._typed("title", value):
            await self._redraw()

    @rx.event
    @refusals()
    async def edit_logo(self, value: str):
        if self._typed("logo_url", value):
            await self._redraw()

    @rx.event
    @refusals()
    async def edit_accent(self, value: str):
        if self._typed("accent", value):
            await self._redraw()

    @rx.event
    @refusals()
    async def edit_icon(self, value: str):
        if self._typed("currency_icon", value):
            await self._redraw()

    @rx.event
    @refusals()
    async def edit_origins(self, value: str):
        self._typed("origins", value)

    @rx.event
    def set_signed(self, value: bool):
        self.require_signature = bool(value)
        self._compare()

    @rx.event
    @refusals()
    async def set_test_postbacks(self, value: bool):
        requested = self._requested()

        def work(session: Session, _o: Offerwall, account: Account) -> bool:
            return wall_settings.set_test_postbacks(
                session=session, account=account, requested=requested, send=bool(value)
            )

        self.test_postbacks = await self._on_offerwall(work, write=True)
        if self.test_postbacks:
            return rx.toast.success("The test player's conversions now send postbacks.")
        return rx.toast.success("The test player's conversions send no postbacks.")

    @rx.event
    @refusals(into="errors")
    async def save(self, form: dict[str, str]):
        """Save the form; every refused input gets its message beside it. Whether links
        must be signed is the switch as the server last heard it (it sends each change)."""
        values = {name: str(form.get(name, "")) for name in wall_settings.TYPED_FIELDS}
        signed, requested = self.require_signature, self._requested()
        for name, value in values.items():
            setattr(self, name, value)
        self.errors = {}
        self._compare()

        def work(
            session: Session, offerwall: Offerwall, account: Account
        ) -> tuple[Offerwall, WallSettings]:
            saved = wall_settings.save_settings(
                session=session,
                account=account,
                requested=requested,
                require_signature=signed,
                **values,
            )
            return offerwall, saved

        try:
            wall, saved = await self._on_offerwall(work, write=True)
        except DomainError:
            await self._redraw()  # what was typed last, refused or not
            raise
        self._show_saved(wall, saved)
        await self._redraw()
        return rx.toast.success("Wall settings saved.")
