"""waiting completions: a completion a full cap refused waits for a place given back

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-28 18:30:00.000000

Progress rows gain what a completion a full cap refused waits on (`waiting_on`, since
`waiting_since`, with `waiting_event`, what its event said), with a partial index over
the few that wait. Completions refused before have nothing recorded and wait for nothing:
they stay as they were (capped, or started until the period turns).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_WAITING = sa.text("waiting_on IS NOT NULL")


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("progress", sa.Column("waiting_on", sa.String(length=64), nullable=True))
    op.add_column("progress", sa.Column("waiting_since", sa.DateTime(), nullable=True))
    op.add_column("progress", sa.Column("waiting_event", _json(), nullable=True))
    op.create_index(
        "ix_progress_waiting",
        "progress",
        ["mission_id", "waiting_on", "waiting_since"],
        postgresql_where=_WAITING,
        sqlite_where=_WAITING,
    )


def downgrade() -> None:
    op.drop_index("ix_progress_waiting", table_name="progress")
    # Plain columns are dropped in place (a batch would rebuild the table, which SQLite
    # cannot do to a table other rows refer to).
    for column in ("waiting_event", "waiting_since", "waiting_on"):
        op.execute(f"ALTER TABLE progress DROP COLUMN {column}")
