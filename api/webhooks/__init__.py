"""Webhooks to a game's own server (docs/game-integration.md#webhooks): its endpoints and
their signing secrets (`endpoints`), Standard Webhooks signatures (`signing`), the outbox
of messages stored in the transaction that caused them (`messages`) and their delivery,
one lane per endpoint (`dispatcher`); what the portal's Webhooks page shows and does with
an endpoint: its delivery log, replay and the rotation after the password (`delivery_log`).
"""

from api.webhooks import delivery_log
from api.webhooks.dispatcher import WebhookDispatcher
from api.webhooks.endpoints import (
    OPT_IN,
    OVERLAP,
    TYPES,
    WebhookError,
    add_endpoint,
    chosen_types,
    endpoint_of_game,
    list_endpoints,
    remove_endpoint,
    rotate_secret,
    set_status,
    signing_secrets,
    takes,
)
from api.webhooks.messages import emit
from api.webhooks.trial import sample, send_test

__all__ = [
    "OPT_IN",
    "OVERLAP",
    "TYPES",
    "WebhookDispatcher",
    "WebhookError",
    "add_endpoint",
    "chosen_types",
    "delivery_log",
    "emit",
    "endpoint_of_game",
    "list_endpoints",
    "remove_endpoint",
    "rotate_secret",
    "sample",
    "send_test",
    "set_status",
    "signing_secrets",
    "takes",
]
