"""The postback and webhook dispatchers and the mail and alert senders as background threads of the
all-in-one server, and the dispatcher's periodic task (the heartbeat, then `approve_held`),
which every process that runs a dispatcher hands it."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import Engine

from api.conversions import auto_approve
from api.core.config import Settings, get_settings
from api.core.crypto import get_secret_box
from api.core.db import get_engine
from api.core.outbox import OutboxSender
from api.mail import MailSender
from api.postbacks import AlertSender, Dispatcher
from api.webhooks import WebhookDispatcher

log = logging.getLogger("questwall.worker")


def approve_held(engine: Engine) -> Callable[[], None]:
    """The dispatcher's periodic task (once a minute): approve the held conversions whose
    review time is up; their postbacks join the outbox the dispatcher reads
    (docs/fraud.md#the-review-queue)."""

    def approve() -> None:
        approved = auto_approve(engine)
        if approved:
            log.info("approved %d held conversions whose review time was up", approved)

    return approve


def alive_then(task: Callable[[], None], *, engine: Engine, kind: str) -> Callable[[], None]:
    """The dispatcher's periodic `task`, after this process's heartbeat (a metric and its
    `worker_heartbeat` row, which the staff's System page lists): `kind` is "serve" for
    the server's own dispatcher, "worker" for `questwall worker`."""
    from api.ops import beat, this_process

    process = this_process(kind, delivers(get_settings()))

    def periodic() -> None:
        beat(engine, process)
        task()

    return periodic


def delivers(settings: Settings) -> list[str]:
    """What a process that runs the dispatchers delivers, with these settings."""
    sent = ["postbacks", "webhooks"]
    if settings.smtp_url:
        sent.append("mail")
    if settings.alert_webhook_url:
        sent.append("alerts")
    return sent


@asynccontextmanager
async def background_dispatcher() -> AsyncIterator[None]:
    """Deliver postbacks while the server runs (POSTBACK_DISPATCHER=false turns it off,
    e.g. when `questwall worker` processes do it instead)."""
    settings = get_settings()
    if not settings.postback_dispatcher:
        yield
        return
    engine = get_engine()
    dispatcher = Dispatcher(
        engine=engine,
        box=get_secret_box(),
        settings=settings,
        periodic=alive_then(approve_held(engine), engine=engine, kind="serve"),
    )
    thread = threading.Thread(target=dispatcher.run, name="postback-dispatcher", daemon=True)
    thread.start()
    log.info("postback dispatcher started")
    try:
        yield
    finally:
        dispatcher.stop()
        thread.join(timeout=settings.postback_total_timeout + 5)


@asynccontextmanager
async def background_webhooks() -> AsyncIterator[None]:
    """Deliver games' webhooks while the server runs (with the postback dispatcher:
    POSTBACK_DISPATCHER=false leaves both to `questwall worker`)."""
    settings = get_settings()
    if not settings.postback_dispatcher:
        yield
        return
    stop = threading.Event()
    dispatcher = WebhookDispatcher(engine=get_engine(), box=get_secret_box(), settings=settings)
    thread = threading.Thread(
        target=dispatcher.run, args=(stop,), name="webhook-dispatcher", daemon=True
    )
    thread.start()
    log.info("webhook dispatcher started")
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=settings.postback_total_timeout + 5)


@asynccontextmanager
async def background_mail() -> AsyncIterator[None]:
    """Send queued mail while the server runs, when SMTP_URL is set (without it, mail
    stays in the outbox for staff to read)."""
    async with _running(mail_sender()):
        yield


@asynccontextmanager
async def background_alerts() -> AsyncIterator[None]:
    """Post queued alerts to ALERT_WEBHOOK_URL while the server runs, when it is set."""
    async with _running(alert_sender()):
        yield


@asynccontextmanager
async def _running(sender: OutboxSender | None) -> AsyncIterator[None]:
    """Run an outbox's sender in a thread of its own while the block runs (None: nothing)."""
    if sender is None:
        yield
        return
    thread = threading.Thread(target=sender.run, name=f"{sender.kind}-sender", daemon=True)
    thread.start()
    log.info("%s sender started", sender.kind)
    try:
        yield
    finally:
        sender.stop()
        thread.join(timeout=30)


def mail_sender() -> MailSender | None:
    """A sender for this process's settings; None without SMTP_URL."""
    settings = get_settings()
    if not settings.smtp_url:
        return None
    return MailSender(engine=get_engine(), settings=settings)


def alert_sender() -> AlertSender | None:
    """A sender for this process's settings; None without ALERT_WEBHOOK_URL."""
    settings = get_settings()
    if not settings.alert_webhook_url:
        return None
    return AlertSender(engine=get_engine(), settings=settings)


def serve_probes(host: str, port: int) -> threading.Thread:
    """`/livez`, `/readyz` and `/metrics` of a `questwall worker` on `host:port`, from a
    thread of its own (the worker's signal handling stays its own: SIGTERM marks it
    draining)."""
    import uvicorn

    from api.ops import (
        OutboxCollector,
        Readiness,
        read_at_scrape,
        watch_pool,
        with_metrics,
        with_probes,
    )

    async def nothing_else(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})

    settings = get_settings()
    readiness = Readiness(get_engine(), redis_url=settings.redis_url)
    from api.postbacks.outbox import SENDABLE as POSTBACKS_SENDABLE
    from api.webhooks.messages import SENDABLE as WEBHOOKS_SENDABLE

    sendable = {"postback": POSTBACKS_SENDABLE, "webhook": WEBHOOKS_SENDABLE}
    read_at_scrape(OutboxCollector(get_engine(), redis_url=settings.redis_url, sendable=sendable))
    watch_pool(get_engine())
    config = uvicorn.Config(
        with_probes(
            with_metrics(nothing_else, routes=None, allow=settings.metrics_allow),
            readiness,
            detail_allow=settings.metrics_allow,
        ),
        host=host,
        port=port,
        lifespan="off",
        log_config=None,  # its lines go through the process's handler (LOG_FORMAT)
        log_level="warning",
        access_log=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="probes", daemon=True)
    thread.start()
    log.info("probes and metrics on http://%s:%d (/livez, /readyz, /metrics)", host, port)
    return thread
