"""alert attempts: every attempt to post an alert, with the webhook's answer

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29 09:00:00.000000

One new table beside alert_message, like postback_attempt and webhook_attempt: each
attempt's status code, the first KiB of the answer or the error, so that staff see why an
alert failed (the staff dashboard) before they send it again.
"""

from collections.abc import Sequence

import sqlalchemy as sa

import models.types
from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "alert_attempt",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("alert_id", sa.BigInteger(), nullable=False),
        sa.Column("started_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("body_excerpt", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("sent", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_id"],
            ["alert_message.id"],
            name=op.f("fk_alert_attempt_alert_id_alert_message"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_attempt")),
    )
    op.create_index(op.f("ix_alert_attempt_alert_id"), "alert_attempt", ["alert_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_alert_attempt_alert_id"), table_name="alert_attempt")
    op.drop_table("alert_attempt")
