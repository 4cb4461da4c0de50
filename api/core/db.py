"""The one engine and session factory, shared by the API, the portal and the CLI."""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import URL, Connection, Engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, create_engine

from api.core.config import PROJECT_ROOT, get_settings

_WRITE = "questwall_write"
T = TypeVar("T")
log = logging.getLogger(__name__)


def build_engine(url: str, *, pooler: str = "", direct_url: str = "") -> Engine:
    """Create an engine; SQLite gets WAL, a busy timeout and explicit write locks.

    `pooler` is DATABASE_POOLER: "pgbouncer" when `url` goes through PgBouncer in
    transaction mode. `direct_url` is DATABASE_DIRECT_URL, PostgreSQL itself, where the
    engine's processes LISTEN for changes (`listen_url`)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=20,
            # LIFO: the connection used last (with the warmest page cache) is used next.
            pool_use_lifo=True,
        )
        _configure_sqlite(engine)
        return engine
    # A server that does not answer is refused at start within seconds, not minutes.
    connect_args: dict[str, object] = {"connect_timeout": 10}
    if pooler:
        # Each transaction may run on another server connection: a statement psycopg
        # prepared (after its 5th run on a connection, as "_pg3_0", "_pg3_1"...) is missing
        # there, or clashes with another client's of the same name. Prepare none.
        connect_args["prepare_threshold"] = None
    engine = create_engine(
        url,
        pool_size=10,
        max_overflow=20,
        pool_pre_ping=True,
        pool_use_lifo=True,
        connect_args=connect_args,
    )
    if direct_url:
        _listen_urls[engine] = make_url(direct_url)
    elif pooler:
        _listen_urls[engine] = None  # LISTEN through it would seem to work and hear nothing
    return engine


_listen_urls: weakref.WeakKeyDictionary[Engine, URL | None] = weakref.WeakKeyDictionary()


def listen_url(engine: Engine) -> URL | None:
    """Where the engine's processes LISTEN for changes (api/core/changes.py): PostgreSQL
    itself, at DATABASE_DIRECT_URL or the engine's own URL; None behind a pooler without a
    direct URL, where they do not listen."""
    return _listen_urls.get(engine, engine.url)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA cache_size=-32768")
        cursor.execute("PRAGMA mmap_size=268435456")
        # Checkpoint every ~40 MB of WAL rather than 4 MB: pages that batches rewrite
        # again and again (index leaves, progress rows) are copied back once, not ten times.
        cursor.execute("PRAGMA wal_autocheckpoint=10000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        # A write transaction takes the write lock up front (BEGIN IMMEDIATE), so two
        # writers queue on the busy timeout instead of failing to upgrade a read lock.
        if conn.get_execution_options().get(_WRITE):
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            conn.exec_driver_sql("BEGIN")


@lru_cache
def get_engine() -> Engine:
    settings = get_settings()
    return build_engine(
        settings.resolved_database_url,
        pooler=settings.database_pooler,
        direct_url=settings.database_direct_url,
    )


def new_session(engine: Engine | None = None, *, write: bool = False) -> Session:
    session = Session(engine or get_engine(), expire_on_commit=False)
    if write:
        session.connection(execution_options={_WRITE: True})
    return session


def read_session(engine: Engine | None = None) -> Session:
    """A session for reads that need no transaction around them, such as the checks
    before a signed request's write. On PostgreSQL it runs in autocommit, so it costs no
    BEGIN and no ROLLBACK round trip (each statement reads its own snapshot); SQLite,
    in-process, keeps its ordinary session."""
    engine = engine or get_engine()
    if engine.dialect.name != "postgresql":
        return new_session(engine)
    session = Session(engine, expire_on_commit=False)
    session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})
    return session


# SQLite has one writer at a time. Threads of this process queue on a lock instead of
# on SQLite's busy handler, which sleeps in growing steps and makes latency spiky.
_sqlite_writer = threading.Lock()


@contextmanager
def write_session(engine: Engine | None = None) -> Iterator[Session]:
    """One use case, one transaction: commits on success, rolls back on error."""
    engine = engine or get_engine()
    lock = _sqlite_writer if engine.dialect.name == "sqlite" else nullcontext()
    with lock:
        session = new_session(engine, write=True)
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()


@contextmanager
def write_connection(engine: Engine | None = None) -> Iterator[Connection]:
    """A Core connection in one write transaction, for hot paths that need no ORM."""
    engine = engine or get_engine()
    lock = _sqlite_writer if engine.dialect.name == "sqlite" else nullcontext()
    with lock, engine.connect() as conn:
        conn = conn.execution_options(**{_WRITE: True})
        with conn.begin():
            yield conn


# --- retrying a transaction that lost a lock race ------------------------------------

TRANSACTION_ATTEMPTS = 3
# PostgreSQL's deadlock_detected and serialization_failure: the server rolled the
# transaction back, and running it again from the start may well succeed.
_RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})


def is_transient(exc: BaseException) -> bool:
    """True for a deadlock, a serialization failure, or a SQLite database still locked
    by another process after the busy timeout: errors a fresh attempt may not meet."""
    if not isinstance(exc, DBAPIError):
        return False
    cause = exc.orig
    if getattr(cause, "sqlstate", None) in _RETRYABLE_SQLSTATES:  # psycopg
        return True
    return isinstance(cause, sqlite3.OperationalError) and "database is locked" in str(cause)


def run_transaction(
    work: Callable[[], T], *, attempts: int = TRANSACTION_ATTEMPTS, backoff: float = 0.02
) -> T:
    """Run `work`, a whole unit of work that opens and commits its own transaction,
    again when it fails with a transient error (`is_transient`), at most `attempts`
    times in all, after a short random pause that doubles each time.

    The failed attempt was rolled back entirely, so `work` must start from scratch
    each time and keep nothing from an earlier attempt (no state outside the database
    it changed along the way). Any other error, or the last transient one, is raised.
    """
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except DBAPIError as exc:
            if attempt == attempts or not is_transient(exc):
                raise
            # Jitter: two transactions that just deadlocked should not meet again at once.
            pause = random.uniform(0, backoff * 2 ** (attempt - 1))  # noqa: S311
            log.info(
                "transaction attempt %d failed (%s); retrying", attempt, type(exc.orig).__name__
            )
            time.sleep(pause)
    raise AssertionError("unreachable")  # the loop returns or raises


# --- migrations -----------------------------------------------------------------------

ALEMBIC_INI = PROJECT_ROOT / "alembic.ini"
MIGRATE_COMMAND = "questwall migrate"


def alembic_config(url: str | None = None):
    from alembic.config import Config

    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.attributes["database_url"] = url or get_settings().resolved_database_url
    return config


def migrate(url: str | None = None, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(url), revision)


def pending_migrations(engine: Engine | None = None) -> list[str]:
    """Revisions the database lacks; empty when it is at head."""
    from alembic.runtime.migration import MigrationContext

    with (engine or get_engine()).connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    if current == schema_heads():
        return []
    return [rev.revision for rev in _scripts().walk_revisions() if rev.revision not in current]


def schema_heads() -> set[str]:
    """The migrations' head revisions: the schema this code runs on."""
    return set(_scripts().get_heads())


@lru_cache(maxsize=1)
def _scripts() -> Any:
    """The migration scripts, read once per process (they change only with the code)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


class DatabaseNotMigrated(RuntimeError):
    pass


def ensure_migrated(engine: Engine | None = None) -> None:
    """Refuse to serve an unmigrated database, naming the command that fixes it."""
    missing = pending_migrations(engine)
    if missing:
        url = (engine or get_engine()).url.render_as_string(hide_password=True)
        raise DatabaseNotMigrated(
            f"The database at {url} is not migrated ({len(missing)} migration(s) pending). "
            f"Run `{MIGRATE_COMMAND}` first."
        )


def ping(engine: Engine | None = None) -> None:
    with (engine or get_engine()).connect() as conn:
        conn.execute(text("SELECT 1"))
