"""refused clicks: every click a tracking link refused, with the reason

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24 20:30:00.000000

A new table only: nothing existing is rewritten, and the downgrade drops it (SQLite too).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types  # noqa: F401  (custom column types used below)
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AutoString = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "refused_click",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("reason", _AutoString(length=32), nullable=False),
        sa.Column("kind", _AutoString(length=8), nullable=False),
        sa.Column("offer_id", _AutoString(length=255), nullable=False),
        sa.Column("owid", _AutoString(length=255), nullable=True),
        sa.Column("offerwall_id", _AutoString(length=36), nullable=True),
        sa.Column("uid", _AutoString(length=255), nullable=True),
        sa.Column("clickid", _AutoString(length=255), nullable=True),
        sa.Column("sub1", _AutoString(length=255), nullable=True),
        sa.Column("sub2", _AutoString(length=255), nullable=True),
        sa.Column("sub3", _AutoString(length=255), nullable=True),
        sa.Column("ip", _AutoString(length=64), nullable=False),
        sa.Column("user_agent", _AutoString(length=1024), nullable=False),
        sa.Column("country", _AutoString(length=2), nullable=True),
        sa.Column("os", _AutoString(length=32), nullable=True),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_refused_click")),
    )
    op.create_index("ix_refused_click_created", "refused_click", ["created_at"])
    op.create_index(
        "ix_refused_click_offerwall_created", "refused_click", ["offerwall_id", "created_at"]
    )
    op.create_index("ix_refused_click_ip_created", "refused_click", ["ip", "created_at"])


def downgrade() -> None:
    op.drop_table("refused_click")
