"""Events older than the retention are removed, in bounded batches, and on PostgreSQL
whole months are dropped as partitions (docs/operations.md#retention)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.ingest import retention
from models import tables
from models.types import utcnow
from tests.databases import only_postgres, postgres_and_pgbouncer
from tests.factories import make_game, make_paying_offerwall, make_postback

NOW = utcnow().replace(microsecond=0)
DAY = timedelta(days=1)


def _store(engine: Engine, game_id: str, *times: datetime) -> None:
    rows = [
        {"game_id": game_id, "user_id": f"u{n}", "name": "level_up", "time": t, "received_at": NOW}
        for n, t in enumerate(times)
    ]
    with engine.begin() as conn:
        conn.execute(tables.event.insert(), rows)


def _times(engine: Engine) -> list[datetime]:
    with engine.connect() as conn:
        return list(conn.execute(sa.select(tables.event.c.time).order_by("time")).scalars())


def _count(engine: Engine, table: sa.Table) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())


def test_old_events_are_removed_and_recent_ones_kept(engine, box):
    game = make_game(engine, box).game_id
    kept = [NOW - 89 * DAY, NOW]
    _store(engine, game, NOW - 400 * DAY, NOW - 91 * DAY, *kept)

    pruned = retention.prune_events(engine, retention_days=90, now=NOW)

    assert pruned.removed == 2
    assert _times(engine) == kept


def test_progress_conversions_and_postbacks_are_kept(engine, box):
    wall = make_paying_offerwall(engine, box, postback_url="https://pub.example/pb")
    make_postback(engine, box, wall)
    game = make_game(engine, box).game_id
    _store(engine, game, NOW - 100 * DAY, NOW - 200 * DAY)
    before = [_count(engine, t) for t in (tables.progress, tables.conversion, tables.postback)]

    assert retention.prune_events(engine, retention_days=30, now=NOW).removed == 2

    after = [_count(engine, t) for t in (tables.progress, tables.conversion, tables.postback)]
    assert after == before == [1, 1, 1]


def test_deletes_go_in_bounded_transactions(engine, box):
    game = make_game(engine, box).game_id
    _store(engine, game, *[NOW - (100 + n) * DAY for n in range(35)], NOW)
    commits: list[object] = []

    def count_commit(conn: object) -> None:
        commits.append(conn)

    sa.event.listen(engine, "commit", count_commit)
    try:
        deleted, batches = retention.delete_before(engine, NOW - 90 * DAY, batch_size=10)
    finally:
        sa.event.remove(engine, "commit", count_commit)
    assert (deleted, batches, len(commits)) == (35, 4, 4)
    assert _count(engine, tables.event) == 1


def test_retention_setting_defaults_to_90_days(settings):
    assert settings.event_retention_days == 90


@pytest.fixture
def configured(db_url, monkeypatch):
    """The process settings name this test's database, as `questwall` reads them."""
    from tests.live import forget_process_settings as clear

    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("EVENT_RETENTION_DAYS", "30")
    clear()
    yield
    clear()


def test_questwall_prune_removes_events_past_the_setting_and_says_how_many(engine, box, configured):
    from click.testing import CliRunner

    from api.cli import main

    game = make_game(engine, box).game_id
    _store(engine, game, NOW - 31 * DAY, NOW - 29 * DAY)
    refused = {"reason": "ip_rate", "kind": "mission", "offer_id": "m", "ip": "192.0.2.1"}
    with engine.begin() as conn:
        conn.execute(
            tables.refused_click.insert(),
            [
                {**refused, "user_agent": "", "created_at": NOW - days * DAY}
                for days in (40, 31, 29)
            ],
        )

    result = CliRunner().invoke(main, ["prune"], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "Removed 1 event(s) older than 30 days" in result.output
    assert _times(engine) == [NOW - 29 * DAY]
    assert "Removed 2 refused click(s) and set-aside event(s) older than 30 days" in result.output
    assert _count(engine, tables.refused_click) == 1


def test_questwall_prune_records_when_it_ran_and_what_it_removed(engine, box, configured):
    from click.testing import CliRunner

    from api.cli import main
    from api.ops import last_prune

    game = make_game(engine, box).game_id
    _store(engine, game, NOW - 31 * DAY, NOW - 40 * DAY, NOW - 29 * DAY)
    before = utcnow()

    result = CliRunner().invoke(main, ["prune"], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    with engine.connect() as conn:
        last = last_prune(conn)
    assert last is not None
    assert before <= last.started_at <= last.finished_at <= utcnow()
    assert (last.events, last.refused) == (2, 0)
    assert last.removed == last.records + 2


# PostgreSQL: the partitioned table.


def _partition_of(engine: Engine, event_time: datetime) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT tableoid::regclass::text FROM event WHERE time = :t"),
            {"t": event_time.astimezone(UTC).replace(tzinfo=None)},
        ).scalar_one()


@pytest.fixture
def pg(engine: Engine) -> Engine:
    """The engine of a test marked `only_postgres`: partitions are PostgreSQL's, SQLite
    keeps one table."""
    assert engine.dialect.name == "postgresql"
    return engine


@only_postgres
def test_event_table_is_partitioned_by_month_on_time(pg):
    with pg.connect() as conn:
        strategy = conn.execute(
            sa.text(
                "SELECT p.partstrat FROM pg_partitioned_table p "
                "JOIN pg_class c ON c.oid = p.partrelid WHERE c.relname = 'event'"
            )
        ).scalar_one()
        assert retention.is_partitioned(conn)
    assert strategy == "r"


@only_postgres
def test_a_month_past_the_retention_is_dropped_as_a_partition(pg, box):
    old_month = retention.month_start(NOW - 200 * DAY)
    with pg.begin() as conn:
        assert retention.create_month_partition(conn, old_month)
    game = make_game(pg, box).game_id
    _store(pg, game, old_month + DAY, old_month + 2 * DAY, NOW)
    assert _partition_of(pg, old_month + DAY).endswith(retention.partition_name(old_month))

    pruned = retention.prune_events(pg, retention_days=90, now=NOW)

    assert retention.partition_name(old_month) in pruned.dropped_months
    assert (pruned.dropped_rows, pruned.deleted_rows) == (2, 0)
    assert _times(pg) == [NOW]
    with pg.connect() as conn:
        name = f"{retention.PARTITION_SCHEMA}.{retention.partition_name(old_month)}"
        assert conn.execute(sa.text("SELECT to_regclass(:n)"), {"n": name}).scalar() is None


@only_postgres
def test_next_month_and_far_times_are_stored(pg, box):
    retention.ensure_partitions(pg, now=NOW)
    next_month = retention.next_month(retention.month_start(NOW)) + 3 * DAY
    far_future = datetime(2100, 1, 1, tzinfo=UTC)
    far_past = datetime(1990, 6, 1, tzinfo=UTC)
    game = make_game(pg, box).game_id
    _store(pg, game, next_month, far_future, far_past)

    assert _partition_of(pg, next_month).endswith(retention.partition_name(next_month))
    assert _partition_of(pg, far_future).endswith(retention.DEFAULT_PARTITION)
    assert _partition_of(pg, far_past).endswith(retention.DEFAULT_PARTITION)


@only_postgres
def test_a_new_partition_takes_its_rows_from_the_default_one(pg, box):
    month = datetime(2099, 5, 1, tzinfo=UTC)
    game = make_game(pg, box).game_id
    _store(pg, game, month + DAY)
    try:
        with pg.begin() as conn:
            assert retention.create_month_partition(conn, month)
            assert not retention.create_month_partition(conn, month)  # idempotent
        assert _partition_of(pg, month + DAY).endswith(retention.partition_name(month))
    finally:
        with pg.begin() as conn:
            conn.execute(
                sa.text(
                    f"DROP TABLE IF EXISTS {retention.PARTITION_SCHEMA}."
                    f"{retention.partition_name(month)}"
                )
            )


@postgres_and_pgbouncer  # its lock timeout is SET LOCAL, its lock an advisory one per transaction
def test_a_busy_table_keeps_its_old_month_until_the_next_prune(pg, box, monkeypatch):
    """An ingestion transaction in flight holds `event`: the detach gives up after the
    lock timeout instead of queueing every insert behind it, and the next prune drops it."""
    monkeypatch.setattr(retention, "LOCK_TIMEOUT", "200ms")
    old_month = retention.month_start(NOW - 200 * DAY)
    with pg.begin() as conn:
        retention.create_month_partition(conn, old_month)
    game = make_game(pg, box).game_id
    _store(pg, game, old_month + DAY)

    with pg.connect() as ingestion:
        ingestion.begin()
        _ = ingestion.execute(
            tables.event.insert().values(
                game_id=game, user_id="u", name="n", time=NOW, received_at=NOW
            )
        )
        busy = retention.prune_events(pg, retention_days=90, now=NOW)
        ingestion.commit()
    assert retention.partition_name(old_month) not in busy.dropped_months
    assert busy.removed == 0  # not deleted row by row either

    again = retention.prune_events(pg, retention_days=90, now=NOW)
    assert retention.partition_name(old_month) in again.dropped_months
    assert again.dropped_rows == 1


@only_postgres
def test_a_serving_process_creates_the_coming_months_partitions_at_start(pg, configured):
    from api.cli import server

    ahead = retention.partition_name(retention.coming_months()[-1])
    with pg.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE {retention.PARTITION_SCHEMA}.{ahead}"))

    server._require_ready_to_serve()

    with pg.connect() as conn:
        found = conn.execute(
            sa.text("SELECT to_regclass(:name)"), {"name": f"{retention.PARTITION_SCHEMA}.{ahead}"}
        ).scalar_one()
    assert found is not None
