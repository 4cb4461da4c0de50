"""Events do not grow forever: events older than `EVENT_RETENTION_DAYS` are removed
(docs/operations.md#retention).

On PostgreSQL the `event` table is partitioned by month on `time` (migration 0008), with
one partition per month in the `event_partitions` schema and a DEFAULT partition that
catches any time no monthly partition covers, so an insert never fails for want of one.
Pruning there drops whole months past the cut-off (a catalog change, not millions of row
deletes) and deletes row by row only what is left: the month that straddles the cut-off
and the DEFAULT partition. SQLite keeps one table and deletes in batches.

Every delete is one bounded transaction (`batch_size` rows), so ingestion, which writes to
the same table, waits at most for one batch. Progress, conversions and postbacks do not
reference event rows, so they are kept as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from models import tables
from models.types import UTCDateTime, utcnow

PARTITION_SCHEMA = "event_partitions"
DEFAULT_PARTITION = "event_default"
BATCH_SIZE = 5000
# Months created ahead of the current one, so the next month's first event finds its own.
MONTHS_AHEAD = 1
# Catalog changes on `event` wait this long for ingestion's transactions, then give up
# (the next prune tries again) rather than queue every insert behind them.
LOCK_TIMEOUT = "5s"
# Serialises partition creation across processes (any fixed number; "qw_event").
_ADVISORY_LOCK = 0x71775F6576656E74

_event = tables.event
_default_partition = sa.table(
    DEFAULT_PARTITION,
    sa.column("id", sa.BigInteger),
    sa.column("time", UTCDateTime),
    schema=PARTITION_SCHEMA,
)
log = logging.getLogger("questwall.retention")


def _lock_timed_out(exc: sa.exc.OperationalError) -> bool:
    return getattr(exc.orig, "sqlstate", None) == "55P03"  # lock_not_available


@dataclass(frozen=True)
class Pruned:
    """What one prune removed: events in dropped months plus events deleted in batches."""

    dropped_months: tuple[str, ...] = ()
    dropped_rows: int = 0
    deleted_rows: int = 0
    batches: int = 0

    @property
    def removed(self) -> int:
        return self.dropped_rows + self.deleted_rows


def month_start(moment: datetime) -> datetime:
    """The first instant of `moment`'s month (UTC; `moment` must be aware)."""
    moment = moment.astimezone(UTC)
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def next_month(start: datetime) -> datetime:
    return (start + timedelta(days=32)).replace(day=1)


def months(first: datetime, last: datetime) -> Iterator[datetime]:
    """Each month start from `first`'s month to `last`'s, both included."""
    month, end = month_start(first), month_start(last)
    while month <= end:
        yield month
        month = next_month(month)


def coming_months(now: datetime | None = None) -> list[datetime]:
    """The current month and the `MONTHS_AHEAD` after it: the partitions kept ready."""
    ahead = month_start(now or utcnow())
    for _ in range(MONTHS_AHEAD):
        ahead = next_month(ahead)
    return list(months(now or utcnow(), ahead))


def partition_name(month: datetime) -> str:
    return f"event_{month:%Y_%m}"


def _naive(moment: datetime) -> datetime:
    """Naive UTC, as the `time` column stores it (for statements written as text)."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def _literal(moment: datetime) -> str:
    """A partition bound as SQL (DDL takes no bound parameters)."""
    return f"'{_naive(moment):%Y-%m-%d %H:%M:%S}'"


def is_partitioned(conn: Connection) -> bool:
    """Whether this database's `event` table is partitioned (PostgreSQL after 0008)."""
    if conn.dialect.name != "postgresql":
        return False
    found = conn.execute(
        sa.text(
            "SELECT 1 FROM pg_partitioned_table p JOIN pg_class c ON c.oid = p.partrelid "
            "WHERE c.relname = 'event' AND c.relnamespace = current_schema()::regnamespace"
        )
    ).first()
    return found is not None


def create_month_partition(conn: Connection, month: datetime) -> bool:
    """Create `month`'s partition if it is missing (idempotent; True when created).

    Rows of that month already caught by the DEFAULT partition move into the new one
    first, since PostgreSQL refuses a partition whose rows the DEFAULT one holds. The
    table is built apart and attached, which locks `event` less than `PARTITION OF`.
    """
    start = month_start(month)
    name = partition_name(start)
    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _ADVISORY_LOCK})
    qualified = f"{PARTITION_SCHEMA}.{name}"
    if conn.execute(sa.text("SELECT to_regclass(:t)"), {"t": qualified}).scalar() is not None:
        return False
    lower, upper = _literal(start), _literal(next_month(start))
    conn.execute(sa.text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
    conn.execute(sa.text(f"CREATE TABLE {qualified} (LIKE event INCLUDING DEFAULTS)"))
    default = f"{PARTITION_SCHEMA}.{DEFAULT_PARTITION}"
    if conn.execute(sa.text("SELECT to_regclass(:t)"), {"t": default}).scalar() is not None:
        # Both names are ours (a fixed schema and a formatted month), never input.
        where = "WHERE time >= :lower AND time < :upper RETURNING *"
        move = f"WITH moved AS (DELETE FROM {default} {where}) INSERT INTO {qualified} "  # noqa: S608
        move += "SELECT * FROM moved"
        conn.execute(
            sa.text(move),
            {"lower": _naive(start), "upper": _naive(next_month(start))},
        )
    conn.execute(
        sa.text(
            f"ALTER TABLE event ATTACH PARTITION {qualified} FOR VALUES FROM ({lower}) TO ({upper})"
        )
    )
    return True


def create_default_partition(conn: Connection) -> None:
    conn.execute(
        sa.text(
            f"CREATE TABLE IF NOT EXISTS {PARTITION_SCHEMA}.{DEFAULT_PARTITION} "
            "PARTITION OF event DEFAULT"
        )
    )


def ensure_partitions(engine: Engine, *, now: datetime | None = None) -> list[str]:
    """Create the current month's partition and the next ones ahead if missing; returns
    the names created. Cheap when they exist (one lookup each); nothing on SQLite."""
    created: list[str] = []
    with engine.connect() as conn:
        if not is_partitioned(conn):
            return created
    for month in coming_months(now):
        # One transaction per month: a lock wait on one does not hold the others.
        try:
            with engine.begin() as conn:
                if create_month_partition(conn, month):
                    created.append(partition_name(month))
        except sa.exc.OperationalError as exc:
            if not _lock_timed_out(exc):
                raise
            # Its events go to the DEFAULT partition meanwhile; the next prune moves them.
            log.warning("event partition %s not created: table busy", partition_name(month))
    return created


def _monthly_partitions(conn: Connection) -> list[tuple[str, datetime, bool]]:
    """(name, month, attached) of every monthly table in the partitions' schema,
    including one a crashed prune detached but did not drop."""
    rows = conn.execute(
        sa.text(
            "SELECT c.relname, c.relispartition FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = :schema AND c.relkind = 'r' AND c.relname ~ '^event_[0-9]{4}_[0-9]{2}$'"
        ),
        {"schema": PARTITION_SCHEMA},
    )
    found = []
    for name, attached in rows:
        month = datetime.strptime(name, "event_%Y_%m").replace(tzinfo=UTC)
        found.append((name, month, bool(attached)))
    return sorted(found, key=lambda row: row[1])


def _drop_old_months(engine: Engine, cutoff: datetime) -> tuple[list[str], int]:
    """Detach and drop every month that ends at or before the cut-off. Detaching is the
    only step that locks `event` (briefly); the count and the drop touch the detached
    table alone."""
    with engine.connect() as conn:
        old = [
            (n, attached) for n, m, attached in _monthly_partitions(conn) if next_month(m) <= cutoff
        ]
    dropped, rows = [], 0
    for name, attached in old:
        qualified = f"{PARTITION_SCHEMA}.{name}"
        if attached:
            try:
                with engine.begin() as conn:
                    conn.execute(sa.text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
                    conn.execute(sa.text(f"ALTER TABLE event DETACH PARTITION {qualified}"))
            except sa.exc.OperationalError as exc:
                if not _lock_timed_out(exc):
                    raise
                log.warning("event partition %s kept until the next prune: table busy", name)
                continue
        with engine.begin() as conn:
            count = sa.text(f"SELECT count(*) FROM {qualified}")  # noqa: S608 (our name)
            rows += int(conn.execute(count).scalar_one())
            conn.execute(sa.text(f"DROP TABLE {qualified}"))
        dropped.append(name)
    return dropped, rows


def delete_before(
    engine: Engine,
    cutoff: datetime,
    *,
    since: datetime | None = None,
    table: sa.TableClause = _event,
    column: str = "time",
    batch_size: int = BATCH_SIZE,
) -> tuple[int, int]:
    """Delete `table`'s rows whose `column` is older than the cut-off (and not before
    `since`, if given), `batch_size` rows per transaction, until a batch comes back short;
    returns (rows deleted, transactions)."""
    time, row_id = table.c[column], table.c.id
    old = sa.and_(time < cutoff, sa.true() if since is None else time >= since)
    batch = sa.select(row_id).where(old).limit(batch_size).scalar_subquery()
    statement = sa.delete(table).where(old, row_id.in_(batch))
    deleted = batches = 0
    while True:
        with engine.begin() as conn:
            count = int(conn.execute(statement).rowcount or 0)
        deleted += count
        batches += 1
        if count < batch_size:
            return deleted, batches


def prune_events(
    engine: Engine,
    *,
    retention_days: int,
    now: datetime | None = None,
    batch_size: int = BATCH_SIZE,
) -> Pruned:
    """Remove events whose time is more than `retention_days` before now."""
    now = now or utcnow()
    cutoff = now - timedelta(days=retention_days)
    with engine.connect() as conn:
        partitioned = is_partitioned(conn)
    if not partitioned:
        deleted, batches = delete_before(engine, cutoff, batch_size=batch_size)
        return Pruned(deleted_rows=deleted, batches=batches)
    ensure_partitions(engine, now=now)
    dropped, dropped_rows = _drop_old_months(engine, cutoff)
    # Row by row only where whole months cannot go: the month straddling the cut-off,
    # and the DEFAULT partition. A month whose detach gave up waits for the next prune.
    straddling = delete_before(engine, cutoff, since=month_start(cutoff), batch_size=batch_size)
    default = delete_before(engine, cutoff, table=_default_partition, batch_size=batch_size)
    return Pruned(
        tuple(dropped), dropped_rows, straddling[0] + default[0], straddling[1] + default[1]
    )


def prune_refused_clicks(
    engine: Engine, *, retention_days: int, now: datetime | None = None
) -> int:
    """Remove refused clicks (docs/fraud.md#refused-clicks), and events set aside by
    anti-cheat rules (docs/fraud.md#anti-cheat-rules), older than `retention_days`, in
    batches like events; returns how many."""
    cutoff = (now or utcnow()) - timedelta(days=retention_days)
    refused = delete_before(engine, cutoff, table=tables.refused_click, column="created_at")[0]
    return refused + delete_before(engine, cutoff, table=tables.cheat_flag, column="created_at")[0]
