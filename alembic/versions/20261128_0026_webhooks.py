"""webhooks: a game's endpoints, the outbox of messages to them, and their attempts

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-28 14:05:00.000000

Three new tables; nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime()
_BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "webhook_endpoint",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("game_id", sa.String(length=36), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=300), nullable=False),
        sa.Column("event_types", _json(), nullable=True),
        sa.Column("secret_sealed", sa.Text(), nullable=False),
        sa.Column("previous_secret_sealed", sa.Text(), nullable=True),
        sa.Column("previous_until", _UTC, nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=True),
        sa.Column("failing_since", _UTC, nullable=True),
        sa.Column("created_at", _UTC, nullable=False),
        sa.Column("updated_at", _UTC, nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["game.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_endpoint_game_id", "webhook_endpoint", ["game_id"])
    op.create_table(
        "webhook_message",
        sa.Column("id", _BIGINT_PK, nullable=False),
        sa.Column("message_id", sa.String(length=40), nullable=False),
        sa.Column("endpoint_id", sa.String(length=36), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("player", sa.String(length=36), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("coalesce_key", sa.String(length=80), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _UTC, nullable=False),
        sa.Column("lease_until", _UTC, nullable=True),
        sa.Column("created_at", _UTC, nullable=False),
        sa.Column("delivered_at", _UTC, nullable=True),
        sa.Column("retry_from", _UTC, nullable=True),
        sa.ForeignKeyConstraint(["endpoint_id"], ["webhook_endpoint.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("message_id"),
    )
    op.create_index("ix_webhook_message_due", "webhook_message", ["status", "next_attempt_at"])
    op.create_index(
        "ix_webhook_message_endpoint_player", "webhook_message", ["endpoint_id", "player", "id"]
    )
    op.create_index(
        "ix_webhook_message_coalesce", "webhook_message", ["endpoint_id", "coalesce_key"]
    )
    op.create_index("ix_webhook_message_endpoint_id", "webhook_message", ["endpoint_id", "id"])
    op.create_index(
        "ix_webhook_message_endpoint_created", "webhook_message", ["endpoint_id", "created_at"]
    )
    op.create_table(
        "webhook_attempt",
        sa.Column("id", _BIGINT_PK, nullable=False),
        sa.Column("message_id", sa.BigInteger(), nullable=False),
        sa.Column("started_at", _UTC, nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("body_excerpt", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["message_id"], ["webhook_message.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_webhook_attempt_message_id", "webhook_attempt", ["message_id"])


def downgrade() -> None:
    op.drop_table("webhook_attempt")
    op.drop_table("webhook_message")
    op.drop_table("webhook_endpoint")
