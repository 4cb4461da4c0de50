"""postback attempts: an explicit `sent` flag instead of reading it from the latency

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22 05:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What attempts that never sent a request recorded as their error until now: the target
# refusals (api.postbacks.transport.target_problem, api.core.egress) and a postback
# without a URL. Each of them was recorded with no status and 0 ms.
_NOT_SENT_ERRORS = (
    "only http and https URLs are sent",
    "unix sockets are not a postback target",
    "the offerwall has no postback URL",
    "the postback's conversion is missing",
)
_NOT_SENT_SUFFIXES = ("not a public address", "resolves to an unreadable address")

_attempt = sa.table(
    "postback_attempt",
    sa.column("status_code", sa.Integer),
    sa.column("duration_ms", sa.Integer),
    sa.column("error", sa.Text),
    sa.column("sent", sa.Boolean),
)


def _was_sent() -> sa.ColumnElement[bool]:
    """Existing rows: sent when the target answered, the attempt took time, or it failed
    with an error other than a refusal (a fast connection error still reached the host)."""
    error = _attempt.c.error
    refused = sa.or_(
        error.is_(None),
        error.in_(_NOT_SENT_ERRORS),
        *(error.like(f"%{suffix}") for suffix in _NOT_SENT_SUFFIXES),
    )
    return sa.or_(
        _attempt.c.status_code.is_not(None),
        _attempt.c.duration_ms > 0,
        sa.not_(refused),
    )


def upgrade() -> None:
    with op.batch_alter_table("postback_attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sent", sa.Boolean(), nullable=True))
    op.execute(_attempt.update().values(sent=_was_sent()))
    with op.batch_alter_table("postback_attempt", schema=None) as batch_op:
        batch_op.alter_column("sent", existing_type=sa.Boolean(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("postback_attempt", schema=None) as batch_op:
        batch_op.drop_column("sent")
