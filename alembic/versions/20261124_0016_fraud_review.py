"""fraud review: risk signals on clicks and conversions, the review's columns, missions'
anti-cheat limits, offerwalls' fraud rules, events set aside, staff's blocklist

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-24 23:30:00.000000

Columns are added (nullable, or with a server default that fills existing rows), so
nothing existing is rewritten: every existing conversion keeps its status, and every
offerwall the default rules.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AutoString = sqlmodel.sql.sqltypes.AutoString
_BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    # Plain ALTER TABLE … ADD COLUMN: on SQLite a rebuilt table could not be dropped while
    # other tables refer to it.
    added = {
        "mission": (
            sa.Column("min_completion_seconds", sa.Integer(), nullable=True),
            sa.Column("max_event_value", sa.Float(), nullable=True),
            sa.Column("max_trait_field", _AutoString(length=64), nullable=True),
            sa.Column("max_trait_value", sa.Float(), nullable=True),
            sa.Column("max_events_per_minute", sa.Integer(), nullable=True),
        ),
        "progress": (
            sa.Column("rate_minute", sa.BigInteger(), nullable=False, server_default=sa.text("0")),
            sa.Column("rate_count", sa.Integer(), nullable=False, server_default=sa.text("0")),
        ),
        "click": (sa.Column("signals", models.types.JSONDoc, nullable=True),),
        "conversion": (
            sa.Column("signals", models.types.JSONDoc, nullable=True),
            sa.Column("review_due_at", models.types.UTCDateTime(), nullable=True),
            sa.Column("reviewed_at", models.types.UTCDateTime(), nullable=True),
            sa.Column("reviewed_by", _AutoString(length=320), nullable=True),
            sa.Column("review_note", sa.Text(), nullable=True),
        ),
        "offerwall": (
            sa.Column("fraud_actions", models.types.JSONDoc, nullable=True),
            sa.Column("review_postbacks", sa.Boolean(), nullable=False, server_default=sa.false()),
        ),
    }
    for table, columns in added.items():
        for column in columns:
            op.add_column(table, column)
    op.create_index("ix_click_ip_created", "click", ["ip", "created_at"])
    op.create_index("ix_conversion_status_due", "conversion", ["status", "review_due_at"])
    op.create_table(
        "cheat_flag",
        sa.Column("id", _BigId, nullable=False),
        sa.Column("game_id", _AutoString(length=36), nullable=False),
        sa.Column("mission_id", _AutoString(length=36), nullable=False),
        sa.Column("platform_user_id", _AutoString(length=36), nullable=False),
        sa.Column("user_id", _AutoString(length=128), nullable=False),
        sa.Column("event", _AutoString(length=64), nullable=False),
        sa.Column("event_time", models.types.UTCDateTime(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("rule", _AutoString(length=16), nullable=False),
        sa.Column("detail", _AutoString(length=300), nullable=False),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cheat_flag")),
    )
    op.create_index("ix_cheat_flag_game_created", "cheat_flag", ["game_id", "created_at"])
    op.create_table(
        "blocked_entry",
        sa.Column("id", _BigId, nullable=False),
        sa.Column("kind", _AutoString(length=8), nullable=False),
        sa.Column("value", _AutoString(length=255), nullable=False),
        sa.Column("note", _AutoString(length=300), nullable=False),
        sa.Column("created_by", _AutoString(length=320), nullable=False),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blocked_entry")),
        sa.UniqueConstraint("kind", "value", name="uq_blocked_entry_kind_value"),
    )


def downgrade() -> None:
    op.drop_table("blocked_entry")
    op.drop_table("cheat_flag")
    # The earlier code knows no held or rejection postbacks.
    op.execute(
        "DELETE FROM postback_attempt WHERE postback_id IN "
        "(SELECT id FROM postback WHERE kind IN ('held', 'rejection'))"
    )
    op.execute("DELETE FROM postback WHERE kind IN ('held', 'rejection')")
    op.drop_index("ix_conversion_status_due", table_name="conversion")
    op.drop_index("ix_click_ip_created", table_name="click")
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a rebuilt table could not be dropped
    # while other tables refer to it.
    dropped = {
        "offerwall": ("review_postbacks", "fraud_actions"),
        "conversion": ("review_note", "reviewed_by", "reviewed_at", "review_due_at", "signals"),
        "click": ("signals",),
        "progress": ("rate_count", "rate_minute"),
        "mission": (
            "max_events_per_minute",
            "max_trait_value",
            "max_trait_field",
            "max_event_value",
            "min_completion_seconds",
        ),
    }
    for table, columns in dropped.items():
        for column in columns:
            op.drop_column(table, column)
