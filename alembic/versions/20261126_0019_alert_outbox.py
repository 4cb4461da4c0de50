"""alert outbox: ALERT_WEBHOOK_URL's notices are stored with the action and retried

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 15:40:00.000000

One new table, like mail_message: a notice is queued in the transaction that paused or
resumed an offerwall, then posted (and retried) by the senders of `serve` and `worker`.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "alert_message",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("event", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("lease_until", models.types.UTCDateTime(), nullable=True),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("sent_at", models.types.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_message")),
    )
    with op.batch_alter_table("alert_message", schema=None) as batch_op:
        batch_op.create_index("ix_alert_message_due", ["status", "next_attempt_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alert_message", schema=None) as batch_op:
        batch_op.drop_index("ix_alert_message_due")
    op.drop_table("alert_message")
