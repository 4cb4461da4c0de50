"""The postback URL editor (live preview, test postback) and the delivery log."""

from __future__ import annotations

import reflex as rx
from sqlmodel import Session

from api.services import offerwalls, publishers
from api.services.access import Account
from api.services.postback_url import unknown_macros
from models import Offerwall
from portal.backend import box, engine, off_loop, settings
from portal.state.auth import refusals
from portal.state.paging import Paged
from portal.state.workspace import OfferwallScoped

EXAMPLE_TEMPLATE = (
    "https://example.com/postback?uid={uid}&txn={transaction_id}&payout={payout}&hash={hash_key}"
)


class PostbackState(OfferwallScoped):
    saved_url: str = ""
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

    @rx.event
    @refusals()
    async def load(self):
        self.error, self.tested = "", False
        redirect, wall = await self._open()
        if wall is None:
            return redirect
        self.saved_url = wall.postback_url or ""
        return await self._preview(self.saved_url)

    async def _preview(self, template: str) -> None:
        self.draft = template
        self.unknown = unknown_macros(template)

        def work(_s: Session, offerwall: Offerwall, _a: Account) -> str:
            if not template.strip() or offerwall.api_key_sealed is None:
                return ""
            key = publishers.api_key(box=box(), offerwall=offerwall)
            return publishers.preview_url(template=template, offerwall=offerwall, api_key=key)

        self.preview = await self._on_offerwall(work)

    @rx.event
    @refusals()
    async def edit(self, template: str):
        await self._preview(template)

    @rx.event
    @refusals(into="error")
    async def save(self, form: dict[str, str]):
        self.error = ""
        url = form.get("postback_url", "")

        def work(session: Session, offerwall: Offerwall, _a: Account) -> str:
            saved = offerwalls.set_postback_url(
                session=session, offerwall=offerwall, url=url or None
            )
            return saved.postback_url or ""

        self.saved_url = await self._on_offerwall(work, write=True)
        await self._preview(self.saved_url)
        return rx.toast.success("Postback URL saved.")

    @rx.event
    @refusals()
    async def send_test(self, drawn_with: int):
        if not self._first(drawn_with):
            return  # a second click of the same button
        self.sending = True
        yield
        try:
            wall = await self._on_offerwall(lambda _s, o, _a: o)
            result = await off_loop(
                publishers.send_test_postback, settings=settings(), box=box(), offerwall=wall
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


class DeliveryState(Paged, OfferwallScoped):
    rows: list[publishers.DeliveryRow] = []
    # The postback opened in the side panel.
    open_id: int = 0
    open_url: str = ""
    open_status: str = ""
    attempts: list[publishers.AttemptRow] = []

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
        status, search, page = self.status_filter, self.search, self.page

        def work(session: Session, offerwall: Offerwall, _a: Account) -> publishers.Window:
            return publishers.delivery_log(
                session=session, offerwall=offerwall, status=status, search=search, page=page
            )

        self._show(await self._on_offerwall(work))

    @rx.event
    @refusals()
    async def open(self, postback_id: int):
        def work(session: Session, offerwall: Offerwall, _a: Account):
            postback = publishers.owned_postback(
                session=session, offerwall=offerwall, postback_id=int(postback_id)
            )
            return postback, publishers.attempts(session=session, postback=postback)

        postback, attempts = await self._on_offerwall(work)
        self.open_id, self.open_url, self.open_status = (
            postback.id or 0,
            postback.url or "",
            postback.status,
        )
        self.attempts = attempts
        return None

    @rx.event
    def close(self):
        self.open_id = 0

    @rx.event
    @refusals()
    async def resend(self, postback_id: int):
        account = await self._account()
        await off_loop(
            publishers.resend_postback,
            engine=engine(),
            account=account,
            postback_id=int(postback_id),
            requested=self._requested(),
        )
        await self._fetch()
        self.open_status = "pending"
        return rx.toast.success("Queued for another attempt now.")
