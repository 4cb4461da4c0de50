"""worker heartbeats and prune runs: what the staff's System page reads of the processes

Revision ID: 0034
Revises: 0033
Create Date: 2026-11-29 20:00:00.000000

`worker_heartbeat`: one row per process that runs the dispatchers (`questwall serve`'s
backend processes, `questwall worker`), keyed "host:pid", its heartbeat's last time.
`prune_run`: one row per `questwall prune` that ran to its end, with how many rows it
removed.
"""

from collections.abc import Sequence

import sqlalchemy as sa

import models.types
from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "worker_heartbeat",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("delivers", sa.String(length=100), nullable=False),
        sa.Column("started_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("last_beat_at", models.types.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_worker_heartbeat")),
    )
    op.create_table(
        "prune_run",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("started_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("finished_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("records", sa.BigInteger(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.Column("refused", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prune_run")),
    )
    op.create_index(op.f("ix_prune_run_finished_at"), "prune_run", ["finished_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_prune_run_finished_at"), table_name="prune_run")
    op.drop_table("prune_run")
    op.drop_table("worker_heartbeat")
