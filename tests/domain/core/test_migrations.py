"""Models and migrations agree, migrations apply on both databases, and an
unmigrated database is refused."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import models  # noqa: F401
from api.core.db import DatabaseNotMigrated, build_engine, ensure_migrated, pending_migrations
from tests.databases import only_postgres


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


def _at_0004_with_legacy_secrets(db_url: str, box) -> dict[str, str]:
    """The database as 0004 left it: a credential and an offerwall whose secrets are
    sealed with their purpose alone as associated data (the earlier format)."""
    from alembic import command
    from api.core.db import alembic_config

    command.downgrade(alembic_config(db_url), "0004")
    engine = build_engine(db_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("INSERT INTO game (id, name, created_at) VALUES ('g1', 'G', :t)"),
                {"t": NOW},
            )
            conn.execute(
                sa.text(
                    "INSERT INTO game_credential (id, game_id, client_id, secret_sealed, "
                    "secret_digest, created_at) VALUES ('c1', 'g1', 'qw_ci_one', :s, :d, :t)"
                ),
                {
                    "s": box.seal_with("qw_cs_one", associated_data=b"game_credential"),
                    "d": box.digest("qw_cs_one"),
                    "t": NOW,
                },
            )
            conn.execute(
                sa.text(
                    "INSERT INTO offerwall (id, name, status, owid, api_key_sealed, "
                    "api_key_digest, currency_name, currency_code, exchange_rate, "
                    "currency_decimals, created_at) VALUES ('o1', 'W', 'approved', "
                    "'owone', :s, :d, 'US Dollar', 'USD', 1.0, 2, :t)"
                ),
                {
                    "s": box.seal_with("qw_ak_one", associated_data=b"offerwall_api_key"),
                    "d": box.digest("qw_ak_one"),
                    "t": NOW,
                },
            )
    finally:
        engine.dispose()
    return {"client_id": "qw_ci_one", "owid": "owone"}


NOW = "2026-11-22 03:00:00.000000"


@pytest.fixture
def master_key(monkeypatch):
    """The master key the migrations read through the settings, as the server does."""
    from api.core.config import get_settings
    from api.core.crypto import get_secret_box

    def use(*keys: str) -> None:
        monkeypatch.setenv("SECRET_KEY", keys[0])
        monkeypatch.setenv("SECRET_KEY_PREVIOUS", ",".join(keys[1:]))
        get_settings.cache_clear()
        get_secret_box.cache_clear()

    yield use
    get_settings.cache_clear()
    get_secret_box.cache_clear()


def test_migration_binds_existing_secrets_to_their_rows(db_url, engine, master_key):
    from api.core.crypto import (
        SecretBox,
        open_api_key,
        open_client_secret,
    )
    from api.core.db import migrate
    from api.core.keycheck import verify_master_keys

    master_key("key-a")
    box = SecretBox(["key-a"])
    _at_0004_with_legacy_secrets(db_url, box)
    migrate(db_url)
    with engine.connect() as conn:
        sealed = conn.execute(sa.text("SELECT secret_sealed FROM game_credential")).scalar_one()
        api_key = conn.execute(sa.text("SELECT api_key_sealed FROM offerwall")).scalar_one()
        recorded = conn.execute(sa.text("SELECT key_id FROM master_key_check")).scalars().all()
    assert open_client_secret(box, sealed, client_id="qw_ci_one") == "qw_cs_one"
    assert open_api_key(box, api_key, owid="owone") == "qw_ak_one"
    with pytest.raises(ValueError):
        open_client_secret(box, sealed, client_id="qw_ci_other")
    assert recorded == [box.current_key_id]
    verify_master_keys(engine, box)  # the key that sealed them is accepted


def test_migration_0005_downgrades_to_the_earlier_binding(db_url, engine, master_key):
    from alembic import command
    from api.core.crypto import SecretBox
    from api.core.db import alembic_config, migrate

    master_key("key-a")
    box = SecretBox(["key-a"])
    _at_0004_with_legacy_secrets(db_url, box)
    migrate(db_url)
    command.downgrade(alembic_config(db_url), "0004")
    with engine.connect() as conn:
        sealed = conn.execute(sa.text("SELECT secret_sealed FROM game_credential")).scalar_one()
    assert box.open_with(sealed, associated_data=b"game_credential") == "qw_cs_one"
    migrate(db_url)


def test_migration_refuses_a_master_key_that_does_not_open_the_secrets(db_url, engine, master_key):
    from api.core.crypto import SecretBox
    from api.core.db import migrate
    from api.core.keycheck import MasterKeyMismatch

    master_key("key-a")
    _at_0004_with_legacy_secrets(db_url, SecretBox(["key-a"]))
    master_key("key-b")
    with pytest.raises(MasterKeyMismatch, match="SECRET_KEY_PREVIOUS"):
        migrate(db_url)
    master_key("key-a")
    migrate(db_url)  # the right key still migrates it, nothing was half-changed
    assert pending_migrations(engine) == []


def test_migration_0007_fills_sent_from_what_each_attempt_recorded(db_url, engine, box):
    """Attempts kept before the flag: refused targets and postbacks without a URL were
    not sent; anything that got an answer, took time or failed otherwise was."""
    from alembic import command
    from api.core.db import alembic_config, migrate
    from tests.factories import make_conversion, make_game, make_mission, make_offerwall

    wall, _ = make_offerwall(engine, box)
    mission = make_mission(engine, make_game(engine, box).game_id)
    postback_id = make_conversion(engine, mission_id=mission.id, offerwall=wall)
    command.downgrade(alembic_config(db_url), "0006")
    attempts = [  # (status_code, duration_ms, error, sent after the migration)
        (200, 35, None, True),
        (500, 0, None, True),
        (None, 1200, "timed out: ReadTimeout", True),
        (None, 0, "ConnectError: [Errno 111] Connection refused", True),
        (None, 0, "127.0.0.1 is 127.0.0.1, which is not a public address", False),
        (None, 0, "pub.example resolves to 10.0.0.5, which is not a public address", False),
        (None, 0, "only http and https URLs are sent", False),
        (None, 0, "the offerwall has no postback URL", False),
    ]
    with engine.begin() as conn:
        for status_code, duration_ms, error, _ in attempts:
            conn.execute(
                sa.text(
                    "INSERT INTO postback_attempt (postback_id, started_at, duration_ms, "
                    "status_code, error) VALUES (:p, :t, :d, :s, :e)"
                ),
                {"p": postback_id, "t": NOW, "d": duration_ms, "s": status_code, "e": error},
            )
    engine.dispose()  # PostgreSQL: no pooled connection holds the table during the upgrade
    migrate(db_url)
    with engine.connect() as conn:
        sent = conn.execute(sa.text("SELECT sent FROM postback_attempt ORDER BY id")).all()
    assert [bool(s) for (s,) in sent] == [expected for *_, expected in attempts]


def test_migration_0011_names_existing_credentials_in_order_per_game(db_url, engine, box):
    from alembic import command
    from api.core.db import alembic_config, migrate, write_session
    from api.studios import games
    from tests.factories import make_game

    first, second = make_game(engine, box, "One"), make_game(engine, box, "Two")
    with write_session(engine) as session:
        later = games.add_credential(session=session, box=box, game_id=first.game_id)
    engine.dispose()
    command.downgrade(alembic_config(db_url), "0010")
    engine.dispose()
    migrate(db_url)
    with engine.connect() as conn:
        names = dict(conn.execute(sa.text("SELECT client_id, name FROM game_credential")).all())
    assert names == {first.client_id: "Key 1", later.client_id: "Key 2", second.client_id: "Key 1"}


def _event_rows(engine) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, time FROM event ORDER BY id")).all()
    return [(row.id, str(row.time)) for row in rows]


@only_postgres  # only PostgreSQL's event table is partitioned
def test_migration_0008_partitions_an_existing_event_table_and_downgrades(db_url, engine, box):
    """Rows in several months survive the upgrade, each in its month's partition, ids
    keep coming from the same sequence, and the downgrade gives one table back."""
    from alembic import command
    from api.core.db import alembic_config, migrate
    from api.ingest.retention import is_partitioned
    from tests.factories import make_game

    game = make_game(engine, box).game_id
    engine.dispose()
    command.downgrade(alembic_config(db_url), "0007")
    times = ["2024-02-29 23:59:59.999", "2025-07-01 00:00:00", "2026-11-21 12:00:00"]
    with engine.begin() as conn:
        for n, time in enumerate(times):
            conn.execute(
                sa.text(
                    "INSERT INTO event (game_id, user_id, name, time, received_at) "
                    "VALUES (:g, :u, 'level_up', :t, :t)"
                ),
                {"g": game, "u": f"u{n}", "t": time},
            )
    before = _event_rows(engine)
    engine.dispose()

    migrate(db_url)

    with engine.begin() as conn:
        assert is_partitioned(conn)
        homes = conn.execute(sa.text("SELECT tableoid::regclass::text FROM event ORDER BY id"))
        assert [home.split(".")[-1] for (home,) in homes] == [
            "event_2024_02",
            "event_2025_07",
            "event_2026_11",
        ]
        new_id = conn.execute(
            sa.text(
                "INSERT INTO event (game_id, user_id, name, time, received_at) "
                "VALUES (:g, 'u9', 'level_up', now(), now()) RETURNING id"
            ),
            {"g": game},
        ).scalar_one()
    assert _event_rows(engine)[:3] == before
    assert new_id > max(row_id for row_id, _ in before)
    after = _event_rows(engine)
    engine.dispose()

    command.downgrade(alembic_config(db_url), "0007")
    with engine.connect() as conn:
        assert not is_partitioned(conn)
    assert _event_rows(engine) == after
    engine.dispose()
    migrate(db_url)
