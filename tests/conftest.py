"""Test fixtures: every test gets its own migrated database, on SQLite and on PostgreSQL.

PostgreSQL comes from TEST_POSTGRES_URL (default: the local server). Without a server
its tests skip with a message, unless QUESTWALL_REQUIRE_POSTGRES=1 (CI), where they fail.
A chosen few also run through PgBouncer in transaction mode (the `pgbouncer` database of
`tests/databases.py`: the same PostgreSQL database, reached as docs/operations.md says).
Redis comes from TEST_REDIS_URL (default: the local server), likewise skipped unless
QUESTWALL_REQUIRE_REDIS=1; each test gets a key prefix of its own and deletes only its keys.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

# Never touch a developer's data/ or master key from tests.
os.environ.setdefault("SECRET_KEY", "test-master-key-not-for-production")
os.environ["REFLEX_TELEMETRY_ENABLED"] = "false"
# Servers the tests start stop at once on SIGTERM (the drain's own test sets its time).
os.environ["QUESTWALL_DRAIN_SECONDS"] = "0"
# Never share a developer's Redis: tests that want Redis pass TEST_REDIS_URL and a prefix of
# their own (an empty variable also wins over a REDIS_URL in `.env`).
os.environ["REDIS_URL"] = ""
os.environ.pop("REFLEX_REDIS_URL", None)

from api.core import crypto
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import build_engine, migrate
from models.types import move_clock
from tests import audit_guard
from tests.pgbouncer import pgbouncer_binary, pooler_settings, running_pgbouncer

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
PG_URL = os.environ.get("TEST_POSTGRES_URL", DEFAULT_PG)
REQUIRE_PG = os.environ.get("QUESTWALL_REQUIRE_POSTGRES") == "1"
MASTER_KEY = "test-master-key-not-for-production"
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REQUIRE_REDIS = os.environ.get("QUESTWALL_REQUIRE_REDIS") == "1"


# The password hashing every process but the tests' own uses (`test_crypto.py` checks its cost).
PRODUCTION_PASSWORDS = crypto._passwords


@pytest.fixture(autouse=True)
def every_change_audited() -> Iterator[None]:
    """Fail the test whose run committed a change of money or access without its audit
    event, naming the statements and the service code that made them
    (tests/audit_guard.py)."""
    audit_guard.install()
    audit_guard.take()
    yield
    missed = audit_guard.take()
    if missed:
        pytest.fail(
            "Changed without an audit event:\n" + "\n".join(f"  {v}" for v in missed),
            pytrace=False,
        )


@pytest.fixture(scope="session", autouse=True)
def cheap_password_hashing() -> Iterator[None]:
    """Argon2id at its lowest work factor in the tests' own process, as Django's test
    settings do: the scheme and every code path stay the production ones, a hash costs a
    millisecond instead of a quarter second. Servers the tests start as processes of their
    own hash at the production cost."""
    from passlib.context import CryptContext

    crypto._passwords = CryptContext(
        schemes=["argon2"],
        deprecated="auto",
        argon2__memory_cost=8,
        argon2__rounds=1,
        argon2__parallelism=1,
    )
    yield
    crypto._passwords = PRODUCTION_PASSWORDS


def _postgres_problem() -> str | None:
    try:
        engine = sa.create_engine(PG_URL, connect_args={"connect_timeout": 3})
        with engine.connect():
            pass
        engine.dispose()
        return None
    except Exception as exc:  # any failure to connect
        return f"PostgreSQL at {make_url(PG_URL).render_as_string(hide_password=True)}: {exc}"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    problem = _postgres_problem()
    if problem:
        if REQUIRE_PG:
            pytest.fail(
                f"PostgreSQL is required (QUESTWALL_REQUIRE_POSTGRES=1) but unreachable: {problem}"
            )
        pytest.skip(f"PostgreSQL not available, its tests are skipped ({problem})")
    # A database of our own, migrated once; each test truncates what it wrote.
    name = f"questwall_test_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    migrate(url)
    yield url
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def empty_postgres(engine: Engine) -> None:
    """Delete every row and restart every sequence, as `TRUNCATE … RESTART IDENTITY` would,
    in one round trip: DELETE on the few rows a test writes takes 20 ms where TRUNCATE,
    which makes every table anew, takes 200-500 ms."""
    with engine.begin() as conn:
        sequences = conn.exec_driver_sql(
            "SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename) FROM pg_sequences"
            " WHERE schemaname = current_schema()"
        ).scalars()
        conn.exec_driver_sql(
            "SET LOCAL session_replication_role = replica;"  # no foreign-key order to keep
            + "".join(f'DELETE FROM "{t.name}";' for t in SQLModel.metadata.sorted_tables)
            + "".join(f"ALTER SEQUENCE {name} RESTART;" for name in sequences)
        )


@pytest.fixture(scope="session")
def pgbouncer_server_url(
    postgres_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The test database through a PgBouncer of this test worker's own (transaction mode)."""
    if pgbouncer_binary() is None:
        problem = "PgBouncer is not installed (`make install-dev` installs Debian's pgbouncer)"
        if REQUIRE_PG:
            pytest.fail(f"{problem}, and QUESTWALL_REQUIRE_POSTGRES=1 needs it")
        pytest.skip(f"{problem}: the tests through it are skipped")
    with running_pgbouncer(postgres_server_url, tmp_path_factory.mktemp("pgbouncer")) as url:
        yield url


@pytest.fixture(scope="session")
def sqlite_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This worker's SQLite database: a fresh copy of the template for each test."""
    return tmp_path_factory.mktemp("sqlite") / "questwall.db"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "sqlite":
        path: Path = request.getfixturevalue("sqlite_path")
        for leftover in (
            path,
            path.with_name(path.name + "-wal"),
            path.with_name(path.name + "-shm"),
        ):
            leftover.unlink(missing_ok=True)  # a connection a test left open keeps its own copy
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
    elif request.param == "pgbouncer":
        yield request.getfixturevalue("pgbouncer_server_url")
    else:
        yield request.getfixturevalue("postgres_server_url")


@pytest.fixture(scope="session")
def engines() -> Iterator[dict[str, Engine]]:
    """One engine per database URL for the whole run: its compiled statements and its
    dialect's first look at the server are kept from test to test."""
    built: dict[str, Engine] = {}
    yield built
    for engine in built.values():
        engine.dispose()


@pytest.fixture
def engine(db_url: str, engines: dict[str, Engine]) -> Iterator[Engine]:
    """The test's engine: its own object (what the service keeps per engine, its caches and
    its listener for changes, starts empty), on the run's engine of `db_url` (pool,
    dialect and compiled statements). Disposed at the end: no connection outlives the
    test's database."""
    pooling = pooler_settings(db_url)
    if pooling["DATABASE_POOLER"]:  # the engine's LISTEN address is its own: build it anew
        engine = build_engine(
            db_url, pooler=pooling["DATABASE_POOLER"], direct_url=pooling["DATABASE_DIRECT_URL"]
        )
    else:
        if db_url not in engines:
            engines[db_url] = build_engine(db_url)
        engine = engines[db_url].execution_options()
    yield engine
    if engine.dialect.name == "postgresql":
        empty_postgres(engine)
    engine.dispose()


@pytest.fixture
def box() -> SecretBox:
    return SecretBox([MASTER_KEY])


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    # Tests' players share a handful of addresses and several offerwalls: the shared_ip
    # and multi_offerwall signals would hold their conversions (test_review.py turns them
    # on).
    return Settings(
        DATABASE_URL=db_url,
        **pooler_settings(db_url),
        SECRET_KEY=MASTER_KEY,
        QUESTWALL_DATA_DIR=tmp_path / "data",
        QUESTWALL_PLAYERS_PER_IP=0,
        QUESTWALL_FRAUD_DEFAULTS="multi_offerwall=allow",
    )


@pytest.fixture(scope="session")
def redis_server_url() -> str:
    import redis

    try:
        client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3)
        client.ping()
        client.close()
    except redis.RedisError as exc:
        if REQUIRE_REDIS:
            pytest.fail(f"Redis is required (QUESTWALL_REQUIRE_REDIS=1) but unreachable: {exc}")
        pytest.skip(f"Redis not available at {REDIS_URL}, its tests are skipped ({exc})")
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_server_url: str) -> Iterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards (never FLUSHALL)."""
    import redis

    prefix = f"questwall-test-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_server_url)
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def redis_url(redis_server_url: str, redis_prefix: str) -> str:
    """The test Redis server's URL; use it with the `redis_prefix` fixture's key prefix."""
    return redis_server_url


class MovedClock:
    """The service's clock (`models.types.utcnow`) set to a moment of the test's choosing;
    it runs on from there at the real pace."""

    def set(self, moment: datetime) -> None:
        move_clock(moment - datetime.now(UTC))


@pytest.fixture
def clock() -> Iterator[MovedClock]:
    """Move the service's clock in this process (a day, a DST change) instead of sleeping;
    put back when the test ends."""
    yield MovedClock()
    move_clock(timedelta(0))
