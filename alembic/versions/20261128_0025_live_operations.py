"""live operations: recurring missions, rotating pools, ladders, period caps, schedules

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-28 13:30:00.000000

Offers gain `start_date`; missions their live-operations definition (`recurrence`,
`stages`, `period_caps`, `cap_per_offerwall`, `pool`); a game's pools and the per-period
cap counters get tables. Progress gains its period: a recurring mission has one row per
player and period, so the unique key becomes (mission, player, period), "" for the rows
of every other mission (all existing rows). Conversions keep their period and stage.

SQLite cannot change a table's unique key in place, and conversions refer to progress:
with foreign keys deferred to the commit, the rows are copied aside, the table is created
again from its own SQL with the new key and refilled.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime()
_OLD_KEY = ("uq_progress_mission_player", "(mission_id, platform_user_id)")
_NEW_KEY = ("uq_progress_mission_player_period", "(mission_id, platform_user_id, period)")


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    for table in ("mission", "quest"):
        op.add_column(table, sa.Column("start_date", _UTC, nullable=True))
    op.add_column("mission", sa.Column("recurrence", _json(), nullable=True))
    op.add_column("mission", sa.Column("stages", _json(), nullable=True))
    op.add_column("mission", sa.Column("period_caps", _json(), nullable=True))
    op.add_column("mission", sa.Column("cap_per_offerwall", sa.Integer(), nullable=True))
    op.add_column("mission", sa.Column("pool", sa.String(length=64), nullable=True))
    op.add_column("conversion", sa.Column("period", sa.String(length=10), nullable=True))
    op.add_column("conversion", sa.Column("stage", sa.Integer(), nullable=True))
    op.add_column(
        "progress", sa.Column("period", sa.String(length=10), nullable=False, server_default="")
    )
    op.add_column("progress", sa.Column("resets_at", _UTC, nullable=True))
    _change_progress_key(_OLD_KEY, _NEW_KEY)
    op.create_table(
        "mission_pool",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("game_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("every", sa.String(length=8), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("week_starts_on", sa.String(length=9), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "name", name="uq_mission_pool_game_name"),
    )
    op.create_table(
        "cap_count",
        sa.Column("mission_id", sa.String(length=36), nullable=False),
        sa.Column("scope", sa.String(length=36), nullable=False),
        sa.Column("period", sa.String(length=16), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["mission_id"], ["mission.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("mission_id", "scope", "period"),
    )


def downgrade() -> None:
    op.drop_table("cap_count")
    op.drop_table("mission_pool")
    # The old key holds one row per mission and player: the rows of periods go, unless a
    # conversion refers to one, and then the downgrade cannot keep every conversion.
    op.execute(
        "DELETE FROM progress WHERE period <> '' AND id NOT IN (SELECT progress_id FROM conversion)"
    )
    doubled = (
        op.get_bind()
        .exec_driver_sql(
            "SELECT count(*) FROM (SELECT 1 FROM progress GROUP BY mission_id, platform_user_id"
            " HAVING count(*) > 1) AS doubled"
        )
        .scalar_one()
    )
    if doubled:
        raise RuntimeError(
            f"cannot downgrade below 0025: {doubled} players were paid for a recurring or "
            "pooled mission in more than one period, which the earlier schema cannot hold"
        )
    _change_progress_key(_NEW_KEY, _OLD_KEY)
    for column in ("resets_at", "period"):
        _drop(("progress", column))
    for column in ("stage", "period"):
        _drop(("conversion", column))
    for column in ("pool", "cap_per_offerwall", "period_caps", "stages", "recurrence"):
        _drop(("mission", column))
    for table in ("quest", "mission"):
        _drop((table, "start_date"))


def _drop(where: tuple[str, str]) -> None:
    # Both databases drop a plain column in place (a batch would rebuild the table, which
    # SQLite cannot do to a table other rows refer to).
    op.execute(f"ALTER TABLE {where[0]} DROP COLUMN {where[1]}")


def _change_progress_key(old: tuple[str, str], new: tuple[str, str]) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        op.drop_constraint(old[0], "progress", type_="unique")
        columns = [c.strip() for c in new[1].strip("()").split(",")]
        op.create_unique_constraint(new[0], "progress", columns)
        return
    table_sql = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'progress'"
    ).scalar_one()
    index_sql = [
        row[0]
        for row in bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'progress'"
            " AND sql IS NOT NULL"
        )
    ]
    old_clause = f"CONSTRAINT {old[0]} UNIQUE {old[1]}"
    if old_clause not in table_sql:
        raise RuntimeError(f"progress has no {old[0]} to change")
    new_sql = table_sql.replace(old_clause, f"CONSTRAINT {new[0]} UNIQUE {new[1]}")
    # Deferred, the conversions' references are checked at commit: the drop leaves them
    # without their rows, the refill gives each its row back.
    bind.exec_driver_sql("PRAGMA defer_foreign_keys = ON")
    bind.exec_driver_sql("CREATE TEMP TABLE progress_before_0025 AS SELECT * FROM progress")
    bind.exec_driver_sql("DROP TABLE progress")
    bind.exec_driver_sql(new_sql)
    bind.exec_driver_sql("INSERT INTO progress SELECT * FROM progress_before_0025")
    bind.exec_driver_sql("DROP TABLE progress_before_0025")
    for statement in index_sql:
        bind.exec_driver_sql(statement)
    bind.exec_driver_sql("PRAGMA defer_foreign_keys = OFF")
