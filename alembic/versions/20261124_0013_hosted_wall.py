"""the hosted wall: each offerwall's theme, the origins that may frame it, and whether
its links must be signed

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-24 16:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    # Plain ALTER TABLE … ADD COLUMN: a rebuilt offerwall table (SQLite's batch mode) could
    # not be dropped while other tables refer to it. The server defaults fill existing rows.
    columns = (
        sa.Column("wall_title", sa.String(length=80), nullable=False, server_default=""),
        sa.Column("wall_logo_url", sa.String(length=2048), nullable=False, server_default=""),
        sa.Column("wall_accent", sa.String(length=7), nullable=False, server_default="#4f46e5"),
        sa.Column("wall_currency_icon", sa.String(length=2048), nullable=False, server_default=""),
        sa.Column("wall_origins", _JSON, nullable=False, server_default=sa.text("'[]'")),
        sa.Column(
            "wall_require_signature", sa.Boolean(), nullable=False, server_default=sa.false()
        ),
    )
    for column in columns:
        op.add_column("offerwall", column)


def downgrade() -> None:
    # Plain ALTER TABLE … DROP COLUMN (SQLite 3.35+): a rebuilt offerwall table could not
    # be dropped while other tables refer to it.
    for column in (
        "wall_require_signature",
        "wall_origins",
        "wall_currency_icon",
        "wall_accent",
        "wall_logo_url",
        "wall_title",
    ):
        op.drop_column("offerwall", column)
