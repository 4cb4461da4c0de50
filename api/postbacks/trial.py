"""The portal's postback preview and test postback: the offerwall's template rendered for
a made-up conversion (`preview_url`, with `api.postbacks.outbox.sample_values`), and that
postback sent once to the saved URL with the dispatcher's rules (`send_test_postback`:
the same egress checks and signature, `api/postbacks/transport.py`). Nothing is stored:
a test transaction id tells the publisher it is not a real conversion."""

from __future__ import annotations

from dataclasses import dataclass

from api.core.config import Settings
from api.core.crypto import SecretBox, open_api_key
from api.postbacks import endpoint as endpoints
from api.postbacks import outbox, transport
from api.postbacks.endpoint import EndpointError
from api.postbacks.url import render
from models import Offerwall


def preview_url(*, template: str, offerwall: Offerwall, api_key: str) -> str:
    """The template rendered for a made-up conversion, as a real postback would be."""
    return render(template, outbox.sample_values(offerwall).mapping(), api_key)


@dataclass(frozen=True)
class PostbackTrial:
    url: str
    status_code: int | None
    latency_ms: int
    answer: str
    error: str
    sent: bool  # False: refused before any request went out (latency means nothing then)


def send_test_postback(
    *, settings: Settings, box: SecretBox, offerwall: Offerwall
) -> PostbackTrial:
    """Send the sample postback to the saved URL once, with the dispatcher's rules; nothing
    is stored (a test transaction id tells the publisher it is not a real conversion).
    Raises EndpointError without a saved URL or an API key (not approved)."""
    if not offerwall.postback_url:
        raise EndpointError("Save a postback URL first.")
    if offerwall.api_key_sealed is None or offerwall.owid is None:
        raise EndpointError("The offerwall has no API key until it is approved.")
    url = preview_url(
        template=offerwall.postback_url,
        offerwall=offerwall,
        api_key=open_api_key(box, offerwall.api_key_sealed, owid=offerwall.owid),
    )
    secrets = endpoints.signing_secrets(box, offerwall)
    with transport.http_client(settings, pool=1) as client:
        result = transport.send(
            client, url, allow_private=settings.postback_allow_private, secrets=secrets
        )
    return PostbackTrial(
        url,
        result.status_code,
        result.duration_ms,
        result.body_excerpt or "",
        result.error or "",
        result.sent,
    )
