"""two-factor sign-in: an account's authenticator app and its recovery codes

Revision ID: 0037
Revises: 0036
Create Date: 2026-11-29 23:00:00.000000

`account_totp` holds an account's sealed TOTP secret (RFC 6238) once a first code
confirmed it, and the time step of the last code accepted (a code is accepted once).
`account_recovery_code` holds its ten recovery codes, Argon2-hashed, each used once.
Both go with the account (ON DELETE CASCADE).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel

import models.types
from alembic import op

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_totp",
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("secret_sealed", sa.Text(), nullable=False),
        sa.Column("enrolled_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("last_step", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["portal_user.id"],
            name=op.f("fk_account_totp_user_id_portal_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_account_totp")),
    )
    op.create_table(
        "account_recovery_code",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=36), nullable=False),
        sa.Column("code_hash", sa.Text(), nullable=False),
        sa.Column("created_at", models.types.UTCDateTime(), nullable=False),
        sa.Column("used_at", models.types.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["portal_user.id"],
            name=op.f("fk_account_recovery_code_user_id_portal_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_account_recovery_code")),
    )
    with op.batch_alter_table("account_recovery_code") as batch:
        batch.create_index(batch.f("ix_account_recovery_code_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("account_recovery_code") as batch:
        batch.drop_index(batch.f("ix_account_recovery_code_user_id"))
    op.drop_table("account_recovery_code")
    op.drop_table("account_totp")
