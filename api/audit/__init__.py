"""The audit trail: who changed what that moves money or access, when, from where, each
value before and after; append-only and hash-chained (docs/operations.md#audit-trail)."""

from api.audit.actors import SYSTEM, Actor, account_actor, acting_as, cli_actor, current_actor
from api.audit.chain import Verified, prune, verify
from api.audit.filters import (
    SCOPES,
    FilterError,
    Filters,
    accounts_in,
    filters,
    parse_target,
    parse_time,
)
from api.audit.reading import (
    FORMATS,
    MAX_LIMIT,
    PAGE_LIMIT,
    Export,
    Page,
    export,
    plain,
    read_page,
)
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
    "FORMATS",
    "MAX_LIMIT",
    "PAGE_LIMIT",
    "REDACTED",
    "SCOPES",
    "SYSTEM",
    "Actor",
    "Entry",
    "Export",
    "FilterError",
    "Filters",
    "Page",
    "Target",
    "Verified",
    "account_actor",
    "accounts_in",
    "acting_as",
    "changed",
    "cli_actor",
    "current_actor",
    "export",
    "filters",
    "note",
    "note_changed",
    "parse_target",
    "parse_time",
    "plain",
    "prune",
    "read_page",
    "record",
    "record_all",
    "redacted",
    "row_hash",
    "verify",
]
