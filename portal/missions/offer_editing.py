"""What the mission editor and the quest builder share (a Reflex state mixin, listed first
among a state's bases): the saved offer's preview, the targeting inputs (operating systems
and the two country pickers), and the question a save asks before it deactivates the offer.

A state using it declares `errors` and implements `_save(fields)`: the save itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import reflex as rx

from api.core.countries import country, find_countries, find_country, unknown_countries
from api.listing import OfferPreview, offer_preview
from api.missions import PICKERS, TYPED, OfferError
from models import Mission, Quest
from portal import routes
from portal.backend import settings
from portal.components.formatting import usd
from portal.state.auth import SUBMITTED, refusals


@dataclass(frozen=True)
class PreviewMissionLine:
    title: str
    payout: str  # "$1.50"


@dataclass(frozen=True)
class PreviewCard:
    """The preview as the editors show it (`preview.OfferPreview` with its payouts
    written)."""

    kind: str
    title: str
    description: str
    thumbnail: str
    payout: str  # "$1.50"; a quest's is its missions' together
    instructions: str
    requirements: str
    expires: str
    tracking_link: str
    json: str
    missions: list[PreviewMissionLine] = field(default_factory=list)


def preview_card(preview: OfferPreview) -> PreviewCard:
    return PreviewCard(
        kind=preview.kind,
        title=preview.title,
        description=preview.description,
        thumbnail=preview.thumbnail,
        payout=usd(preview.payout_micros),
        instructions=preview.instructions,
        requirements=preview.requirements,
        expires=preview.expires,
        tracking_link=preview.tracking_link,
        json=preview.json,
        missions=[PreviewMissionLine(m.title, usd(m.payout_micros)) for m in preview.missions],
    )


NO_PREVIEW = PreviewCard(
    kind="",
    title="",
    description="",
    thumbnail="",
    payout="",
    instructions="",
    requirements="",
    expires="",
    tracking_link="",
    json="",
)


def _items(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _chips(codes: list[str]) -> list[dict[str, str]]:
    return [{"code": code, "label": country(code).label} for code in codes]


class OfferEditing(rx.State, mixin=True):
    preview: PreviewCard = NO_PREVIEW
    show_json: bool = False
    operating_systems: list[str] = []
    countries_include: list[str] = []
    countries_exclude: list[str] = []
    # The stored offer: its name and whether it is active (a save that deactivates asks).
    offer_name: str = ""
    offer_active: bool = False
    confirm_deactivate: bool = False
    # What is typed in each picker's search input (controlled: emptied once one is added).
    typed_include: str = ""
    typed_exclude: str = ""
    _pending: dict[str, str] = {}
    # What the form's next submit asks for instead of a save ("history": try the mission
    # on stored events), set by its button's click, which Reflex handles before the submit.
    _intent: str = ""
    if TYPE_CHECKING:
        errors: dict[str, str]  # declared by the state that lists this mixin

        game_id: str  # GameScoped's, of the same state

        def _first(self, drawn_with: Any) -> bool: ...  # AuthState's, of the same state

        async def _open(self) -> Any: ...  # GameScoped's

    # --- for the states -----------------------------------------------------------------

    async def _save(self, fields: dict[str, str]) -> Any:
        raise NotImplementedError

    async def _act(self, intent: str, fields: dict[str, str]) -> Any:
        """What the form does for an `intent` other than a save (none by default)."""
        return None

    async def _load_offer(self, fill: Callable[[], Awaitable[None]]) -> Any:
        """An editor's on_load: check the game, then `fill` the form from the requested
        offer; one that is not this game's goes back to the missions list."""
        self.errors = {}
        redirect = await self._open()
        if redirect is not None:
            return redirect
        try:
            await fill()
        except OfferError as exc:
            return [rx.redirect(routes.missions(self.game_id)), rx.toast.error(str(exc))]
        return None

    def _show_offer(self, offer: Mission | Quest | None, missions: Sequence[Mission] = ()) -> None:
        """The stored offer (None: a new one) as the preview and the dialog name it."""
        self.show_json = self.confirm_deactivate = False
        self._pending = {}
        if offer is None:
            self.preview, self.offer_name, self.offer_active = NO_PREVIEW, "", False
            return
        self.preview = preview_card(offer_preview(offer, missions, base_url=settings().base_url))
        self.offer_name, self.offer_active = self.preview.title, offer.is_active

    def _fill_targeting(self, values: dict[str, str]) -> None:
        self.operating_systems = _items(values.get("operatingSystem", ""))
        self.countries_include = _items(values.get(PICKERS["include"], ""))
        self.countries_exclude = _items(values.get(PICKERS["exclude"], ""))
        self.typed_include = self.typed_exclude = ""

    # --- the page's events --------------------------------------------------------------

    @rx.var
    def include_chips(self) -> list[dict[str, str]]:
        return _chips(self.countries_include)

    @rx.var
    def exclude_chips(self) -> list[dict[str, str]]:
        return _chips(self.countries_exclude)

    @rx.event
    def intend(self, intent: str):
        """A button that submits the form for something else than a save says what."""
        self._intent = intent

    @rx.event
    def toggle_json(self):
        self.show_json = not self.show_json

    def _set_typed(self, which: str, text: str) -> None:
        if which == "include":
            self.typed_include = text
        elif which == "exclude":
            self.typed_exclude = text

    def _add_country(self, which: str, text: str) -> None:
        """The countries `text` names become chips; text that names none stays in the box,
        with what is wrong under it (a save would refuse it the same way)."""
        if which not in PICKERS:
            return
        found, unknown = find_countries(text)
        codes = self.countries_include if which == "include" else self.countries_exclude
        codes = [*codes, *(c.code for c in found if c.code not in codes)]
        if which == "include":
            self.countries_include = codes
        else:
            self.countries_exclude = codes
        self._set_typed(which, ", ".join(unknown))
        errors = {k: v for k, v in self.errors.items() if k != PICKERS[which]}
        if unknown:
            errors[PICKERS[which]] = unknown_countries(unknown)
        self.errors = errors

    @rx.event
    def type_country(self, which: str, text: str):
        """Typing in a picker; a country chosen from its list (its whole label) is added."""
        self._set_typed(which, text)
        found = find_country(text)
        if found is not None and text.strip().casefold() == found.label.casefold():
            # The input shows the pick first, so emptying it is a change it sees.
            yield
            self._add_country(which, text)

    @rx.event
    def country_key(self, which: str, key: str):
        """Enter adds the countries the typed text names (or says it names none);
        Backspace in an empty picker takes its last country out."""
        typed = self.typed_include if which == "include" else self.typed_exclude
        if key == "Enter" and typed.strip():
            yield
            self._add_country(which, typed)
        elif key == "Backspace" and not typed:
            codes = self.countries_include if which == "include" else self.countries_exclude
            if codes:
                self._remove(which, codes[-1])

    @rx.event
    def country_blur(self, which: str, text: str):
        """Leaving a picker does what Enter does: typed text is never left behind unseen."""
        if text.strip():
            self._add_country(which, text)

    @rx.event
    def remove_country(self, which: str, code: str):
        self._remove(which, code)

    def _remove(self, which: str, code: str) -> None:
        if which == "include":
            self.countries_include = [c for c in self.countries_include if c != code]
        elif which == "exclude":
            self.countries_exclude = [c for c in self.countries_exclude if c != code]

    def _pickers(self) -> dict[str, str]:
        """The pickers' chips and typed text as this state holds them: newer than the
        form's hidden copies when Save follows a key or the picker's blur at once (their
        events are handled first, the form was read before)."""
        return {
            PICKERS["include"]: ",".join(self.countries_include),
            PICKERS["exclude"]: ",".join(self.countries_exclude),
            TYPED + PICKERS["include"]: self.typed_include,
            TYPED + PICKERS["exclude"]: self.typed_exclude,
        }

    @rx.event
    @refusals(into="errors")
    async def save(self, form: dict[str, Any]):
        """Save the form, or, when it would deactivate an active offer, ask first."""
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form: one new offer, not two
        fields = {k: str(v) for k, v in form.items() if k != SUBMITTED} | self._pickers()
        intent, self._intent = self._intent, ""
        if intent:
            return await self._act(intent, fields)
        if self.offer_active and fields.get("isActive") == "false":
            self._pending, self.confirm_deactivate = fields, True
            return None
        return await self._save(fields)

    @rx.event
    @refusals(into="errors")
    async def save_deactivated(self):
        """The dialog's answer: save the waiting form, which deactivates the offer."""
        fields, self._pending, self.confirm_deactivate = self._pending, {}, False
        if not fields:
            return None
        return await self._save(fields)

    @rx.event
    def keep_active(self):
        self._pending, self.confirm_deactivate = {}, False
