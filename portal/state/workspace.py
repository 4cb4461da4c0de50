"""The publisher's own workspace: the offerwall's ids, its API key and its currency, and
on every workspace page the health of its postback endpoint (paused or failing) with the
way to resume. (Staff's list of every publisher is portal/publishers/publishers_state.py.)

Publishers see their own offerwall; staff open any with `?offerwall=<id>`. Either way
the server decides which offerwall an event acts on (access.offerwall_for)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, Forbidden, NotApproved, offerwall_for
from api.postbacks import delivery_log as deliveries
from api.postbacks import endpoint as endpoints
from api.publishers import api_key as api_keys
from api.publishers import offerwalls
from models import Offerwall, OfferwallStatus, Role
from portal import routes
from portal.backend import box, settings
from portal.components.formatting import exact, when
from portal.state.auth import SUBMITTED, AuthState, refusals

T = TypeVar("T")


def duration_text(seconds: float) -> str:
    """A setting's duration in words ("24 hours", "30 minutes", "1 hour")."""
    for size, unit in ((3600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}" + ("" if count == 1 else "s")
    return f"{seconds:g} seconds"


@dataclass(frozen=True)
class FailureLine:
    """A failed attempt as the banner lists it (`deliveries.EndpointFailure` with its
    moment written)."""

    at: str
    answer: str  # "HTTP 500", or "No answer" when none came
    detail: str


@dataclass(frozen=True)
class HealthLine:
    """The endpoint's health as the banner says it (`deliveries.EndpointHealth` with its
    moments written: "" for none)."""

    paused_since: str
    failing_since: str
    failures: int
    waiting: int
    errors: list[FailureLine]


def health_line(health: deliveries.EndpointHealth) -> HealthLine:
    return HealthLine(
        paused_since=exact(health.paused_since),
        failing_since=exact(health.failing_since),
        failures=health.failures,
        waiting=health.waiting,
        errors=[FailureLine(exact(e.at), e.answer, e.detail) for e in health.errors],
    )


class OfferwallScoped(AuthState):
    """Base of the workspace states: which offerwall, its header, and its endpoint's
    health (the banner every workspace page shows)."""

    company: str = ""
    status: str = ""
    owid: str = ""
    staff_view: bool = False
    # Appended to workspace links so staff stay on the publisher they opened.
    query: str = ""
    # The postback endpoint (deliveries.endpoint_health): paused since when, failing
    # since when, failures in a row, postbacks waiting, the last errors.
    paused_since: str = ""
    failing_since: str = ""
    failures: int = 0
    waiting: int = 0
    last_errors: list[FailureLine] = []
    # How long every attempt must fail before deliveries pause (POSTBACK_PAUSE_AFTER_SECONDS).
    pause_after: str = ""

    def _requested(self) -> str:
        return self.router.url.query_parameters.get("offerwall", "")

    def _rotation(self, form: dict[str, str] | None) -> tuple[str, str, str] | None:
        """A rotate dialog's password and grace, and the offerwall asked for; None for a
        second click of the same button. An event sent by hand without the form gets
        empty ones, which the service refuses."""
        form = form or {}
        if not self._first(form.get(SUBMITTED)):
            return None
        return form.get("password", ""), form.get("grace", ""), self._requested()

    async def _on_offerwall(
        self, work: Callable[[Session, Offerwall, Account], T], *, write: bool = False
    ) -> T:
        requested = self._requested()
        return await self._on(
            lambda s, a: offerwall_for(session=s, account=a, requested=requested),
            work,
            Role.PUBLISHER,
            Role.STAFF,
            write=write,
        )

    async def _open(self) -> tuple[Any, Offerwall | None]:
        """on_load: check access and fill the header. Returns (where to go instead, None)
        or (None, the offerwall); publishers not yet approved go to their application."""
        guard = await self._guard(Role.PUBLISHER, Role.STAFF)
        if guard is not None:
            return guard, None
        if self.user_role == Role.STAFF and not self._requested():
            return rx.redirect(routes.STAFF_PUBLISHERS), None
        try:
            wall, health = await self._on_offerwall(
                lambda s, o, _a: (o, deliveries.endpoint_health(session=s, offerwall=o))
            )
        except NotApproved:  # checked by the service on every event too
            return rx.redirect(routes.APPLICATION), None
        except Forbidden as exc:
            return [rx.redirect(routes.home_for(self.user_role)), rx.toast.error(str(exc))], None
        self.company, self.status, self.owid = wall.name, wall.status, wall.owid or ""
        self.staff_view = self.user_role == Role.STAFF
        self.query = routes.offerwall_query(wall.id) if self.staff_view else ""
        self._show_health(health)
        return None, wall

    def _show_health(self, health: deliveries.EndpointHealth) -> None:
        shown = health_line(health)
        self.paused_since, self.failing_since = shown.paused_since, shown.failing_since
        self.failures, self.waiting, self.last_errors = (
            shown.failures,
            shown.waiting,
            shown.errors,
        )
        self.pause_after = duration_text(settings().postback_pause_after_seconds)

    @rx.event
    @refusals()
    async def resume_deliveries(self, drawn_with: int | None = None):
        """Release a paused offerwall's waiting postbacks (the banner's button); the
        alert webhook hears of it once the transaction is committed."""
        if not self._first(drawn_with):
            return None  # a second click of the same button
        config = settings()

        def work(session: Session, offerwall: Offerwall, _a: Account):
            released, notice = endpoints.resume(
                session=session, offerwall=offerwall, settings=config
            )
            return (
                released,
                notice,
                deliveries.endpoint_health(session=session, offerwall=offerwall),
            )

        released, notice, health = await self._on_offerwall(work, write=True)
        endpoints.announce([notice])
        self._show_health(health)
        rate = f"{config.postback_resume_rate:g}"
        waited = "1 waiting postback goes" if released == 1 else f"{released} waiting postbacks go"
        return rx.toast.success(
            f"Deliveries resumed: {waited} out in the order they were made, {rate} a second."
        )


class WorkspaceState(OfferwallScoped):
    tracking_link: str = ""
    has_key: bool = False
    revealed_key: str = ""
    reveal_error: str = ""
    # The rotate dialog: open or not, the grace period picked ("" until one is), its
    # refusal (a wrong password); and until when the replaced key still works ("" when
    # it does not).
    rotating_key: bool = False
    key_grace: str = ""
    rotate_key_error: str = ""
    previous_key_until: str = ""
    currency_name: str = ""
    currency_code: str = ""
    exchange_rate: str = ""
    decimals: str = ""
    currency_error: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.revealed_key = self.reveal_error = self.currency_error = ""
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        self.has_key = wall.api_key_sealed is not None
        self.key_grace, self.previous_key_until = "", when(offerwalls.key_grace_until(wall))
        base = settings().base_url
        self.tracking_link = routes.tracking_link_template(base, self.owid)
        self._show_currency(wall)
        return None

    def _show_currency(self, wall: Offerwall) -> None:
        self.currency_name, self.currency_code = wall.currency_name, wall.currency_code
        self.exchange_rate, self.decimals = f"{wall.exchange_rate:g}", str(wall.currency_decimals)

    @rx.event
    @refusals(into="reveal_error")
    async def reveal_key(self, form: dict[str, str]):
        """Show the API key after the signed-in user re-enters their password."""
        password, requested = form.get("password", ""), self._requested()
        self.reveal_error = ""
        self.revealed_key = await self._run(
            lambda s, a: api_keys.reveal_api_key(
                session=s, box=box(), account=a, password=password, requested=requested
            ),
            Role.PUBLISHER,
            Role.STAFF,
            write=True,
        )

    @rx.event
    def hide_key(self):
        self.revealed_key = ""

    @rx.event
    def choose_key_grace(self, grace: str):
        self.key_grace = grace

    @rx.event
    def open_key_rotation(self, opened: bool):
        self.rotating_key, self.key_grace, self.rotate_key_error = opened, "", ""

    @rx.event
    @refusals(into="rotate_key_error")
    async def rotate_key(self, form: dict[str, str] | None = None):
        """A new key, shown now, after the signed-in user re-enters their password (as a
        reveal asks); the old one works for the grace picked in the dialog (none: it
        stops now). The service checks both and refuses any other grace."""
        if (asked := self._rotation(form)) is None:
            return None
        (password, grace, requested), self.rotate_key_error = asked, ""
        key, wall = await self._run(
            lambda s, a: api_keys.rotate_api_key(
                session=s, box=box(), account=a, password=password, grace=grace, requested=requested
            ),
            Role.PUBLISHER,
            Role.STAFF,
            write=True,
        )
        self.revealed_key, self.previous_key_until = key, when(offerwalls.key_grace_until(wall))
        self.rotating_key, self.key_grace, self.has_key, self.reveal_error = False, "", True, ""
        if self.previous_key_until:
            return rx.toast.success(
                f"New API key issued. The previous key works until {self.previous_key_until}."
            )
        return rx.toast.success("New API key issued. The old key no longer works.")

    @rx.event
    @refusals(into="currency_error")
    async def save_currency(self, form: dict[str, str]):
        self.currency_error = ""
        try:
            rate, decimals = float(form.get("exchange_rate", "")), int(form.get("decimals", ""))
        except ValueError:
            self.currency_error = "The exchange rate is a number and decimals a whole number."
            return None

        def work(session: Session, offerwall: Offerwall, _a: Account) -> Offerwall:
            return offerwalls.set_currency(
                session=session,
                offerwall=offerwall,
                name=form.get("currency_name", ""),
                code=form.get("currency_code", "").strip().upper(),
                exchange_rate=rate,
                decimals=decimals,
            )

        self._show_currency(await self._on_offerwall(work, write=True))
        return rx.toast.success("Currency saved.")


class ApplicationState(AuthState):
    """A publisher's application page: pending, rejected (with the reason) or suspended."""

    company: str = ""
    status: str = ""
    reason: str = ""

    @rx.event
    @refusals()
    async def load(self):
        guard = await self._guard(Role.PUBLISHER)
        if guard is not None:
            return guard

        def work(session: Session, account: Account) -> Offerwall:
            return offerwall_for(session=session, account=account, any_status=True)

        wall = await self._run(work, Role.PUBLISHER)
        if wall.status == OfferwallStatus.APPROVED:
            return rx.redirect(routes.PUBLISHER)
        self.company, self.status, self.reason = wall.name, wall.status, wall.rejection_reason or ""
        return None
