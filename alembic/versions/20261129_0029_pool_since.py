"""pool_since: when a mission joined its pool's draw

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29 09:00:00.000000

A pool's picks of a period are drawn from the missions it had when the period started, so
a mission added, started or opened again in the middle of a period waits for the next one
(docs/missions.md#rotating-pools). Existing missions have none: they were in their pool's
draw already.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("mission", sa.Column("pool_since", sa.DateTime(), nullable=True))


def downgrade() -> None:
    # A plain column, dropped in place on both databases (as in 0027).
    op.execute("ALTER TABLE mission DROP COLUMN pool_since")
