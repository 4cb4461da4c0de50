"""Changes every process must hear about within a second: the catalog moved, or an
offerwall changed (its status, API keys or currency).

The hot read paths keep what they read of these in memory (the catalog version, an API
key's offerwall: `api/listing/offers.py`) and so read nothing from the database while it
holds. What they keep is valid while `Changes.generation` has not moved and is younger
than `Changes.max_age()`. The generation moves when:

- a transaction of this process that changed them commits (`mark` flags its connection;
  a commit hook moves the generation);
- on PostgreSQL, a NOTIFY that `mark` sends inside the changing transaction arrives
  (PostgreSQL delivers it at commit, to every process that LISTENs: a thread per engine
  here, started on first use, on a connection of its own to `db.listen_url`);
- the listener connects or reconnects (what was sent while it was away is unknown).

Without a channel (SQLite, PostgreSQL behind a transaction pooler with no direct URL to
listen on, or while the listener is away) what is kept expires after `UNHEARD_MAX_AGE`
seconds, so another process's change is seen within that time; with one, after
`HEARD_MAX_AGE`, a safety net only.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine, event
from sqlmodel import Session

from api.core.db import listen_url
from models import Offerwall

log = logging.getLogger(__name__)

CHANNEL = "questwall_changes"
UNHEARD_MAX_AGE = 0.5  # seconds: no channel, so another process's change shows within this
HEARD_MAX_AGE = 60.0
_PENDING = "questwall_changes_pending"  # a connection's flag: its transaction changed something
_NOTIFY = sa.text(f"SELECT pg_notify('{CHANNEL}', '')")


class Changes:
    """What one engine's processes changed, as this process heard it."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.monotonic) -> None:
        self.generation = 0
        self.clock = clock
        self.listening = False  # a LISTEN connection is up (PostgreSQL)
        self._engine = weakref.ref(engine)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def changed(self) -> None:
        self.generation += 1

    def max_age(self) -> float:
        return HEARD_MAX_AGE if self.listening else UNHEARD_MAX_AGE

    def start(self) -> None:
        """Listen for other processes' changes (PostgreSQL with a URL to listen on only;
        idempotent)."""
        engine = self._engine()
        if engine is None or engine.dialect.name != "postgresql" or self._thread is not None:
            return
        url = listen_url(engine)
        if url is None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._listen, args=(url,), name="questwall-changes", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self.listening = False

    def _listen(self, url: sa.URL) -> None:
        while not self._stop.is_set():
            engine = self._engine()
            if engine is None:
                return
            try:
                cargs, cparams = engine.dialect.create_connect_args(url)
                conn = engine.dialect.loaded_dbapi.connect(*cargs, **cparams, autocommit=True)
            except Exception as exc:  # the server is away: expire quickly, try again
                log.warning("cannot listen for changes: %s", type(exc).__name__)
                del engine
                self._stop.wait(1.0)
                continue
            del engine  # hold no reference while waiting: a dropped engine ends the thread
            try:
                with conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening = True
                    self.changed()  # whatever was sent before now went unheard
                    while not self._stop.is_set() and self._engine() is not None:
                        for _ in conn.notifies(timeout=0.2):
                            self.changed()
            except Exception as exc:
                log.warning("stopped listening for changes: %s", type(exc).__name__)
            finally:
                self.listening = False
                self.changed()
            self._stop.wait(0.2)


_REGISTRY: weakref.WeakKeyDictionary[Engine, Changes] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def changes_of(engine: Engine) -> Changes:
    """The engine's `Changes`, listening from the first call on."""
    found = _REGISTRY.get(engine)
    if found is None:
        with _REGISTRY_LOCK:
            found = _REGISTRY.get(engine)
            if found is None:
                found = _REGISTRY[engine] = Changes(engine)
                event.listen(engine, "engine_disposed", _forget)
                found.start()
    return found


def _forget(engine: Engine) -> None:
    """A disposed engine's listener closes (its database may be dropped next); a later
    use starts a new one."""
    with _REGISTRY_LOCK:
        found = _REGISTRY.pop(engine, None)
    if found is not None:
        found.stop()


def mark(session: Session | Connection) -> None:
    """Call in a transaction that changes what the hot paths keep: every process hears of
    it when it commits."""
    conn = session.connection() if isinstance(session, Session) else session
    if conn.info.get(_PENDING):
        return
    conn.info[_PENDING] = True
    if conn.dialect.name == "postgresql":
        conn.execute(_NOTIFY)


@event.listens_for(Engine, "commit")
def _committed(conn: Connection) -> None:
    if conn.info.pop(_PENDING, False) and (found := _REGISTRY.get(conn.engine)) is not None:
        found.changed()


@event.listens_for(Engine, "rollback")
def _rolled_back(conn: Connection) -> None:
    conn.info.pop(_PENDING, None)


@event.listens_for(Offerwall, "after_update")
def _offerwall_updated(_mapper: Any, conn: Connection, _target: Any) -> None:
    mark(conn)
