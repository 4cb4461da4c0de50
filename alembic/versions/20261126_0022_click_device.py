"""click device: a digest of the device a click came from, for the shared_ip signal

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-26 15:30:00.000000

One nullable column and the index the shared_ip signal counts along (the players who
clicked from one address with one device in the lookback window). Existing clicks have
no device; a conversion of such a click gets no shared_ip signal.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("click", sa.Column("device", sqlmodel.AutoString(length=32), nullable=True))
    op.create_index("ix_click_ip_device_created", "click", ["ip", "device", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_click_ip_device_created", table_name="click")
    op.drop_column("click", "device")
