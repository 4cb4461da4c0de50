"""signed refusals: signed requests refused as a whole, for the live event debugger

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26 15:30:00.000000

A new table only: nothing existing is rewritten, and the downgrade drops it (SQLite too).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AutoString = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "signed_refusal",
        sa.Column("client_id", _AutoString(length=64), nullable=False),
        sa.Column("slot", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("game_id", _AutoString(length=36), nullable=False),
        sa.Column("status", sa.Integer(), nullable=False),
        sa.Column("code", _AutoString(length=40), nullable=False),
        sa.Column("reason", _AutoString(length=255), nullable=False),
        sa.Column("timestamp", _AutoString(length=32), nullable=False),
        sa.Column("signature", _AutoString(length=64), nullable=False),
        sa.Column("skew_ms", sa.BigInteger(), nullable=True),
        sa.Column("body_size", sa.BigInteger(), nullable=False),
        sa.Column("body_limit", sa.Integer(), nullable=False),
        sa.Column("body_head", sa.LargeBinary(), nullable=False),
        sa.Column("body_sha256", _AutoString(length=64), nullable=False),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["game.id"],
            name=op.f("fk_signed_refusal_game_id_game"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("client_id", "slot", name=op.f("pk_signed_refusal")),
    )
    op.create_index("ix_signed_refusal_game_created", "signed_refusal", ["game_id", "created_at"])
    op.create_index("ix_signed_refusal_created", "signed_refusal", ["created_at"])


def downgrade() -> None:
    op.drop_table("signed_refusal")
