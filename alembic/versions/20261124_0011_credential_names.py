"""game credentials get a name ("prod-key"); existing ones become "Key 1", "Key 2", …

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_credential = sa.table(
    "game_credential",
    sa.column("id", sa.String),
    sa.column("game_id", sa.String),
    sa.column("created_at", sa.DateTime),
    sa.column("name", sa.String),
)


def upgrade() -> None:
    with op.batch_alter_table("game_credential", schema=None) as batch_op:
        batch_op.add_column(sa.Column("name", sa.String(length=60), nullable=True))
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(_credential.c.id, _credential.c.game_id).order_by(
            _credential.c.game_id, _credential.c.created_at, _credential.c.id
        )
    ).all()
    numbers: dict[str, int] = {}
    for credential_id, game_id in rows:
        numbers[game_id] = numbers.get(game_id, 0) + 1
        conn.execute(
            _credential.update()
            .where(_credential.c.id == credential_id)
            .values(name=f"Key {numbers[game_id]}")
        )
    with op.batch_alter_table("game_credential", schema=None) as batch_op:
        batch_op.alter_column("name", existing_type=sa.String(length=60), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("game_credential", schema=None) as batch_op:
        batch_op.drop_column("name")
