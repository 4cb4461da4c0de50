"""audit trail: an append-only, hash-chained audit_event table and its chain's head

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-29 19:00:00.000000

`audit_event` keeps one row per change that moves money or access; triggers refuse
UPDATE and DELETE (and TRUNCATE on PostgreSQL), except the DELETE of the retention prune,
which sets `audit_chain.pruning` in its own transaction. `audit_chain` holds the last
link of the SHA-256 chain and where the chain starts.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GENESIS = "0" * 64


def _json() -> sa.types.TypeEngine:
    return sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "audit_event",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor_kind", sa.String(length=16), nullable=False),
        sa.Column("actor_id", sa.String(length=36), nullable=True),
        sa.Column("actor_email", sa.String(length=320), nullable=True),
        sa.Column("actor_role", sa.String(length=16), nullable=True),
        sa.Column("actor_ip", sa.String(length=45), nullable=True),
        sa.Column("user_agent", sa.String(length=512), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target_type", sa.String(length=32), nullable=False),
        sa.Column("target_id", sa.String(length=100), nullable=False),
        sa.Column("target_name", sa.String(length=200), nullable=False),
        sa.Column("scope_type", sa.String(length=16), nullable=True),
        sa.Column("scope_id", sa.String(length=36), nullable=True),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("changes", _json(), nullable=False),
        sa.Column("previous_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
    )
    op.create_index("ix_audit_event_at", "audit_event", ["at"])
    op.create_index("ix_audit_event_action", "audit_event", ["action", "id"])
    op.create_index("ix_audit_event_actor", "audit_event", ["actor_id", "id"])
    op.create_index("ix_audit_event_target", "audit_event", ["target_type", "target_id", "id"])
    op.create_index("ix_audit_event_scope", "audit_event", ["scope_type", "scope_id", "id"])
    op.create_table(
        "audit_chain",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("last_hash", sa.String(length=64), nullable=False),
        sa.Column("start_id", sa.BigInteger(), nullable=True),
        sa.Column("start_previous_hash", sa.String(length=64), nullable=False),
        sa.Column("pruning", sa.Boolean(), nullable=False),
    )
    op.execute(
        sa.text(
            "INSERT INTO audit_chain (id, last_hash, start_previous_hash, pruning) "
            "VALUES (1, :genesis, :genesis, false)"
        ).bindparams(genesis=GENESIS)
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            """
            CREATE FUNCTION audit_event_append_only() RETURNS trigger AS $$
            BEGIN
                IF TG_OP = 'DELETE' AND (SELECT pruning FROM audit_chain WHERE id = 1) THEN
                    RETURN OLD;
                END IF;
                RAISE EXCEPTION 'audit_event is append-only: its rows are never changed or deleted';
            END
            $$ LANGUAGE plpgsql
            """
        )
        op.execute(
            "CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON audit_event "
            "FOR EACH ROW EXECUTE FUNCTION audit_event_append_only()"
        )
        op.execute(
            "CREATE TRIGGER audit_event_no_truncate BEFORE TRUNCATE ON audit_event "
            "FOR EACH STATEMENT EXECUTE FUNCTION audit_event_append_only()"
        )
    else:
        op.execute(
            "CREATE TRIGGER audit_event_no_update BEFORE UPDATE ON audit_event "
            "BEGIN SELECT RAISE(ABORT, 'audit_event is append-only: its rows are never changed "
            "or deleted'); END"
        )
        op.execute(
            "CREATE TRIGGER audit_event_no_delete BEFORE DELETE ON audit_event "
            "WHEN (SELECT pruning FROM audit_chain WHERE id = 1) IS NOT 1 "
            "BEGIN SELECT RAISE(ABORT, 'audit_event is append-only: its rows are never changed "
            "or deleted'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER audit_event_no_truncate ON audit_event")
        op.execute("DROP TRIGGER audit_event_append_only ON audit_event")
        op.execute("DROP FUNCTION audit_event_append_only()")
    else:
        op.execute("DROP TRIGGER audit_event_no_delete")
        op.execute("DROP TRIGGER audit_event_no_update")
    op.drop_table("audit_chain")
    op.drop_table("audit_event")
