"""the conversion lifecycle: conversion status and reversal, a postback's kind, the
offerwall's reversal URL, API key grace, postback signing secrets and endpoint health

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 13:00:00.000000
"""

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic.operations import BatchOperations

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UTC = sa.DateTime()


def _rebuild_postback(change: Callable[[BatchOperations], None]) -> None:
    """Change the postback table's unique constraint. SQLite rebuilds the table, which it
    cannot drop while attempts refer to it (foreign keys are on, and cannot be turned off
    inside the migration's transaction): the attempts wait in a temporary table."""
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        op.execute("CREATE TEMPORARY TABLE saved_attempt AS SELECT * FROM postback_attempt")
        op.execute("DELETE FROM postback_attempt")
    with op.batch_alter_table("postback", schema=None) as batch_op:
        change(batch_op)
    if sqlite:
        op.execute("INSERT INTO postback_attempt SELECT * FROM saved_attempt")
        op.execute("DROP TABLE saved_attempt")


def upgrade() -> None:
    # The server defaults fill existing rows, and stay: dropping one rebuilds a table
    # on SQLite.
    with op.batch_alter_table("conversion", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("status", sa.String(length=16), nullable=False, server_default="approved")
        )
        batch_op.add_column(sa.Column("reversed_at", _UTC, nullable=True))
        batch_op.add_column(sa.Column("reversal_reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("reversed_by", sa.String(length=320), nullable=True))

    def add_kind(batch_op: BatchOperations) -> None:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="conversion")
        )
        batch_op.drop_constraint("uq_postback_conversion_id", type_="unique")
        batch_op.create_unique_constraint("uq_postback_conversion_kind", ["conversion_id", "kind"])

    _rebuild_postback(add_kind)

    with op.batch_alter_table("offerwall", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reversal_url", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("api_key_previous_digest", sa.String(64), nullable=True))
        batch_op.add_column(sa.Column("api_key_previous_until", _UTC, nullable=True))
        batch_op.add_column(sa.Column("signing_secret_sealed", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("signing_secret_shown_at", _UTC, nullable=True))
        batch_op.add_column(sa.Column("signing_secret_previous_sealed", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("signing_secret_previous_until", _UTC, nullable=True))
        batch_op.add_column(
            sa.Column("consecutive_failures", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("failing_since", _UTC, nullable=True))
        batch_op.add_column(sa.Column("deliveries_paused_at", _UTC, nullable=True))
    op.create_index(
        "ix_offerwall_api_key_previous_digest", "offerwall", ["api_key_previous_digest"]
    )


def downgrade() -> None:
    op.drop_index("ix_offerwall_api_key_previous_digest", table_name="offerwall")
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a rebuilt offerwall table could not
    # be dropped while other tables refer to it.
    for column in (
        "deliveries_paused_at",
        "failing_since",
        "consecutive_failures",
        "signing_secret_previous_until",
        "signing_secret_previous_sealed",
        "signing_secret_shown_at",
        "signing_secret_sealed",
        "api_key_previous_until",
        "api_key_previous_digest",
        "reversal_url",
    ):
        op.drop_column("offerwall", column)
    op.execute(
        "DELETE FROM postback_attempt WHERE postback_id IN "
        "(SELECT id FROM postback WHERE kind = 'reversal')"
    )
    op.execute("DELETE FROM postback WHERE kind = 'reversal'")

    def drop_kind(batch_op: BatchOperations) -> None:
        batch_op.drop_constraint("uq_postback_conversion_kind", type_="unique")
        batch_op.create_unique_constraint("uq_postback_conversion_id", ["conversion_id"])
        batch_op.drop_column("kind")

    _rebuild_postback(drop_kind)
    for column in ("reversed_by", "reversal_reason", "reversed_at", "status"):
        op.drop_column("conversion", column)
