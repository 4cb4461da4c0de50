"""A test message of any type, sent to an endpoint at once and not stored: what the CLI's
`questwall game webhook test` (and the portal's "Send test event") does. Its ids start with
`test-`, so a receiver can tell it from a real one."""

from __future__ import annotations

import uuid
from typing import Any

from api.core.config import Settings
from api.core.crypto import SecretBox
from api.postbacks.transport import AttemptResult, http_client, post
from api.webhooks import signing
from api.webhooks.endpoints import signing_secrets
from api.webhooks.messages import message_body
from models import WebhookEndpoint
from models.types import utcnow

_ABOUT: dict[str, Any] = {
    "userId": "test-user",
    "platformUserId": "00000000-0000-4000-8000-000000000001",
    "mission": {"id": "00000000-0000-4000-8000-000000000002", "title": "Win 3 matches"},
    "questId": None,
    "period": None,
}
_CONVERSION = {
    "transactionId": "test-00000000-0000-4000-8000-000000000003",
    "payoutUsd": "1.5",
    "stage": None,
}


def sample(message_type: str) -> dict[str, Any]:
    """Made-up data of a message type, shaped as the real ones are."""
    if message_type.startswith("conversion."):
        data = _ABOUT | _CONVERSION
        return data | {"reason": "test"} if message_type != "conversion.approved" else data
    if message_type == "mission.stage_reached":
        return _ABOUT | {"stage": 1, "stages": 3}
    if message_type in ("mission.progressed", "mission.completed"):
        done = message_type == "mission.completed"
        return _ABOUT | {"progress": {"current": 3 if done else 2, "target": 3}}
    if message_type == "mission.started":
        return _ABOUT | {"userId": None}
    if message_type == "quest.completed":
        quest = {"id": "00000000-0000-4000-8000-000000000004", "name": "Season opener"}
        return {k: v for k, v in _ABOUT.items() if k not in ("mission", "questId")} | {
            "quest": quest
        }
    return {"userId": _ABOUT["userId"], "platformUserId": _ABOUT["platformUserId"]}


def send_test(
    *, endpoint: WebhookEndpoint, box: SecretBox, settings: Settings, message_type: str
) -> AttemptResult:
    now = utcnow()
    body = message_body(message_type, sample(message_type), now)
    message_id = "test-msg_" + uuid.uuid4().hex
    headers = signing.headers(
        message_id, int(now.timestamp()), body, signing_secrets(box, endpoint, now)
    )
    with http_client(settings, pool=1) as client:
        return post(
            client,
            endpoint.url,
            body=body,
            headers=headers,
            allow_private=settings.postback_allow_private,
        )
