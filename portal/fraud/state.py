"""The fraud page: the review queue of held conversions, what the screening refused and set
aside, and (staff only) the blocklist and each offerwall's rules.

Staff see every held conversion, a designer their studio's. Every decision goes to the
review (`api/conversions/review.py`) with the account's own scope (`conversions.scope`) and only names transaction
ids this tab was shown, so whatever the browser sends, a designer decides only their
studio's conversions. The blocklist and the offerwalls' rules are read and changed under
`Role.STAFF` alone: a designer's events for them are refused by `_run`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import reflex as rx

from api.conversions import ConversionError, Decided, review
from api.conversions import ledger as conversions
from api.core.wording import sentence
from api.fraud import (
    SIGNALS,
    FraudRuleError,
    OfferwallRules,
    Policy,
    blocklist,
    offerwall_rules,
    set_offerwall_rules,
)
from api.reports import fraud_page
from models import ConversionStatus, Role
from portal.backend import settings
from portal.components.formatting import minute
from portal.state.auth import SUBMITTED, AuthState, refusals
from portal.state.paging import Paged
from portal.state.rows import ConversionLine, FlagLine, conversion_line, flag_line

MANAGERS = (Role.STAFF, Role.DESIGNER)
REVIEW_POSTBACKS = "review_postbacks"  # the rules form's checkbox


def _policy() -> Policy:
    return Policy.from_settings(settings())


def _summary(verb: str, done: Decided) -> str:
    """What a decision did, e.g. "2 approved, 1 skipped (…)"."""
    text = f"{done.decided} {verb}"
    if done.skipped:
        text += f", {done.skipped} skipped (no longer held, or not yours to decide)"
    return text + "."


@dataclass(frozen=True)
class BlockLine:
    """A blocklist entry as the page lists it (`blocklist.BlockRow` with its moment
    written)."""

    id: int
    kind: str
    value: str
    note: str
    created_by: str
    created_at: str


def block_line(row: blocklist.BlockRow) -> BlockLine:
    return BlockLine(row.id, row.kind, row.value, row.note, row.created_by, minute(row.created_at))


class FraudState(Paged, AuthState):
    # The review queue: held (pending) conversions, and the ones ticked on this page.
    rows: list[ConversionLine] = []
    selected: list[str] = []
    # The conversions in the reject dialog (one row's, or the selection).
    rejecting: list[str] = []
    reject_errors: dict[str, str] = {}
    # What the last decision did: "2 approved, 1 skipped …".
    outcome: str = ""
    # The overview.
    held: int = 0
    refused: int = 0
    reasons: list[fraud_page.Count] = []
    days: list[fraud_page.DayCounts] = []
    ips: list[fraud_page.Count] = []
    networks: list[fraud_page.Count] = []
    uids: list[fraud_page.Count] = []
    flags: list[FlagLine] = []
    # Staff only: filled when the account is staff's, and shown only then.
    is_staff: bool = False
    blocks: list[BlockLine] = []
    block_errors: dict[str, str] = {}
    walls: list[OfferwallRules] = []
    rules_errors: dict[str, str] = {}
    # Drawn into the forms' keys so that a save redraws them with what was stored.
    version: int = 0

    @rx.var
    def all_selected(self) -> bool:
        return bool(self.rows) and all(r.transaction_id in self.selected for r in self.rows)

    @rx.var
    def selected_count(self) -> int:
        return len(self.selected)

    @rx.var
    def rejecting_count(self) -> int:
        return len(self.rejecting)

    @rx.event
    @refusals()
    async def load(self):
        self.rejecting, self.selected, self.outcome = [], [], ""
        self.status_filter, self.page = ConversionStatus.PENDING, 1
        self.block_errors, self.rules_errors = {}, {}
        guard = await self._guard(*MANAGERS)
        if guard is None:
            await self._fetch()
            await self._fetch_overview()
        return guard

    async def _fetch(self) -> None:
        text, page = self.search, self.page
        found = await self._run(
            lambda s, a: conversions.search(
                session=s,
                studio_id=conversions.scope(a),
                text=text,
                status=ConversionStatus.PENDING,
                page=page,
            ),
            *MANAGERS,
        )
        self._show(found, conversion_line)
        shown = {r.transaction_id for r in self.rows}
        self.selected = [t for t in self.selected if t in shown]

    async def _fetch_overview(self) -> None:
        def read(s: Any, a: Any) -> tuple[Any, ...]:
            found = fraud_page.overview(session=s, studio_id=conversions.scope(a))
            if a.role != Role.STAFF:
                return found, False, [], []
            blocks = blocklist.blocklist(session=s)
            walls = offerwall_rules(session=s, policy=_policy())
            return found, True, blocks, walls

        found, self.is_staff, blocks, self.walls = await self._run(read, *MANAGERS)
        self.blocks = [block_line(b) for b in blocks]
        self.held, self.refused = found.held, found.refused
        self.reasons, self.days = found.reasons, found.days
        self.flags = [flag_line(f) for f in found.flags]
        self.ips, self.networks, self.uids = found.ips, found.networks, found.uids

    # --- choosing conversions ----------------------------------------------------------

    def _shown(self, transaction_ids: list[str]) -> list[str]:
        """Of the ids the browser names, those this tab was shown (the server's copy)."""
        shown = {r.transaction_id for r in self.rows}
        return [t for t in dict.fromkeys(transaction_ids) if t in shown]

    @rx.event
    def toggle(self, transaction_id: str, checked: bool):
        chosen = [t for t in self.selected if t != transaction_id]
        if checked:
            chosen += self._shown([transaction_id])
        self.selected = chosen

    @rx.event
    def toggle_page(self, checked: bool):
        self.selected = [r.transaction_id for r in self.rows] if checked else []

    # --- decisions -------------------------------------------------------------------

    async def _decided(self, verb: str, done: Decided) -> Any:
        self.outcome = _summary(verb, done)
        self.selected = []
        await self._fetch()
        await self._fetch_overview()
        return rx.toast.success(sentence(self.outcome))

    @rx.event
    @refusals()
    async def approve(self, transaction_ids: list[str]):
        return await self._approve(transaction_ids)

    @rx.event
    @refusals()
    async def approve_selected(self):
        return await self._approve(list(self.selected))

    async def _approve(self, transaction_ids: list[str]) -> Any:
        chosen = self._shown(transaction_ids)
        done = await self._run(
            lambda s, a: review.approve(
                session=s,
                transaction_ids=chosen,
                actor=a.email,
                studio_id=conversions.scope(a),
            ),
            *MANAGERS,
            write=True,
        )
        return await self._decided("approved", done)

    @rx.event
    @refusals()
    async def flag(self, transaction_ids: list[str]):
        return await self._flag(transaction_ids)

    @rx.event
    @refusals()
    async def flag_selected(self):
        return await self._flag(list(self.selected))

    async def _flag(self, transaction_ids: list[str]) -> Any:
        chosen = self._shown(transaction_ids)
        done = await self._run(
            lambda s, a: review.flag(
                session=s, transaction_ids=chosen, actor=a.email, studio_id=conversions.scope(a)
            ),
            *MANAGERS,
            write=True,
        )
        return await self._decided("kept for a reviewer", done)

    @rx.event
    def start_reject(self, transaction_ids: list[str]):
        """Open the reason dialog on rows this tab was shown."""
        self.rejecting, self.reject_errors = self._shown(transaction_ids), {}

    @rx.event
    def start_reject_selected(self):
        self.rejecting, self.reject_errors = self._shown(list(self.selected)), {}

    @rx.event
    def cancel_reject(self):
        self.rejecting = []

    @rx.event
    @refusals(into="reject_errors")
    async def reject(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        chosen, reason, self.reject_errors = list(self.rejecting), form.get("reason", ""), {}
        try:
            done = await self._run(
                lambda s, a: review.reject(
                    session=s,
                    transaction_ids=chosen,
                    actor=a.email,
                    studio_id=conversions.scope(a),
                    reason=reason,
                ),
                *MANAGERS,
                write=True,
            )
        except ConversionError as refused:
            if refused.field is None:  # nothing left to reject: close, show the list
                self.rejecting = []
                await self._fetch()
            raise
        self.rejecting = []
        return await self._decided("rejected", done)

    # --- staff: the blocklist and the offerwalls' rules --------------------------------

    @rx.event
    @refusals(into="block_errors")
    async def block(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None
        kind, value = form.get("kind", ""), form.get("value", "")
        note, self.block_errors = form.get("note", ""), {}
        row = await self._run(
            lambda s, a: blocklist.block(
                session=s, kind=kind, value=value, note=note, actor=a.email
            ),
            Role.STAFF,
            write=True,
        )
        self.version += 1
        await self._fetch_overview()
        return rx.toast.success(f"{row.value} is blocked.")

    @rx.event
    @refusals()
    async def unblock(self, entry_id: int):
        await self._run(
            lambda s, a: blocklist.unblock(session=s, entry_id=int(entry_id)),
            Role.STAFF,
            write=True,
        )
        gone = next((b.value for b in self.blocks if b.id == entry_id), "The entry")
        await self._fetch_overview()
        return rx.toast.success(f"{gone} is no longer blocked.")

    @rx.event
    @refusals(into="rules_errors")
    async def save_rules(self, form: dict[str, str]):
        offerwall_id = form.get("offerwall", "")
        actions = {s: form[s] for s in SIGNALS if form.get(s)}
        notify = form.get(REVIEW_POSTBACKS) == "true"
        self.rules_errors = {}
        try:
            await self._run(
                lambda s, a: set_offerwall_rules(
                    session=s,
                    offerwall_id=offerwall_id,
                    actions=actions,
                    review_postbacks=notify,
                    policy=_policy(),
                ),
                Role.STAFF,
                write=True,
            )
        except FraudRuleError as refused:  # shown in that offerwall's form
            self.rules_errors = {offerwall_id: sentence(refused.message)}
            return None
        name = next((w.name for w in self.walls if w.id == offerwall_id), "The offerwall")
        self.version += 1
        await self._fetch_overview()
        return rx.toast.success(f"{name}'s rules are saved.")
