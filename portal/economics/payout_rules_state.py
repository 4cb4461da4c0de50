"""An offerwall's staff page: the publisher, and its payout rules (its revenue share for
every mission, its rules for one mission) with a preview of what it gets for a mission.
Staff only: every handler goes through `_run(…, Role.STAFF)`, and the use cases
(api/publishers/staff_payouts.py) check the account again."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.economics.terms import DEFAULT, OFFERWALL
from api.economics.terms import share as share_of
from api.publishers import staff_payouts
from api.publishers.staff_payouts import MissionChoice, MissionRule, Preview
from models import Role
from portal import routes
from portal.components.formatting import exact, money
from portal.state.auth import SUBMITTED, AuthState, refusals
from portal.state.reauth import Reauth

PAYOUT, SHARE = "payout", "share"  # what a rule for one mission pays: its inputs' names
# How many countries the preview names before it counts the rest.
COUNTRIES_SHOWN = 6


def dollars(micros: int) -> str:
    """A USD amount in cents, or to the micro when it has more: "$1.20", "$0.0735"."""
    amount = Decimal(micros) / 1_000_000
    places = -int(amount.normalize().as_tuple().exponent)
    return money(amount, decimals=min(max(2, places), 6))


def percent(value: float) -> str:
    """A share as staff typed it: "70%", "62.5%"."""
    return f"{Decimal(str(value)).normalize():f}%"


def mission_name(mission: MissionChoice) -> str:
    return mission.title or "A deleted mission"


@dataclass(frozen=True)
class ChoiceLine:
    """A mission in the picker: "Arena · Kill 10 players ($1.00, revenue $2.00)"."""

    id: str
    label: str
    has_revenue: bool


def choice_line(m: MissionChoice) -> ChoiceLine:
    revenue = "no revenue" if m.revenue_micros is None else f"revenue {dollars(m.revenue_micros)}"
    inactive = ", inactive" if not m.active else ""
    label = f"{m.game} · {m.title} ({dollars(m.payout_micros)}, {revenue}{inactive})"
    return ChoiceLine(m.id, label, m.revenue_micros is not None)


@dataclass(frozen=True)
class RuleLine:
    """A rule for one mission as the table shows it: the mission, the rule ("$1.20",
    "70% of revenue"), what it does in words, and who set it when."""

    mission_id: str
    title: str
    game: str
    rule: str
    words: str
    by: str
    at: str


def rule_words(rule: MissionRule) -> str:
    m = rule.mission
    name = mission_name(m)
    if rule.payout_micros is not None:
        return f"{name} pays {dollars(rule.payout_micros)} here"
    share = rule.share_percent or 0.0
    if m.revenue_micros is None:
        return (
            f"{percent(share)} of revenue, but {name} has no revenue now: "
            f"its payout of {dollars(m.payout_micros)} applies"
        )
    paid = share_of(m.revenue_micros, share)
    return f"{name} pays {percent(share)} of its revenue here ({dollars(paid)})"


def rule_line(rule: MissionRule) -> RuleLine:
    shown = (
        dollars(rule.payout_micros)
        if rule.payout_micros is not None
        else f"{percent(rule.share_percent or 0.0)} of revenue"
    )
    return RuleLine(
        rule.mission.id,
        mission_name(rule.mission),
        rule.mission.game,
        shown,
        rule_words(rule),
        rule.created_by,
        exact(rule.created_at),
    )


@dataclass(frozen=True)
class PreviewLine:
    """The preview of one mission, written: what this offerwall gets and why, the
    mission's payout and revenue, the margin, and the countries paid otherwise."""

    title: str
    game: str
    payout: str
    why: str
    default: str
    revenue: str
    margin: str
    margin_note: str
    losing: bool
    countries: str


def preview_line(p: Preview, company: str) -> PreviewLine:
    m = p.mission
    if p.rule == DEFAULT:
        why = "the mission's own payout: no rule of this offerwall applies"
    elif p.rule == OFFERWALL:
        why = "this offerwall's fixed payout for the mission"
    elif p.own_rule:
        why = "this offerwall's revenue share for the mission"
    else:
        why = "this offerwall's revenue share for every mission"
    if p.margin_micros is None or not m.revenue_micros:
        margin, note = "None", "The mission has no revenue."
    else:
        share = Decimal(p.margin_micros) * 100 / Decimal(m.revenue_micros)
        note = f"{share.quantize(Decimal('0.1'))}% of revenue"
        margin = dollars(p.margin_micros)
        if p.margin_micros < 0:
            margin, note = f"−{dollars(-p.margin_micros)}", "Each conversion loses money."
    named = sorted(p.countries.items())
    countries = ", ".join(f"{c} {dollars(v)}" for c, v in named[:COUNTRIES_SHOWN])
    if len(named) > COUNTRIES_SHOWN:
        countries += f" and {len(named) - COUNTRIES_SHOWN} more"
    return PreviewLine(
        title=mission_name(m),
        game=m.game,
        payout=dollars(p.payout_micros),
        why=f"{company} gets {dollars(p.payout_micros)}: {why}.",
        default=dollars(m.payout_micros),
        revenue="None" if m.revenue_micros is None else dollars(m.revenue_micros),
        margin=margin,
        margin_note=note,
        losing=p.margin_micros is not None and p.margin_micros < 0,
        countries=countries,
    )


class PayoutRulesState(Reauth, AuthState):
    offerwall_id: str = ""
    company: str = ""
    status: str = ""
    owid: str = ""
    # The revenue share for every mission ("" for none), who set it and when.
    share: str = ""
    share_set_by: str = ""
    rules: list[RuleLine] = []
    share_errors: dict[str, str] = {}
    rule_errors: dict[str, str] = {}
    # The mission picker: the search, the missions it found, and the one picked.
    mission_search: str = ""
    choices: list[ChoiceLine] = []
    more_choices: bool = False
    picked: str = ""
    kind: str = PAYOUT
    preview: list[PreviewLine] = []  # none, or the picked mission's

    def _requested(self) -> str:
        return self.router.url.query_parameters.get("offerwall", "")

    @rx.var
    def picked_has_revenue(self) -> bool:
        return any(c.has_revenue for c in self.choices if c.id == self.picked)

    @rx.event
    @refusals()
    async def load(self):
        guard = await self._guard(Role.STAFF)
        if guard is not None:
            return guard
        if not self._requested():
            return rx.redirect(routes.STAFF_PUBLISHERS)
        self.share_errors, self.rule_errors = {}, {}
        self.mission_search, self.picked, self.kind, self.preview = "", "", PAYOUT, []
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        wall_id, search, picked = self._requested(), self.mission_search, self.picked

        def work(session: Session, account: Account):
            shown = staff_payouts.payouts_of(session, account, wall_id)
            found = staff_payouts.find_missions(session, account, wall_id, search)
            seen = staff_payouts.preview(session, account, wall_id, picked) if picked else None
            return shown, found, seen

        shown, (found, more), seen = await self._run(work, Role.STAFF)
        self.offerwall_id = wall_id
        self.company, self.status, self.owid = shown.company, shown.status, shown.owid
        self.share = "" if shown.share_percent is None else percent(shown.share_percent)
        self.share_set_by = (
            f"{shown.share_by}, {exact(shown.share_at)}" if shown.share_at is not None else ""
        )
        self.rules = [rule_line(r) for r in shown.missions]
        choices = [choice_line(m) for m in found]
        if seen is not None and all(c.id != seen.mission.id for c in choices):
            choices.insert(0, choice_line(seen.mission))  # the picked one stays listed
        self.choices, self.more_choices = choices, more
        self.preview = [] if seen is None else [preview_line(seen, shown.company)]

    async def _change(self, change: Any, done: str, errors: str = "") -> Any:
        """Do `change(session, account, offerwall id)` in one transaction, behind the
        password (asked again after ten minutes), then read the page again and say `done`."""
        wall_id = self._requested()
        await self._run_confirmed(lambda s, a: change(s, a, wall_id), Role.STAFF)
        if errors:
            setattr(self, errors, {})
        await self._fetch()
        return rx.toast.success(done)

    # --- the revenue share for every mission --------------------------------------

    @rx.event
    @refusals(into="share_errors")
    async def set_share(self, form: dict[str, Any]):
        if not self._first(form.get(SUBMITTED)):
            return None
        value = str(form.get(SHARE, ""))
        return await self._change(
            lambda s, a, w: staff_payouts.set_share(s, a, w, value),
            "Revenue share saved: every mission with revenue pays it here.",
            "share_errors",
        )

    @rx.event
    @refusals()
    async def clear_share(self):
        self.share_errors = {}
        return await self._change(
            staff_payouts.clear_share,
            "Revenue share cleared: missions pay their own payout here.",
        )

    # --- rules for one mission ----------------------------------------------------

    @rx.event
    @refusals()
    async def find_missions(self, text: str):
        self.mission_search = text
        await self._fetch()

    @rx.event
    @refusals()
    async def pick(self, mission_id: str):
        self.picked = mission_id
        self.rule_errors = {}
        await self._fetch()

    @rx.event
    def choose_kind(self, kind: str):
        self.kind = SHARE if kind == SHARE else PAYOUT
        self.rule_errors = {}

    @rx.event
    @refusals(into="rule_errors")
    async def save_rule(self, form: dict[str, Any]):
        if not self._first(form.get(SUBMITTED)):
            return None
        mission_id = str(form.get("mission", ""))
        amount = {SHARE: str(form.get(SHARE, ""))} if form.get("kind") == SHARE else {}
        if not amount:
            amount = {PAYOUT: str(form.get(PAYOUT, ""))}
        self.picked = mission_id
        return await self._change(
            lambda s, a, w: staff_payouts.set_for_mission(s, a, w, mission_id, **amount),
            "Rule saved.",
            "rule_errors",
        )

    @rx.event
    @refusals()
    async def remove_rule(self, mission_id: str):
        return await self._change(
            lambda s, a, w: staff_payouts.remove_for_mission(s, a, w, mission_id),
            "Rule removed: the mission pays as the other rules say.",
        )
