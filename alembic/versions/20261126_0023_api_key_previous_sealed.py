"""api key previous sealed: the replaced API key itself, sealed, beside its digest

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-26 15:30:00.000000

One nullable column. The digest alone could not be recomputed when the master key
changes, and a hosted wall link's `sig` needs the key itself to be checked. A key
replaced before this migration keeps its digest (and its grace) but no sealed copy.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("offerwall", sa.Column("api_key_previous_sealed", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("offerwall", "api_key_previous_sealed")
