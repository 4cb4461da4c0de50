"""The workspace's Promotions page: the offerwall's currency sales (running, scheduled,
ended), the form that adds one, "End now", and a preview of the wall with the promotion
being typed (its name and multiplier; the banner counts down to its end).

Every handler goes through `_on_offerwall`: a publisher acts on their own offerwall, staff
on the one they opened (`?offerwall=<id>`); the use cases (api/publishers/promotions.py)
check it again and name each refused input, shown beside it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.economics.promotions import MULTIPLIER_HIGH, MULTIPLIER_LOW
from api.publishers import promotions, wall_settings
from api.wall.page import preview_html
from models import Offerwall
from models.types import utcnow
from portal.state.auth import SUBMITTED, refusals
from portal.state.workspace import OfferwallScoped

# What the preview shows before anything is typed.
SAMPLE_NAME = "Double Gems Weekend"
SAMPLE_MULTIPLIER = "2"
SAMPLE_LENGTH = timedelta(days=2, hours=4)


def _multiplier(text: str) -> Decimal:
    """The typed multiplier for the preview: the sample's while it is none the rules take."""
    try:
        value = Decimal(text.strip().replace(",", "."))
    except InvalidOperation:
        return Decimal(SAMPLE_MULTIPLIER)
    if not value.is_finite() or not MULTIPLIER_LOW <= value <= MULTIPLIER_HIGH:
        return Decimal(SAMPLE_MULTIPLIER)
    return value.quantize(Decimal("0.01"))


class PromotionsState(OfferwallScoped):
    promotions: list[promotions.PromotionLine] = []
    errors: dict[str, str] = {}
    form_key: int = 0
    # The form's switches, as the page shows the inputs that depend on them.
    weekly: bool = False
    # What the preview shows: the typed name and multiplier (else the sample's).
    typed_name: str = ""
    typed_multiplier: str = ""
    preview: str = ""
    currency: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.errors = {}
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        # The form is drawn empty with the page; what is typed before this load ends stays.
        self.weekly, self.typed_name, self.typed_multiplier = False, "", ""
        await self._fetch_list()
        await self._redraw()
        return None

    async def _fetch_list(self) -> None:
        requested, now = self._requested(), utcnow()

        def work(session: Session, _o: Offerwall, account: Account):
            return promotions.list_promotions(
                session=session, account=account, requested=requested, now=now
            )

        self.promotions = await self._on_offerwall(work)

    async def _redraw(self) -> None:
        name = " ".join(self.typed_name.split())[:80] or SAMPLE_NAME
        multiplier = _multiplier(self.typed_multiplier)
        ends = datetime.now(UTC) + SAMPLE_LENGTH + timedelta(minutes=1)
        record: dict[str, Any] = {
            "name": name,
            "multiplier": float(multiplier),
            "endsAt": ends.isoformat(),
            "firstConversionOnly": False,
        }

        def work(_s: Session, offerwall: Offerwall, _a: Account) -> tuple[str, str]:
            saved = wall_settings.read_settings(offerwall)
            theme = wall_settings.preview_theme(
                offerwall,
                title=saved.title,
                logo_url=saved.logo_url,
                accent=saved.accent,
                currency_icon=saved.currency_icon,
            )
            html = preview_html(
                theme,
                exchange_rate=offerwall.exchange_rate,
                decimals=offerwall.currency_decimals,
                promotion=record,
            )
            return html, offerwall.currency_name

        self.preview, self.currency = await self._on_offerwall(work)

    @rx.event
    @refusals()
    async def edit_name(self, value: str):
        if value != self.typed_name:
            self.typed_name = value
            self.errors = {k: v for k, v in self.errors.items() if k != "name"}
            await self._redraw()

    @rx.event
    @refusals()
    async def edit_multiplier(self, value: str):
        if value != self.typed_multiplier:
            self.typed_multiplier = value
            self.errors = {k: v for k, v in self.errors.items() if k != "multiplier"}
            await self._redraw()

    @rx.event
    def set_weekly(self, value: bool):
        self.weekly = bool(value)

    @rx.event
    @refusals(into="errors")
    async def add(self, form: dict[str, Any]):
        """Add the form's promotion; every refused input gets its message beside it. A
        second click of the same submit does nothing (`_first`)."""
        if not self._first(form.get(SUBMITTED)):
            return None
        fields = {name: str(value) for name, value in form.items() if name != SUBMITTED}
        fields["weekly"] = "true" if self.weekly else "false"
        self.errors, requested = {}, self._requested()

        def work(session: Session, _o: Offerwall, account: Account) -> str:
            row = promotions.add_promotion(
                session=session, account=account, requested=requested, form=fields
            )
            return row.name

        name = await self._on_offerwall(work, write=True)
        self.weekly, self.typed_name, self.typed_multiplier = False, "", ""
        self.form_key += 1
        await self._fetch_list()
        await self._redraw()
        return rx.toast.success(f"Promotion “{name}” added.")

    @rx.event
    @refusals()
    async def end(self, promotion_id: str, drawn_with: int | None = None):
        """End a promotion now (the dialog's confirm); conversions from now on get none."""
        if not self._first(drawn_with):
            return None
        requested = self._requested()

        def work(session: Session, _o: Offerwall, account: Account) -> str:
            row = promotions.end_promotion(
                session=session, account=account, requested=requested, promotion_id=promotion_id
            )
            return row.name

        name = await self._on_offerwall(work, write=True)
        await self._fetch_list()
        return rx.toast.success(f"Promotion “{name}” ended.")
