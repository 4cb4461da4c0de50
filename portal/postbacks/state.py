"""The postback page (the URL and the reversal URL with a live preview, the test
postback, the signing secret) and the delivery log."""

from __future__ import annotations

import time
from dataclasses import dataclass

import reflex as rx
from sqlmodel import Session

from api.accounts import Account
from api.core.paging import Window
from api.postbacks import delivery_log as deliveries
from api.postbacks import endpoint as endpoints
from api.postbacks import signing_secret, trial, unknown_macros
from api.publishers import api_key as api_keys
from api.publishers import offerwalls
from models import Offerwall, Role
from models.types import utcnow
from portal.backend import box, engine, off_loop, settings
from portal.components.formatting import exact, money, when
from portal.state.auth import SUBMITTED, refusals
from portal.state.paging import PlayerFilter
from portal.state.workspace import OfferwallScoped

EXAMPLE_TEMPLATE = (
    "https://example.com/postback?uid={uid}&txn={transaction_id}&payout={payout}&hash={hash_key}"
)
# A click on "Send test postback" this soon after the last one sent is the second click of a
# double click (a human's spans about 0.3 s), not sent.
TEST_REPEAT_SECONDS = 0.5
EXAMPLE_REVERSAL = "https://example.com/reversal?txn={transaction_id}&reason={reason}"


class PostbackState(OfferwallScoped):
    saved_url: str = ""
    saved_reversal_url: str = ""
    draft: str = ""
    preview: str = ""
    unknown: list[str] = []
    error: str = ""
    # The last test postback.
    tested: bool = False
    test_url: str = ""
    test_status: str = ""
    test_latency: str = ""
    test_answer: str = ""
    test_error: str = ""
    sending: bool = False
    # When the last test postback's click arrived (monotonic seconds; the server's own).
    _test_sent_at: float = 0.0
    # The signing secret: shown once (when), the one just shown or rotated (until the
    # page is left), until when the replaced one still signs, and the rotate dialog's pick.
    secret_shown_at: str = ""
    revealed_secret: str = ""
    secret_error: str = ""
    previous_secret_until: str = ""
    rotating_secret: bool = False
    secret_overlap: str = ""
    rotate_secret_error: str = ""

    @rx.event
    @refusals()
    async def load(self):
        self.error, self.tested = "", False
        self.revealed_secret, self.secret_error, self.secret_overlap = "", "", ""
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        self.saved_url = wall.postback_url or ""
        self.saved_reversal_url = wall.reversal_url or ""
        self._show_secret(wall)
        return await self._preview(self.saved_url)

    def _show_secret(self, wall: Offerwall) -> None:
        self.secret_shown_at = when(wall.signing_secret_shown_at)
        self.previous_secret_until = when(endpoints.secret_overlap_until(wall))

    async def _preview(self, template: str) -> None:
        self.draft = template
        self.unknown = unknown_macros(template)

        def work(_s: Session, offerwall: Offerwall, _a: Account) -> str:
            if not template.strip() or offerwall.api_key_sealed is None:
                return ""
            key = api_keys.api_key(box=box(), offerwall=offerwall)
            return trial.preview_url(template=template, offerwall=offerwall, api_key=key)

        self.preview = await self._on_offerwall(work)

    @rx.event
    @refusals()
    async def edit(self, template: str):
        await self._preview(template)

    @rx.event
    @refusals(into="error")
    async def save(self, form: dict[str, str]):
        self.error = ""
        url, reversal = form.get("postback_url", ""), form.get("reversal_url", "")

        def work(session: Session, offerwall: Offerwall, _a: Account) -> tuple[str, str]:
            offerwalls.set_postback_url(session=session, offerwall=offerwall, url=url or None)
            saved = offerwalls.set_reversal_url(
                session=session, offerwall=offerwall, url=reversal or None
            )
            return saved.postback_url or "", saved.reversal_url or ""

        self.saved_url, self.saved_reversal_url = await self._on_offerwall(work, write=True)
        await self._preview(self.saved_url)
        return rx.toast.success("Postback URL saved.")

    @rx.event
    @refusals(into="secret_error")
    async def reveal_secret(self, form: dict[str, str]):
        """Show the signing secret once, after the signed-in user re-enters their password."""
        if not self._first(form.get(SUBMITTED)):
            return  # a second click of the same button
        password, requested = form.get("password", ""), self._requested()
        self.secret_error = ""
        self.revealed_secret = await self._run(
            lambda s, a: signing_secret.reveal_signing_secret(
                session=s, box=box(), account=a, password=password, requested=requested
            ),
            Role.PUBLISHER,
            Role.STAFF,
            write=True,
        )
        self.secret_shown_at = when(utcnow())

    @rx.event
    def hide_secret(self):
        self.revealed_secret = ""

    @rx.event
    def choose_secret_overlap(self, overlap: str):
        self.secret_overlap = overlap

    @rx.event
    def open_secret_rotation(self, opened: bool):
        self.rotating_secret, self.secret_overlap, self.rotate_secret_error = opened, "", ""

    @rx.event
    @refusals(into="rotate_secret_error")
    async def rotate_secret(self, form: dict[str, str] | None = None):
        """A new signing secret, shown now, after the signed-in user re-enters their
        password (as a reveal asks); the old one also signs for the overlap picked in the
        dialog (none: it stops now). The service checks both and refuses any other overlap."""
        if (asked := self._rotation(form)) is None:
            return None
        (password, overlap, requested), self.rotate_secret_error = asked, ""
        self.revealed_secret, wall = await self._run(
            lambda s, a: signing_secret.rotate_signing_secret(
                session=s,
                box=box(),
                account=a,
                password=password,
                overlap=overlap,
                requested=requested,
            ),
            Role.PUBLISHER,
            Role.STAFF,
            write=True,
        )
        self._show_secret(wall)
        self.rotating_secret, self.secret_overlap, self.secret_error = False, "", ""
        if self.previous_secret_until:
            return rx.toast.success(
                f"New signing secret issued. The previous one also signs until "
                f"{self.previous_secret_until}."
            )
        return rx.toast.success("New signing secret issued. The previous one no longer signs.")

    @rx.event
    @refusals()
    async def send_test(self, drawn_with: int):
        if not self._first(drawn_with):
            return  # a second click of the same button
        # A second click that comes after the page was drawn again (a slow browser)
        # carries the new count: a test postback sent a moment ago counts it as a repeat.
        if time.monotonic() - self._test_sent_at < TEST_REPEAT_SECONDS:
            return
        self._test_sent_at = time.monotonic()
        self.sending = True
        yield
        try:
            wall = await self._on_offerwall(lambda _s, o, _a: o)
            result = await off_loop(
                trial.send_test_postback, settings=settings(), box=box(), offerwall=wall
            )
        finally:
            self.sending = False
        self.tested = True
        self.test_url = result.url
        self.test_status = "" if result.status_code is None else str(result.status_code)
        # Nothing was sent when the target was refused up front: no latency to show.
        self.test_latency = f"{result.latency_ms} ms" if result.sent else "not sent"
        self.test_answer, self.test_error = result.answer, result.error
        ok = result.status_code is not None and 200 <= result.status_code < 300
        yield (
            rx.toast.success(f"Test postback answered {self.test_status}.")
            if ok
            else rx.toast.warning("The test postback did not succeed; see the answer below.")
        )


@dataclass(frozen=True)
class DeliveryLine:
    """A postback as the delivery log lists it (`deliveries.DeliveryRow` with its moments
    and payout written)."""

    id: int
    kind: str
    conversion_status: str
    transaction_id: str
    uid: str
    clickid: str
    mission: str
    payout: str  # "15.1 TKN", in the offerwall's currency
    status: str
    attempts: int
    created_at: str
    next_attempt_at: str  # "" unless pending
    last_status: str
    test: bool  # the offerwall's test player's conversion


def delivery_line(row: deliveries.DeliveryRow) -> DeliveryLine:
    return DeliveryLine(
        id=row.id,
        kind=row.kind,
        conversion_status=row.conversion_status,
        transaction_id=row.transaction_id,
        uid=row.uid,
        clickid=row.clickid,
        mission=row.mission,
        payout=money(row.payout, decimals=row.currency_decimals, code=row.currency_code),
        status=row.status,
        attempts=row.attempts,
        created_at=exact(row.created_at),
        next_attempt_at=exact(row.next_attempt_at),
        last_status=row.last_status,
        test=row.test,
    )


@dataclass(frozen=True)
class AttemptLine:
    """One attempt as the side panel lists it (`deliveries.AttemptRow` with its moment
    written)."""

    started_at: str
    status_code: str
    duration_ms: int
    answer: str
    error: str
    sent: bool


def attempt_line(row: deliveries.AttemptRow) -> AttemptLine:
    return AttemptLine(
        exact(row.started_at), row.status_code, row.duration_ms, row.answer, row.error, row.sent
    )


class DeliveryState(PlayerFilter, OfferwallScoped):
    rows: list[DeliveryLine] = []
    # The postback opened in the side panel.
    open_id: int = 0
    open_url: str = ""
    open_status: str = ""
    attempts: list[AttemptLine] = []

    @rx.event
    @refusals()
    async def load(self):
        self.open_id = 0
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        self._status_from_query()
        await self._fetch()
        return None

    async def _fetch(self) -> None:
        status, search, test, page = self.status_filter, self.search, self._test_only(), self.page

        def work(session: Session, offerwall: Offerwall, _a: Account) -> Window:
            return deliveries.delivery_log(
                session=session,
                offerwall=offerwall,
                status=status,
                search=search,
                test=test,
                page=page,
            )

        self._show(await self._on_offerwall(work), delivery_line)

    @rx.event
    @refusals()
    async def open(self, postback_id: int):
        def work(session: Session, offerwall: Offerwall, _a: Account):
            postback = deliveries.owned_postback(
                session=session, offerwall=offerwall, postback_id=int(postback_id)
            )
            return postback, deliveries.attempts(session=session, postback=postback)

        postback, attempts = await self._on_offerwall(work)
        self.open_id, self.open_url, self.open_status = (
            postback.id or 0,
            postback.url or "",
            postback.status,
        )
        self.attempts = [attempt_line(a) for a in attempts]
        return None

    @rx.event
    def close(self):
        self.open_id = 0

    @rx.event
    @refusals()
    async def resend(self, postback_id: int):
        account = await self._account()
        await off_loop(
            deliveries.resend_postback,
            engine=engine(),
            account=account,
            postback_id=int(postback_id),
            requested=self._requested(),
        )
        await self._fetch()
        self.open_status = "pending"
        return rx.toast.success("Queued for another attempt now.")
