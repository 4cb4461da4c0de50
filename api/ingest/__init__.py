"""What games send: the signed-request check (`signing`), the custom-events use case
(`custom_events`: identifiers, then events, in one transaction), the lookup of platform user
ids, events' retention, requests refused as a whole, and the live event debugger's read side.
`_identifiers` and `_event_store` serve the custom-events use case alone.
"""

from api.ingest.custom_events import (
    BatchArgs,
    check_batch,
    parse_batch,
    prune_expired,
    store_batch,
    write_grouped,
)
from api.ingest.lookup import lookup_platform_users
from api.ingest.refused_requests import Refusal, RefusalRecorder
from api.ingest.retention import ensure_partitions, prune_events, prune_refused_clicks
from api.ingest.signing import SignedMessage

__all__ = [
    "BatchArgs",
    "Refusal",
    "RefusalRecorder",
    "SignedMessage",
    "check_batch",
    "ensure_partitions",
    "lookup_platform_users",
    "parse_batch",
    "prune_events",
    "prune_expired",
    "prune_refused_clicks",
    "store_batch",
    "write_grouped",
]
