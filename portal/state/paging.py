"""The paging, status filter and search that the staff queue and the delivery log share,
and the test player's filter of the lists that hold its conversions (`PlayerFilter`).

A Reflex state mixin: a state lists it first among its bases, declares its own `rows`,
and fetches one `paging.Window` in `_fetch` (`_show` puts it on the page). Each handler here is wrapped by
`refusals`, so an expired session on a pager or a filter leads to the sign-in page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from api.core.paging import Window
from models.tracking import TEST_CHOICES
from portal.state.auth import refusals


class Paged(rx.State, mixin=True):
    total: int = 0
    page: int = 1
    pages: int = 1
    status_filter: str = ""
    search: str = ""

    async def _fetch(self) -> None:
        raise NotImplementedError

    @rx.var
    def status_choice(self) -> str:
        """The filter control's value: the chosen status, or "all"."""
        return self.status_filter or "all"

    def _status_from_query(self) -> None:
        """A link may open the list filtered (`?status=failed`, the staff dashboard's), or
        on every status (`?status=all`, as the filter's "All" says)."""
        status = self.router.url.query_parameters.get("status")
        if status is not None:
            self.status_filter = "" if status == "all" else status
            self.search, self.page = "", 1

    def _show(self, window: Window[Any], shown: Callable[[Any], Any] | None = None) -> None:
        """The window's rows, each as `shown` writes it for the page (as they are: none)."""
        self.rows = [shown(row) for row in window.rows] if shown else window.rows
        self.total, self.page, self.pages = window.total, window.page, window.pages

    @rx.event
    @refusals()
    async def filter_status(self, status: str | list[str]):
        chosen = status if isinstance(status, str) else (status[0] if status else "all")
        self.status_filter = "" if chosen == "all" else chosen
        self.page = 1
        await self._fetch()

    @rx.event
    @refusals()
    async def find(self, form: dict[str, str]):
        self.search, self.page = form.get("search", ""), 1
        await self._fetch()

    @rx.event
    @refusals()
    async def go(self, page: int):
        self.page = page
        await self._fetch()


class PlayerFilter(Paged, mixin=True):
    """`Paged` for the lists that hold the test player's conversions (the Conversions page,
    the delivery log), with their filter: every row (the default: a test row is marked,
    never hidden), real players' only, or the test player's only."""

    players: str = ""  # "" (every row) or a key of `TEST_CHOICES`

    @rx.var
    def players_choice(self) -> str:
        """The filter control's value: the chosen players, or "all"."""
        return self.players or "all"

    def _test_only(self) -> bool | None:
        """What the list's query narrows to: the test player's (True), real (False), both."""
        return TEST_CHOICES.get(self.players)

    @rx.event
    @refusals()
    async def filter_players(self, choice: str):
        # Whatever the browser sends, the list is narrowed to a known choice or not at all.
        self.players = choice if choice in TEST_CHOICES else ""
        self.page = 1
        await self._fetch()
