"""cap places: the counters a conversion took

Revision ID: 0031
Revises: 0030
Create Date: 2026-11-28 18:00:00.000000

Conversions gain `cap_places`, the period and per-offerwall counters they took, so a
conversion taken back gives back exactly those. Existing conversions have none recorded:
taken back, they give back their place under the mission's `cap` only, as before.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("conversion", sa.Column("cap_places", _json(), nullable=True))


def downgrade() -> None:
    # A plain column is dropped in place (a batch would rebuild the table, which SQLite
    # cannot do to a table other rows refer to).
    op.execute("ALTER TABLE conversion DROP COLUMN cap_places")
