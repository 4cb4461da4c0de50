"""For the few tests that concern one database only: they take the `db_url` fixture (and
so `engine`) with that database alone, instead of being collected for both and skipped
on one."""

from __future__ import annotations

import pytest

only_postgres = pytest.mark.parametrize(
    "db_url", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
only_sqlite = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
