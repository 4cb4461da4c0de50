"""support tickets: a player's "Missing reward?" report about an offer, and its answer

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24 18:00:00.000000

A new table only: nothing existing is rewritten, and the downgrade drops it (SQLite too).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from sqlalchemy.dialects import postgresql

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_AutoString = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "support_ticket",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("reference", _AutoString(length=16), nullable=False),
        sa.Column("offerwall_id", _AutoString(length=36), nullable=False),
        sa.Column("platform_user_id", _AutoString(length=36), nullable=False),
        sa.Column("uid", _AutoString(length=255), nullable=False),
        sa.Column("mission_id", _AutoString(length=36), nullable=True),
        sa.Column("quest_id", _AutoString(length=36), nullable=True),
        sa.Column("offer_title", _AutoString(length=200), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("context", _JSON, nullable=False),
        sa.Column("status", _AutoString(length=16), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answered_by", _AutoString(length=320), nullable=True),
        sa.Column("answered_at", models.types.UTCDateTime(), nullable=True),
        sa.Column("closed_at", models.types.UTCDateTime(), nullable=True),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("updated_at", models.types.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["offerwall_id"],
            ["offerwall.id"],
            name=op.f("fk_support_ticket_offerwall_id_offerwall"),
        ),
        sa.ForeignKeyConstraint(
            ["platform_user_id"],
            ["platform_user.id"],
            name=op.f("fk_support_ticket_platform_user_id_platform_user"),
        ),
        sa.ForeignKeyConstraint(
            ["mission_id"],
            ["mission.id"],
            name=op.f("fk_support_ticket_mission_id_mission"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["quest_id"],
            ["quest.id"],
            name=op.f("fk_support_ticket_quest_id_quest"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_support_ticket")),
        sa.UniqueConstraint("reference", name=op.f("uq_support_ticket_reference")),
    )
    op.create_index(
        "ix_support_ticket_offerwall_status",
        "support_ticket",
        ["offerwall_id", "status", "created_at"],
    )
    op.create_index(
        "ix_support_ticket_player", "support_ticket", ["platform_user_id", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_support_ticket_player", table_name="support_ticket")
    op.drop_index("ix_support_ticket_offerwall_status", table_name="support_ticket")
    op.drop_table("support_ticket")
