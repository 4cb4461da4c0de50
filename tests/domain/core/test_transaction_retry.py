"""run_transaction: a transaction that meets a real deadlock (PostgreSQL) or a locked
database (SQLite) runs again from the start, and nothing else is retried."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, OperationalError

from api.core.db import build_engine, is_transient, run_transaction


@pytest.fixture
def pg_engine(postgres_server_url: str) -> Iterator[Engine]:
    engine = build_engine(postgres_server_url)
    yield engine
    engine.dispose()


@pytest.fixture
def probe(pg_engine: Engine) -> Iterator[str]:
    """A table of its own with two rows (ids 1 and 2) to lock."""
    name = f"retry_probe_{uuid.uuid4().hex[:8]}"
    with pg_engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE {name} (id int PRIMARY KEY, owner text)")
        conn.exec_driver_sql(f"INSERT INTO {name} VALUES (1, ''), (2, '')")
    yield name
    with pg_engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE {name}")


def _wait_until_blocked(engine: Engine, pid: int) -> None:
    """Until the backend `pid` waits for a row lock (bounded)."""
    deadline = time.monotonic() + 10
    query = sa.text("SELECT wait_event_type FROM pg_stat_activity WHERE pid = :pid")
    with engine.connect() as conn:
        while time.monotonic() < deadline:
            if conn.execute(query, {"pid": pid}).scalar() == "Lock":
                return
            conn.rollback()
            time.sleep(0.01)
    raise TimeoutError("the other transaction never waited for the lock")


@pytest.mark.postgres
@pytest.mark.timeout(30)
def test_a_transaction_chosen_as_deadlock_victim_runs_again_and_commits(
    pg_engine: Engine, probe: str
) -> None:
    a_holds_row_1 = threading.Event()
    other_pid: list[int] = []
    other_done: list[str] = []

    def other() -> None:
        # Locks row 2, then row 1: the opposite order of the work below. A long
        # deadlock_timeout makes the work, not this transaction, the victim.
        with pg_engine.begin() as conn:
            other_pid.append(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
            conn.exec_driver_sql("SET LOCAL deadlock_timeout = '20s'")
            conn.exec_driver_sql(f"UPDATE {probe} SET owner = 'other' WHERE id = 2")
            a_holds_row_1.wait(10)
            conn.exec_driver_sql(f"UPDATE {probe} SET owner = 'other' WHERE id = 1")
        other_done.append("committed")

    attempts: list[int] = []

    def work() -> str:
        attempts.append(len(attempts) + 1)
        with pg_engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL deadlock_timeout = '50ms'")
            conn.exec_driver_sql(f"UPDATE {probe} SET owner = 'work' WHERE id = 1")
            if len(attempts) == 1:
                a_holds_row_1.set()
                _wait_until_blocked(pg_engine, other_pid[0])  # the other waits for row 1
            conn.exec_driver_sql(f"UPDATE {probe} SET owner = 'work' WHERE id = 2")
        return "done"

    thread = threading.Thread(target=other)
    thread.start()
    while not other_pid:
        time.sleep(0.01)
    try:
        assert run_transaction(work) == "done"
    finally:
        a_holds_row_1.set()
        thread.join(20)
    assert attempts == [1, 2]
    assert other_done == ["committed"]
    with pg_engine.connect() as conn:
        owners = conn.exec_driver_sql(f"SELECT owner FROM {probe} ORDER BY id").scalars().all()
    assert owners == ["work", "work"]  # the retry ran in full, after the other committed


@pytest.mark.postgres
@pytest.mark.timeout(30)
def test_an_integrity_error_is_not_retried(pg_engine: Engine, probe: str) -> None:
    attempts: list[int] = []

    def work() -> None:
        attempts.append(1)
        with pg_engine.begin() as conn:
            conn.exec_driver_sql(f"INSERT INTO {probe} VALUES (1, 'again')")

    with pytest.raises(IntegrityError):
        run_transaction(work)
    assert attempts == [1]


@pytest.mark.timeout(30)
def test_a_sqlite_database_locked_by_another_process_is_retried(
    sqlite_template: Path, tmp_path: Path
) -> None:
    path = tmp_path / "locked.db"
    path.write_bytes(sqlite_template.read_bytes())
    engine = build_engine(f"sqlite:///{path}")
    # Another process (here: a plain sqlite3 connection) holds the write lock.
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    attempts: list[int] = []
    failures: list[BaseException] = []

    def work() -> int:
        attempts.append(1)
        if len(attempts) == 2:
            holder.execute("ROLLBACK")  # the other process finished
        with engine.connect() as conn:
            driver = conn.connection.driver_connection
            assert driver is not None
            driver.execute("PRAGMA busy_timeout = 20")  # fail fast, not after 30 s
            try:
                with conn.begin():
                    conn.exec_driver_sql("UPDATE catalog_version SET version = version + 1")
            except OperationalError as exc:
                failures.append(exc)
                raise
            finally:
                driver.execute("PRAGMA busy_timeout = 30000")
        return len(attempts)

    try:
        assert run_transaction(work) == 2
    finally:
        holder.close()
        engine.dispose()
    assert len(failures) == 1 and is_transient(failures[0])
