"""richer rules: a mission's rule beyond one event, and the state progress keeps for it

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-27 05:00:00.000000

Two nullable JSON columns. `mission.rule_extra` holds the parts of a rule beyond its
first event, conditions and completion (anyOf, steps, within, per, window, timeZone);
`progress.state` what the richer completion kinds keep per player. Existing rows keep
their meaning with both empty.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("mission", sa.Column("rule_extra", _json(), nullable=True))
    op.add_column("progress", sa.Column("state", _json(), nullable=True))


def downgrade() -> None:
    op.drop_column("progress", "state")
    op.drop_column("mission", "rule_extra")
