"""test player: the test flag of clicks and conversions, and whether an offerwall's test
conversions send postbacks

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26 15:30:00.000000

Three boolean columns, false for every existing row: nothing recorded so far was a test.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (("click", "test"), ("conversion", "test"), ("offerwall", "test_postbacks"))


def upgrade() -> None:
    for table, column in COLUMNS:
        op.add_column(
            table, sa.Column(column, sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a rebuilt table could not be dropped
    # while other tables refer to it.
    for table, column in reversed(COLUMNS):
        op.drop_column(table, column)
