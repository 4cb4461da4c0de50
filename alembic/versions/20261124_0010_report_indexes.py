"""clicks and conversions by time alone: reports and the staff dashboard over every offerwall

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 08:00:00.000000

The existing indexes start with the offerwall, which serves a publisher's reports; staff's
and designers' reports, and the staff dashboard's figures of the day, read a range of
`created_at` across every offerwall.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_click_created", "click", ["created_at"])
    op.create_index("ix_conversion_created", "conversion", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_conversion_created", table_name="conversion")
    op.drop_index("ix_click_created", table_name="click")
