"""Alembic environment: migrates the database named by Questwall's settings."""

from __future__ import annotations

from sqlmodel import SQLModel

import models  # noqa: F401  (registers every table on SQLModel.metadata)
from alembic import context
from api.core.config import get_settings
from api.core.db import build_engine

config = context.config
target_metadata = SQLModel.metadata


def _url() -> str:
    return config.attributes.get("database_url") or get_settings().resolved_database_url


def run_migrations_offline() -> None:
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=_url().startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    settings, url = get_settings(), _url()
    # Through DATABASE_URL's pooler (DATABASE_POOLER) migrations prepare no statements either.
    pooler = settings.database_pooler if url == settings.resolved_database_url else ""
    engine = build_engine(url, pooler=pooler)
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


def _run(connection) -> None:  # type: ignore[no-untyped-def]
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
