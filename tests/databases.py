"""For the few tests that concern one database only: they take the `db_url` fixture (and
so `engine`) with that database alone, instead of being collected for both and skipped
on one; and for the chosen few that also run through PgBouncer in transaction mode
(`tests/pgbouncer.py`), as docs/operations.md tells operators to put it in front."""

from __future__ import annotations

import pytest

only_postgres = pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
only_sqlite = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
# The same PostgreSQL database through PgBouncer (DATABASE_POOLER=pgbouncer).
PGBOUNCER = pytest.param("pgbouncer", marks=pytest.mark.postgres)
only_pgbouncer = pytest.mark.parametrize("db_url", [PGBOUNCER], indirect=True)
# Concurrency tests whose transactions PgBouncer hands from one server connection to
# another: on every database, and through PgBouncer too.
also_pgbouncer = pytest.mark.parametrize(
    "db_url",
    ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), PGBOUNCER],
    indirect=True,
)
postgres_and_pgbouncer = pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres), PGBOUNCER], indirect=True
)
