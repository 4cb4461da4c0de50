"""A game's webhooks (docs/game-integration.md#webhooks): the endpoints listed, added
(the secret shown once), disabled, enabled and removed (`WebhooksState`), and one endpoint
(`WebhookState`, `?game=<id>&endpoint=<id>`): a test event, the secret rotated after the
password, the delivery log with each message's body and attempts, a message sent again
and a time range replayed. Every handler works through GameScoped._on_game (role and
studio checked on the server), and the endpoint is checked to be the game's
(api/webhooks/delivery_log.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import reflex as rx
from sqlmodel import Session

from api import webhooks
from api.accounts import Account
from api.core.paging import Window
from api.webhooks import delivery_log as log
from models import EndpointStatus, Game, WebhookEndpoint
from models.types import utcnow
from portal import routes
from portal.backend import box, off_loop, settings
from portal.components.formatting import exact, when
from portal.state.auth import SUBMITTED, refusals
from portal.state.game_scope import GameScoped
from portal.state.paging import Paged

TYPES = list(webhooks.TYPES)
EVERY_TYPE = "Every type"
# A click on "Send test event" this soon after the last one sent is the second click of a
# double click, not sent (as the test postback counts it).
TEST_REPEAT_SECONDS = 0.5
# The replay form's moments, as <input type="datetime-local"> writes them (read as UTC).
LOCAL_MINUTE = "%Y-%m-%dT%H:%M"


def type_field(index: int) -> str:
    """The name of the add form's checkbox for TYPES[index]."""
    return f"type_{index}"


@dataclass(frozen=True)
class EndpointLine:
    """An endpoint as the pages show it (never its secret)."""

    id: str
    url: str
    description: str
    events: str  # "Every type", or the types it takes
    status: str  # active or disabled
    status_reason: str
    previous_until: str  # until when the replaced secret also signs ("" for none)


def endpoint_line(endpoint: WebhookEndpoint, now: datetime) -> EndpointLine:
    until = endpoint.previous_until
    return EndpointLine(
        id=endpoint.id,
        url=endpoint.url,
        description=endpoint.description,
        events=", ".join(endpoint.event_types) if endpoint.event_types else EVERY_TYPE,
        status=endpoint.status,
        status_reason=endpoint.status_reason or "",
        previous_until=when(until) if until is not None and until > now else "",
    )


class WebhooksState(GameScoped):
    endpoints: list[EndpointLine] = []
    add_errors: dict[str, str] = {}
    # A new endpoint's secret: shown once, then gone (the server keeps it sealed).
    fresh_secret: str = ""
    fresh_url: str = ""
    # Changes after an endpoint is added, so the form empties.
    add_form_key: int = 0

    @rx.event
    @refusals()
    async def load(self):
        if self._requested() != self.game_id:
            self.fresh_secret = self.fresh_url = ""
        self.add_errors = {}
        return await self._load_game_page()

    async def _fetch(self) -> None:
        now = utcnow()
        found = await self._on_game(
            lambda s, g, _a: [
                endpoint_line(e, now) for e in webhooks.list_endpoints(session=s, game_id=g.id)
            ]
        )
        self.endpoints = found

    @rx.event
    @refusals(into="add_errors")
    async def add(self, form: dict[str, Any]):
        if not self._first(form.get(SUBMITTED)):
            return None  # a second click of the same form
        self.add_errors = {}
        url, description = str(form.get("url", "")), str(form.get("description", ""))
        chosen = [t for i, t in enumerate(TYPES) if form.get(type_field(i))]
        allow_private = settings().postback_allow_private

        def work(session: Session, game: Game, _a: Account) -> tuple[str, str]:
            added = webhooks.add_endpoint(
                session=session,
                box=box(),
                game_id=game.id,
                url=url,
                event_types=chosen or None,
                description=description,
                allow_private=allow_private,
            )
            return added.secret, added.endpoint.url

        self.fresh_secret, self.fresh_url = await self._on_game(work, write=True)
        self.add_form_key += 1
        await self._fetch()
        return rx.toast.success("Endpoint added: copy its signing secret now.")

    @rx.event
    def dismiss_secret(self):
        self.fresh_secret = self.fresh_url = ""

    @rx.event
    @refusals()
    async def set_active(self, endpoint_id: str, active: bool):
        def work(session: Session, game: Game, _a: Account) -> str:
            endpoint = webhooks.endpoint_of_game(
                session=session, endpoint_id=endpoint_id, game_id=game.id
            )
            webhooks.set_status(session=session, endpoint=endpoint, active=bool(active))
            return endpoint.url

        url = await self._on_game(work, write=True)
        await self._fetch()
        if active:
            return rx.toast.success(f"Enabled {url}: its waiting messages go out, in order.")
        return rx.toast.success(f"Disabled {url}: its messages wait until it is enabled.")

    @rx.event
    @refusals()
    async def remove(self, endpoint_id: str):
        def work(session: Session, game: Game, _a: Account) -> str:
            endpoint = webhooks.endpoint_of_game(
                session=session, endpoint_id=endpoint_id, game_id=game.id
            )
            url = endpoint.url
            webhooks.remove_endpoint(session=session, endpoint=endpoint)
            return url

        url = await self._on_game(work, write=True)
        await self._fetch()
        return rx.toast.success(f"Removed {url} with its messages.")


@dataclass(frozen=True)
class MessageLine:
    """A message as the delivery log lists it (`log.MessageRow`, moments written)."""

    id: int
    message_id: str
    type: str
    status: str
    attempts: int
    created_at: str
    delivered_at: str
    next_attempt_at: str  # "" unless pending
    last_status: str


def message_line(row: log.MessageRow) -> MessageLine:
    return MessageLine(
        id=row.id,
        message_id=row.message_id,
        type=row.type,
        status=row.status,
        attempts=row.attempts,
        created_at=exact(row.created_at),
        delivered_at=exact(row.delivered_at),
        next_attempt_at=exact(row.next_attempt_at),
        last_status=row.last_status,
    )


@dataclass(frozen=True)
class AttemptLine:
    started_at: str
    status_code: str
    duration_ms: int
    body_excerpt: str
    error: str


def attempt_line(row: log.AttemptRow) -> AttemptLine:
    return AttemptLine(
        exact(row.started_at), row.status_code, row.duration_ms, row.body_excerpt, row.error
    )


def _moment(text: str, name: str) -> datetime:
    """A moment the replay form sent (datetime-local, read as UTC)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise webhooks.WebhookError(f"Enter the {name} as a date and a time.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class WebhookState(Paged, GameScoped):
    endpoint_id: str = ""
    endpoint: EndpointLine | None = None
    # The endpoint asked for is not one of the game's (or no longer exists).
    missing: bool = False
    # The last test event.
    test_type: str = "mission.completed"
    tested: bool = False
    test_delivered: bool = False
    test_status: str = ""
    test_error: str = ""
    test_duration: str = ""
    sending: bool = False
    _test_sent_at: float = 0.0
    # The secret rotation: the dialog's state, and the new secret shown once.
    rotating: bool = False
    overlap: str = ""
    rotate_error: str = ""
    revealed_secret: str = ""
    # The delivery log.
    rows: list[MessageLine] = []
    type_filter: str = ""
    # The message opened in the side panel.
    open_id: int = 0
    opened: MessageLine | None = None
    open_body: str = ""
    attempts: list[AttemptLine] = []
    # The replay dialog, its errors and its default range (the last 24 hours).
    replaying: bool = False
    replay_errors: dict[str, str] = {}
    replay_from: str = ""
    replay_to: str = ""

    def _endpoint_requested(self) -> str:
        return self.router.url.query_parameters.get("endpoint", "")

    @rx.event
    @refusals()
    async def load(self):
        if self._endpoint_requested() != self.endpoint_id:
            self.revealed_secret, self.tested, self.endpoint = "", False, None
            self.type_filter, self.status_filter, self.page = "", "", 1
        self.open_id, self.rotating, self.replaying = 0, False, False
        self.endpoint_id = self._endpoint_requested()
        self.missing = True  # until the endpoint is found to be the game's
        redirect = await self._load_game_page()
        self.missing = False
        return redirect

    async def _fetch(self) -> None:
        endpoint_id, page = self.endpoint_id, self.page
        message_type, status = self.type_filter, self.status_filter
        now = utcnow()

        def work(session: Session, game: Game, _a: Account) -> tuple[EndpointLine, Window]:
            endpoint = webhooks.endpoint_of_game(
                session=session, endpoint_id=endpoint_id, game_id=game.id
            )
            window = log.delivery_log(
                session=session,
                game_id=game.id,
                endpoint_id=endpoint_id,
                message_type=message_type,
                status=status,
                page=page,
            )
            return endpoint_line(endpoint, now), window

        self.endpoint, window = await self._on_game(work)
        self._show(window, message_line)

    @rx.var
    def type_choice(self) -> str:
        return self.type_filter or "all"

    @rx.var
    def back(self) -> str:
        return routes.with_game(routes.WEBHOOKS, self.game_id)

    @rx.event
    @refusals()
    async def filter_type(self, chosen: str):
        self.type_filter = "" if chosen == "all" else chosen
        self.page = 1
        await self._fetch()

    @rx.event
    @refusals()
    async def refresh(self):
        """Read the log again (messages come and go while the page is open)."""
        await self._fetch()

    # --- the test event ----------------------------------------------------------

    @rx.event
    def choose_test_type(self, chosen: str):
        self.test_type = chosen

    @rx.event
    @refusals()
    async def send_test(self, drawn_with: int):
        if not self._first(drawn_with):
            return  # a second click of the same button
        if time.monotonic() - self._test_sent_at < TEST_REPEAT_SECONDS:
            return
        self._test_sent_at = time.monotonic()
        endpoint_id, message_type = self.endpoint_id, self.test_type
        self.sending = True
        yield
        try:
            endpoint = await self._on_game(
                lambda s, g, _a: webhooks.endpoint_of_game(
                    session=s, endpoint_id=endpoint_id, game_id=g.id
                )
            )
            result = await off_loop(
                webhooks.send_test,
                endpoint=endpoint,
                box=box(),
                settings=settings(),
                message_type=message_type,
            )
        finally:
            self.sending = False
        self.tested, self.test_delivered = True, result.delivered
        self.test_status = "" if result.status_code is None else str(result.status_code)
        self.test_error = result.error or ""
        self.test_duration = f"{result.duration_ms} ms" if result.sent else "not sent"
        yield (
            rx.toast.success(f"Test event delivered: HTTP {self.test_status}.")
            if result.delivered
            else rx.toast.warning("The test event was not delivered; see the answer below.")
        )

    # --- the secret --------------------------------------------------------------

    @rx.event
    def open_rotation(self, opened: bool):
        self.rotating, self.overlap, self.rotate_error = opened, "", ""

    @rx.event
    def choose_overlap(self, overlap: str):
        self.overlap = overlap

    @rx.event
    @refusals(into="rotate_error")
    async def rotate(self, form: dict[str, str]):
        """A new signing secret, shown once, after the user entered their password again;
        the old one signs beside it for the overlap picked (none: it stops now)."""
        if not self._first(form.get(SUBMITTED)):
            return None
        password, overlap = form.get("password", ""), form.get("grace", "")
        endpoint_id, self.rotate_error = self.endpoint_id, ""
        now = utcnow()

        def work(session: Session, game: Game, account: Account) -> tuple[str, EndpointLine]:
            secret, endpoint = log.rotate_after_password(
                session=session,
                box=box(),
                account=account,
                game_id=game.id,
                endpoint_id=endpoint_id,
                password=password,
                overlap=overlap,
                now=now,
            )
            return secret, endpoint_line(endpoint, now)

        self.revealed_secret, self.endpoint = await self._on_game(work, write=True)
        self.rotating, self.overlap = False, ""
        until = self.endpoint.previous_until if self.endpoint else ""
        if until:
            return rx.toast.success(
                f"New signing secret issued. The previous one also signs until {until}."
            )
        return rx.toast.success("New signing secret issued. The previous one no longer signs.")

    @rx.event
    def hide_secret(self):
        self.revealed_secret = ""

    # --- one message -------------------------------------------------------------

    @rx.event
    @refusals()
    async def open(self, message_id: int):
        await self._open_message(int(message_id))

    async def _open_message(self, message_id: int) -> None:
        endpoint_id = self.endpoint_id
        found = await self._on_game(
            lambda s, g, _a: log.opened(
                session=s, game_id=g.id, endpoint_id=endpoint_id, message_id=message_id
            )
        )
        self.open_id, self.opened = found.row.id, message_line(found.row)
        self.open_body = found.body
        self.attempts = [attempt_line(a) for a in found.attempts]

    @rx.event
    def close(self):
        self.open_id = 0

    @rx.event
    @refusals()
    async def send_again(self, message_id: int):
        endpoint_id = self.endpoint_id
        now = utcnow()
        endpoint = await self._on_game(
            lambda s, g, _a: log.send_again(
                session=s,
                game_id=g.id,
                endpoint_id=endpoint_id,
                message_id=int(message_id),
                now=now,
            ),
            write=True,
        )
        disabled = endpoint.status == EndpointStatus.DISABLED
        await self._fetch()
        if self.open_id:
            await self._open_message(self.open_id)
        if disabled:
            return rx.toast.success("Queued again: it goes out when the endpoint is enabled again.")
        return rx.toast.success("Queued again: it goes out now, with the same webhook-id.")

    # --- a time range replayed ---------------------------------------------------

    @rx.event
    def open_replay(self):
        now = utcnow().replace(second=0, microsecond=0)
        self.replay_from = (now - timedelta(days=1)).strftime(LOCAL_MINUTE)
        self.replay_to = (now + timedelta(minutes=1)).strftime(LOCAL_MINUTE)
        self.replay_errors, self.replaying = {}, True

    @rx.event
    def cancel_replay(self):
        self.replaying, self.replay_errors = False, {}

    @rx.event
    @refusals(into="replay_errors")
    async def replay(self, form: dict[str, str]):
        if not self._first(form.get(SUBMITTED)):
            return None
        self.replay_errors = {}
        start = _moment(form.get("from", ""), "start")
        end = _moment(form.get("to", ""), "end")
        message_type = form.get("type", "")
        message_type = "" if message_type == "all" else message_type
        endpoint_id, now = self.endpoint_id, utcnow()
        queued = await self._on_game(
            lambda s, g, _a: log.replay_range(
                session=s,
                game_id=g.id,
                endpoint_id=endpoint_id,
                start=start,
                end=end,
                now=now,
                message_type=message_type,
            ),
            write=True,
        )
        self.replaying = False
        await self._fetch()
        if not queued:
            return rx.toast.info("No message of this endpoint was made in that range.")
        noun = "message" if queued == 1 else "messages"
        return rx.toast.success(f"Queued {queued} {noun} again, to go out in order.")
