"""Models and migrations agree, migrations apply on both databases, and an
unmigrated database is refused."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import models  # noqa: F401
from api.core.db import DatabaseNotMigrated, build_engine, ensure_migrated, pending_migrations


def test_autogenerate_finds_no_difference(engine):
    with engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"compare_type": True})
        diff = compare_metadata(context, SQLModel.metadata)
    assert diff == []


def test_migrated_database_is_at_head(engine):
    assert pending_migrations(engine) == []
    ensure_migrated(engine)


def test_unmigrated_database_is_refused_with_the_command(tmp_path):
    empty = build_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    with pytest.raises(DatabaseNotMigrated) as info:
        ensure_migrated(empty)
    assert "questwall migrate" in str(info.value)


def test_migrations_downgrade_and_upgrade_again(tmp_path):
    from alembic import command
    from api.core.db import alembic_config, migrate

    url = f"sqlite:///{tmp_path / 'cycle.db'}"
    migrate(url)
    command.downgrade(alembic_config(url), "base")
    assert pending_migrations(build_engine(url))
    migrate(url)
    assert pending_migrations(build_engine(url)) == []
