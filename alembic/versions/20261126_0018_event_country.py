"""event country: the country of the player's address a game may send with an event,
for the country_mismatch signal

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 07:00:00.000000

One nullable column; existing events have no country, and the signal needs one.
On PostgreSQL the column added to the partitioned table reaches every partition.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("event", sa.Column("country", sqlmodel.AutoString(length=2), nullable=True))


def downgrade() -> None:
    op.drop_column("event", "country")
