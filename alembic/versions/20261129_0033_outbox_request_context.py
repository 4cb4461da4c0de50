"""outbox request context: a postback or webhook message keeps the request that made it

Revision ID: 0033
Revises: 0032
Create Date: 2026-11-29 18:00:00.000000

`postback` and `webhook_message` gain `request_id` (the `X-Request-ID` of the request
whose transaction made the message) and `traceparent` (its W3C trace context, when traces
are on), so each delivery attempt's log line and span point back at that request. Rows
made before have neither.
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("postback", "webhook_message")
_COLUMNS = ("request_id", "traceparent")


def upgrade() -> None:
    for table in _TABLES:
        for column in _COLUMNS:
            op.add_column(table, sa.Column(column, sa.String(length=64), nullable=True))


def downgrade() -> None:
    # Plain columns are dropped in place (a batch would rebuild the table, which SQLite
    # cannot do to a table other rows refer to).
    for table in _TABLES:
        for column in _COLUMNS:
            op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
