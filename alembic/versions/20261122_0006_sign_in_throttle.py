"""sign-in throttle: one counter row per address, and the origins that signed in

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22 03:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sign_in_throttle",
        sa.Column("email_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_start", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("email_digest", name=op.f("pk_sign_in_throttle")),
    )
    op.create_table(
        "sign_in_origin",
        sa.Column("email_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("origin_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("last_success_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("email_digest", "origin_digest", name=op.f("pk_sign_in_origin")),
    )
    # The per-failure log it replaces could not be claimed atomically; its rows are
    # at most 15 minutes of history, so they are dropped rather than carried over.
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_failure_email_digest"))
    op.drop_table("login_failure")


def downgrade() -> None:
    op.create_table(
        "login_failure",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("email_digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failure")),
    )
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_login_failure_email_digest"), ["email_digest"], unique=False
        )
    op.drop_table("sign_in_origin")
    op.drop_table("sign_in_throttle")
