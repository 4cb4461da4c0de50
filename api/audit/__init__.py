"""The audit trail: who changed what that moves money or access, when, from where, each
value before and after; append-only and hash-chained (docs/operations.md#audit-trail)."""

from api.audit.actors import SYSTEM, Actor, account_actor, acting_as, cli_actor, current_actor
from api.audit.chain import Verified, prune, verify
from api.audit.trail import (
    REDACTED,
    Entry,
    Target,
    changed,
    note,
    note_changed,
    record,
    record_all,
    redacted,
    row_hash,
)

__all__ = [
    "REDACTED",
    "SYSTEM",
    "Actor",
    "Entry",
    "Target",
    "Verified",
    "account_actor",
    "acting_as",
    "changed",
    "cli_actor",
    "current_actor",
    "note",
    "note_changed",
    "prune",
    "record",
    "record_all",
    "redacted",
    "row_hash",
    "verify",
]
