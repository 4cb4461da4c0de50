"""economics: revenue, payouts per country and budgets; payout rules, promotions, spend

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-28 16:40:00.000000

Missions gain `revenue_micros`, `payouts` and `budget`; games `budget`; conversions the
economics of their moment (revenue, country, the payout rule, the promotion and its
multiplier, the budgets drawn on). Three new tables. Existing conversions read as they did: no revenue, the
default rule, no promotion.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime()


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.add_column("mission", sa.Column("revenue_micros", sa.BigInteger(), nullable=True))
    op.add_column("mission", sa.Column("payouts", _json(), nullable=True))
    op.add_column("mission", sa.Column("budget", _json(), nullable=True))
    op.add_column("game", sa.Column("budget", _json(), nullable=True))
    op.add_column("conversion", sa.Column("revenue_micros", sa.BigInteger(), nullable=True))
    op.add_column("conversion", sa.Column("country", sa.String(length=2), nullable=True))
    op.add_column(
        "conversion",
        sa.Column("payout_rule", sa.String(length=16), nullable=False, server_default="default"),
    )
    op.add_column("conversion", sa.Column("promotion", sa.String(length=80), nullable=True))
    op.add_column(
        "conversion",
        sa.Column("multiplier", sa.Integer(), nullable=False, server_default=sa.text("100")),
    )
    op.add_column("conversion", sa.Column("budget_charges", _json(), nullable=True))
    op.create_table(
        "payout_rule",
        sa.Column("offerwall_id", sa.String(length=36), nullable=False),
        sa.Column("mission_id", sa.String(length=36), nullable=False),
        sa.Column("payout_micros", sa.BigInteger(), nullable=True),
        sa.Column("share_percent", sa.Float(), nullable=True),
        sa.Column("created_by", sa.String(length=320), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.ForeignKeyConstraint(["offerwall_id"], ["offerwall.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("offerwall_id", "mission_id"),
    )
    op.create_table(
        "promotion",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("offerwall_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("multiplier", sa.Integer(), nullable=False),
        sa.Column("starts_at", _UTC, nullable=False),
        sa.Column("ends_at", _UTC, nullable=False),
        sa.Column("weekly", sa.Boolean(), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        sa.Column("countries", _json(), nullable=False),
        sa.Column("exclude_countries", sa.Boolean(), nullable=False),
        sa.Column("first_conversion_only", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=320), nullable=False),
        sa.Column("created_at", _UTC, nullable=False),
        sa.Column("ended_at", _UTC, nullable=True),
        sa.ForeignKeyConstraint(["offerwall_id"], ["offerwall.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_promotion_offerwall", "promotion", ["offerwall_id", "ends_at"])
    op.create_table(
        "budget_spend",
        sa.Column("scope", sa.String(length=44), nullable=False),
        sa.Column("period", sa.String(length=16), nullable=False),
        sa.Column("spent_micros", sa.BigInteger(), nullable=False),
        sa.Column("warned", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("scope", "period"),
    )


def downgrade() -> None:
    op.drop_table("budget_spend")
    op.drop_index("ix_promotion_offerwall", table_name="promotion")
    op.drop_table("promotion")
    op.drop_table("payout_rule")
    # Both databases drop a plain column in place (a batch would rebuild the table, which
    # SQLite cannot do to a table other rows refer to).
    for table, column in (
        ("conversion", "budget_charges"),
        ("conversion", "multiplier"),
        ("conversion", "promotion"),
        ("conversion", "payout_rule"),
        ("conversion", "country"),
        ("conversion", "revenue_micros"),
        ("game", "budget"),
        ("mission", "budget"),
        ("mission", "payouts"),
        ("mission", "revenue_micros"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
