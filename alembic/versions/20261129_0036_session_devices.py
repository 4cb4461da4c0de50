"""session devices: where each portal session signed in from, and its password's last entry

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-29 21:00:00.000000

`portal_session` gains the IP address, User-Agent and country it signed in from (what the
account's Sessions page shows), and `password_confirmed_at`: when the password was last
entered in that session (at sign-in, and each time a sensitive action asks for it again),
which opens the re-authentication window.
"""

from collections.abc import Sequence

import sqlalchemy as sa

import models.types
from alembic import op

revision: str = "0036"
down_revision: str | None = "0035"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("portal_session") as batch:
        batch.add_column(sa.Column("ip", sa.String(length=45), nullable=True))
        batch.add_column(sa.Column("user_agent", sa.String(length=512), nullable=True))
        batch.add_column(sa.Column("country", sa.String(length=2), nullable=True))
        batch.add_column(
            sa.Column("password_confirmed_at", models.types.UTCDateTime(), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("portal_session") as batch:
        batch.drop_column("password_confirmed_at")
        batch.drop_column("country")
        batch.drop_column("user_agent")
        batch.drop_column("ip")
