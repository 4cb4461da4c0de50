"""Where the routes run their (blocking) database work.

PostgreSQL work runs in worker threads, so network round trips never hold the event
loop. SQLite work runs inline: its calls are local and short, writes are serialized
anyway, and sqlite3 releases the GIL at every step, so a worker thread would queue
behind the event loop for the GIL again and again. With bench/ingest.py's load on the
API served by granian (2 cores): 22,500 events/s inline, 12,500 through a thread.

A transaction that deadlocks is run again by the service itself
(`api.core.db.run_transaction`), inside the same call: on PostgreSQL its short pauses
between attempts are spent in the worker thread, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from sqlalchemy import Engine

T = TypeVar("T")

_threads = CapacityLimiter(8)


async def run_db(engine: Engine, work: Callable[[], T]) -> T:
    if engine.dialect.name == "sqlite":
        return work()
    return await anyio.to_thread.run_sync(work, limiter=_threads)
