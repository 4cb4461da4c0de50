"""The postback dispatcher as a background thread of the all-in-one server."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from api.core.config import get_settings
from api.core.crypto import get_secret_box
from api.core.db import get_engine
from api.services.postbacks import Dispatcher

log = logging.getLogger("questwall.worker")


@asynccontextmanager
async def background_dispatcher() -> AsyncIterator[None]:
    """Deliver postbacks while the server runs (POSTBACK_DISPATCHER=false turns it off,
    e.g. when `questwall worker` processes do it instead)."""
    settings = get_settings()
    if not settings.postback_dispatcher:
        yield
        return
    dispatcher = Dispatcher(engine=get_engine(), box=get_secret_box(), settings=settings)
    thread = threading.Thread(target=dispatcher.run, name="postback-dispatcher", daemon=True)
    thread.start()
    log.info("postback dispatcher started")
    try:
        yield
    finally:
        dispatcher.stop()
        thread.join(timeout=settings.postback_total_timeout + 5)
