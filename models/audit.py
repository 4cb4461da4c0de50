"""The audit trail: one append-only row per change that moves money or access, chained by
SHA-256 so a changed or removed row shows (api/audit/, docs/operations.md#audit-trail)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, JSONDoc, UTCDateTime

# The hash before the first row.
GENESIS = "0" * 64


class AuditEvent(SQLModel, table=True):
    """Who did what to which object, when, from where, and each field's value before and
    after. Never updated or deleted (the database refuses both; only the retention prune
    removes the oldest rows)."""

    __tablename__ = "audit_event"
    __table_args__ = (
        sa.Index("ix_audit_event_action", "action", "id"),
        sa.Index("ix_audit_event_actor", "actor_id", "id"),
        sa.Index("ix_audit_event_target", "target_type", "target_id", "id"),
        sa.Index("ix_audit_event_scope", "scope_type", "scope_id", "id"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    at: datetime = Field(sa_type=UTCDateTime, nullable=False, index=True)
    # "account" (with the account's id, email and role as they were), "cli" (the
    # operating-system user in `actor_email`) or "system" (the worker's own decisions).
    actor_kind: str = Field(max_length=16)
    actor_id: str | None = Field(default=None, max_length=36)
    actor_email: str | None = Field(default=None, max_length=320)
    actor_role: str | None = Field(default=None, max_length=16)
    actor_ip: str | None = Field(default=None, max_length=45)
    user_agent: str | None = Field(default=None, max_length=512)
    action: str = Field(max_length=64)  # "<entity>.<verb>": offerwall.approved
    target_type: str = Field(max_length=32)
    target_id: str = Field(max_length=100)
    target_name: str = Field(default="", max_length=200)  # as it was then
    # Whose scoped views show it: a studio's or an offerwall's.
    scope_type: str | None = Field(default=None, max_length=16)
    scope_id: str | None = Field(default=None, max_length=36)
    request_id: str | None = Field(default=None, max_length=64)
    # {field: [before, after]}; a secret is never a value.
    changes: dict[str, Any] = Field(default_factory=dict, sa_type=JSONDoc)
    previous_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class AuditChain(SQLModel, table=True):
    """One row: the chain's last link (what the next row chains to), and where it starts
    after the retention prune removed the oldest rows. `pruning` is the prune's permit to
    delete, seen by the table's triggers within its transaction."""

    __tablename__ = "audit_chain"

    id: int = Field(default=1, primary_key=True)
    last_hash: str = Field(default=GENESIS, max_length=64)
    start_id: int | None = Field(default=None, sa_type=sa.BigInteger)
    start_previous_hash: str = Field(default=GENESIS, max_length=64)
    pruning: bool = Field(default=False)
