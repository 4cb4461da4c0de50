"""missions' own actions for the risk signals

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 06:30:00.000000

One nullable column: every existing mission keeps its offerwall's rules.
"""

from collections.abc import Sequence

import sqlalchemy as sa

import models.types
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ALTER TABLE … ADD COLUMN: on SQLite a rebuilt table could not be dropped while
    # other tables refer to it.
    op.add_column("mission", sa.Column("fraud_actions", models.types.JSONDoc, nullable=True))


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+), as 0016 does.
    op.drop_column("mission", "fraud_actions")
