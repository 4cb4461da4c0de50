"""mail outbox, password reset links, and accounts staff disabled

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 09:50:10.187805

New tables only, and a nullable column: nothing existing is rewritten.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "mail_message",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("to_address", sqlmodel.sql.sqltypes.AutoString(length=254), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("sensitive", sa.Boolean(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("next_attempt_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("lease_until", models.types.UTCDateTime(), nullable=True),
        sa.Column("expires_at", models.types.UTCDateTime(), nullable=True),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("sent_at", models.types.UTCDateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_message")),
    )
    with op.batch_alter_table("mail_message", schema=None) as batch_op:
        batch_op.create_index("ix_mail_message_due", ["status", "next_attempt_at"], unique=False)

    op.create_table(
        "password_reset",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("token_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("expires_at", models.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["portal_user.id"],
            name=op.f("fk_password_reset_user_id_portal_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_reset")),
        sa.UniqueConstraint("token_digest", name=op.f("uq_password_reset_token_digest")),
    )
    with op.batch_alter_table("password_reset", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_reset_user_id"), ["user_id"], unique=False)

    with op.batch_alter_table("portal_user", schema=None) as batch_op:
        batch_op.add_column(sa.Column("disabled_at", models.types.UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("portal_user", schema=None) as batch_op:
        batch_op.drop_column("disabled_at")

    with op.batch_alter_table("password_reset", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_reset_user_id"))

    op.drop_table("password_reset")
    with op.batch_alter_table("mail_message", schema=None) as batch_op:
        batch_op.drop_index("ix_mail_message_due")

    op.drop_table("mail_message")
