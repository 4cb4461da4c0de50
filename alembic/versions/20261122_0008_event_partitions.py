"""events: partitioned by month on PostgreSQL, so old months are dropped, not deleted

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22 08:00:00.000000

PostgreSQL only (SQLite keeps one table). The existing table is renamed aside, a
partitioned `event` is created with the same columns, the partitions its rows need plus
the current and next months and a DEFAULT one, the rows are moved, and the old table is
dropped. A partitioned table's primary key must include the partition key, so it becomes
(id, time); ids still come from the same sequence, so they stay unique. The whole step
is one transaction: ingestion waits for it (plan it, like any migration).

Like every migration, this one imports no application code: the partition names and
statements below are a frozen copy of what retention (api/ingest/retention.py) creates
and expects, so later changes there cannot change what this step did.
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = "id, game_id, user_id, name, time, value, traits, group_id, received_at"
_COLUMN_DDL = """
    id BIGINT NOT NULL DEFAULT nextval('event_id_seq'::regclass),
    game_id VARCHAR(36) NOT NULL,
    user_id VARCHAR(128) NOT NULL,
    name VARCHAR(64) NOT NULL,
    time TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    value FLOAT,
    traits JSONB,
    group_id VARCHAR(128),
    received_at TIMESTAMP WITHOUT TIME ZONE NOT NULL,
    CONSTRAINT fk_event_game_id_game FOREIGN KEY (game_id)
        REFERENCES game (id) ON DELETE CASCADE
"""


PARTITION_SCHEMA = "event_partitions"
DEFAULT_PARTITION = "event_default"


def _month_start(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def _next_month(start: datetime) -> datetime:
    return (start + timedelta(days=32)).replace(day=1)


def _months(first: datetime, last: datetime) -> list[datetime]:
    """Each month start from `first`'s month to `last`'s, both included."""
    month, end, found = _month_start(first), _month_start(last), []
    while month <= end:
        found.append(month)
        month = _next_month(month)
    return found


def _create_month_partition(month: datetime) -> None:
    """`event_YYYY_MM` in the partitions' schema, for that month's `time` (naive UTC)."""
    lower, upper = (f"'{m:%Y-%m-%d %H:%M:%S}'" for m in (month, _next_month(month)))
    op.execute(
        f"CREATE TABLE IF NOT EXISTS {PARTITION_SCHEMA}.event_{month:%Y_%m} "
        f"PARTITION OF event FOR VALUES FROM ({lower}) TO ({upper})"
    )


def _set_aside(suffix: str) -> None:
    """Rename `event` and its constraint and index names, which are schema-wide."""
    old = f"event_{suffix}"
    op.execute(f"ALTER TABLE event RENAME TO {old}")
    op.execute(f"ALTER TABLE {old} RENAME CONSTRAINT pk_event TO pk_{old}")
    op.execute(f"ALTER TABLE {old} RENAME CONSTRAINT fk_event_game_id_game TO fk_{old}_game")
    op.execute(f"ALTER INDEX ix_event_game_user_time RENAME TO ix_{old}_game_user_time")


def _move_rows_from(old: str) -> None:
    """Copy the rows, hand the id sequence to the new table, drop the old one."""
    op.execute(f"INSERT INTO event ({_COLUMNS}) SELECT {_COLUMNS} FROM {old}")  # noqa: S608
    op.execute("ALTER SEQUENCE event_id_seq OWNED BY event.id")
    op.execute(f"DROP TABLE {old} CASCADE")


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    _set_aside("unpartitioned")
    op.execute(
        f"CREATE TABLE event ({_COLUMN_DDL}, CONSTRAINT pk_event PRIMARY KEY (id, time)) "
        "PARTITION BY RANGE (time)"
    )
    op.execute("CREATE INDEX ix_event_game_user_time ON event (game_id, user_id, time)")
    op.execute(f"CREATE SCHEMA IF NOT EXISTS {PARTITION_SCHEMA}")
    first, last = conn.execute(
        sa.text("SELECT min(time), max(time) FROM event_unpartitioned")
    ).one()
    now = datetime.now(UTC)
    needed = set(_months(now, _next_month(_month_start(now))))  # this month and the next
    if first is not None:  # stored naive UTC
        needed |= set(_months(first.replace(tzinfo=UTC), last.replace(tzinfo=UTC)))
    for month in sorted(needed):
        _create_month_partition(month)
    op.execute(f"CREATE TABLE {PARTITION_SCHEMA}.{DEFAULT_PARTITION} PARTITION OF event DEFAULT")
    _move_rows_from("event_unpartitioned")


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    _set_aside("partitioned")
    op.execute(f"CREATE TABLE event ({_COLUMN_DDL}, CONSTRAINT pk_event PRIMARY KEY (id))")
    op.execute("CREATE INDEX ix_event_game_user_time ON event (game_id, user_id, time)")
    _move_rows_from("event_partitioned")
    op.execute(f"DROP SCHEMA IF EXISTS {PARTITION_SCHEMA} CASCADE")
