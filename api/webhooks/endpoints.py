"""A game's webhook endpoints (docs/game-integration.md#webhooks): added, listed,
disabled, enabled and removed by the game's designers (the CLI's `questwall game
webhook`), each with a signing secret shown once, sealed at rest, and rotated with an
overlap during which the old secret signs beside the new one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api import audit
from api.core import catalog
from api.core.crypto import SecretBox, open_webhook_secret, seal_webhook_secret
from api.core.refusals import DomainError
from api.postbacks.transport import target_problem
from api.webhooks.signing import new_secret
from models import EndpointStatus, Game, MessageStatus, WebhookEndpoint
from models.tables import webhook_message as _message
from models.types import utcnow

# Every message type, in the order the docs list them. An opt-in type goes only to
# endpoints that name it.
TYPES = (
    "player.linked",
    "mission.started",
    "mission.progressed",
    "mission.stage_reached",
    "mission.completed",
    "quest.completed",
    "conversion.approved",
    "conversion.held",
    "conversion.rejected",
    "conversion.reversed",
)
OPT_IN = frozenset({"mission.progressed"})
OVERLAP: dict[str, timedelta] = {
    "none": timedelta(0),
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
MAX_ENDPOINTS = 20  # per game
RETRY_FOR = timedelta(days=1)  # a message's attempts (api/webhooks/messages.py)
MAX_URL = 2048


class WebhookError(DomainError, ValueError):
    """A step on a game's webhooks the rules refuse; the message says why."""


def takes(event_types: list[str] | None, message_type: str) -> bool:
    """Whether an endpoint with this filter takes messages of this type."""
    if event_types is None:
        return message_type not in OPT_IN
    return message_type in event_types


def chosen_types(text: str | None) -> list[str] | None:
    """A filter as typed ("conversion.approved, mission.completed"); empty: every type."""
    names = [part.strip() for part in (text or "").split(",") if part.strip()]
    if not names:
        return None
    unknown = [name for name in names if name not in TYPES]
    if unknown:
        raise WebhookError(
            f"Unknown event type {', '.join(unknown)}; the types are {', '.join(TYPES)}."
        )
    return sorted(set(names), key=TYPES.index)


def checked_url(url: str, *, allow_private: bool) -> str:
    """A URL a webhook may go to: http(s), not a literal private address (host names are
    checked at every connection, against the addresses it really uses)."""
    url = url.strip()
    if not url or len(url) > MAX_URL:
        raise WebhookError(f"Enter the endpoint's URL (at most {MAX_URL} characters).")
    problem = target_problem(url, allow_private=allow_private)
    if problem:
        raise WebhookError(f"This URL cannot take webhooks: {problem}.")
    return url


@dataclass(frozen=True)
class Added:
    endpoint: WebhookEndpoint
    secret: str  # shown once


def add_endpoint(
    *,
    session: Session,
    box: SecretBox,
    game_id: str,
    url: str,
    event_types: list[str] | None = None,
    description: str = "",
    allow_private: bool = False,
) -> Added:
    if session.get(Game, game_id) is None:
        raise WebhookError(f"No game with id {game_id}.")
    count = session.exec(
        select(sa.func.count()).where(col(WebhookEndpoint.game_id) == game_id)
    ).one()
    if count >= MAX_ENDPOINTS:
        raise WebhookError(f"A game has at most {MAX_ENDPOINTS} webhook endpoints.")
    endpoint = WebhookEndpoint(
        game_id=game_id,
        url=checked_url(url, allow_private=allow_private),
        description=description.strip()[:300],
        event_types=event_types,
        secret_sealed="",
    )
    secret = new_secret()
    endpoint.secret_sealed = seal_webhook_secret(box, secret, endpoint_id=endpoint.id)
    session.add(endpoint)
    session.flush()
    catalog.bump(session)  # the engine learns the game is told
    _note(
        session,
        endpoint,
        "webhook_endpoint.created",
        url=[None, endpoint.url],
        event_types=[None, event_types],
        description=[None, endpoint.description],
    )
    return Added(endpoint, secret)


def _note(session: Session, endpoint: WebhookEndpoint, action: str, **changes: list[Any]) -> None:
    """An audit event of the endpoint, in its game's studio's scope (never its secret)."""
    game = session.get(Game, endpoint.game_id)
    studio_id = game.studio_id if game is not None else None
    target = audit.Target.of_studio("webhook_endpoint", endpoint.id, endpoint.url, studio_id)
    audit.note(
        session,
        action,
        target,
        {name: pair for name, pair in changes.items() if pair[0] != pair[1]},
    )


def endpoint_of_game(*, session: Session, endpoint_id: str, game_id: str | None = None):
    """The endpoint (of `game_id`, when given); another game's answers like a missing one."""
    endpoint = session.get(WebhookEndpoint, endpoint_id)
    if endpoint is None or (game_id is not None and endpoint.game_id != game_id):
        raise WebhookError("No such webhook endpoint.")
    return endpoint


def list_endpoints(*, session: Session, game_id: str) -> list[WebhookEndpoint]:
    return list(
        session.exec(
            select(WebhookEndpoint)
            .where(col(WebhookEndpoint.game_id) == game_id)
            .order_by(col(WebhookEndpoint.created_at))
        )
    )


def rotate_secret(
    *, session: Session, box: SecretBox, endpoint: WebhookEndpoint, overlap: str, now: datetime
) -> str:
    """A new secret, shown now; the old one signs beside it for `overlap`."""
    if overlap not in OVERLAP:
        raise WebhookError(f"The overlap is one of {', '.join(OVERLAP)}.")
    period = OVERLAP[overlap]
    secret = new_secret()
    if period:
        endpoint.previous_secret_sealed = endpoint.secret_sealed
        endpoint.previous_until = now + period
    else:
        endpoint.previous_secret_sealed, endpoint.previous_until = None, None
    endpoint.secret_sealed = seal_webhook_secret(box, secret, endpoint_id=endpoint.id)
    endpoint.updated_at = now
    session.add(endpoint)
    # Recorded as rotated, with the overlap picked: neither secret is a value.
    _note(session, endpoint, "webhook_endpoint.secret_rotated", overlap=[None, overlap])
    return secret


def signing_secrets(box: SecretBox, endpoint: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign its messages now: the current one, then the one before
    during its overlap."""
    found = [open_webhook_secret(box, endpoint.secret_sealed, endpoint_id=endpoint.id)]
    until = endpoint.previous_until
    if endpoint.previous_secret_sealed and until is not None and until > now:
        found.append(
            open_webhook_secret(box, endpoint.previous_secret_sealed, endpoint_id=endpoint.id)
        )
    return found


def set_status(
    *, session: Session, endpoint: WebhookEndpoint, active: bool, reason: str = ""
) -> WebhookEndpoint:
    """Disable an endpoint (its messages wait, none is sent or dropped) or enable it again
    (a disabled or paused one): the waiting messages go out at once, in order, and so do
    those that ran out of attempts while every attempt failed."""
    now = utcnow()
    if active:
        if endpoint.failing_since is not None:
            session.execute(
                sa.update(_message)
                .where(
                    _message.c.endpoint_id == endpoint.id,
                    _message.c.status == MessageStatus.FAILED,
                    _message.c.created_at >= endpoint.failing_since - RETRY_FOR,
                )
                .values(status=MessageStatus.PENDING, retry_from=now)
            )
        session.execute(
            sa.update(_message)
            .where(
                _message.c.endpoint_id == endpoint.id,
                _message.c.status == MessageStatus.PENDING,
            )
            .values(
                next_attempt_at=now,
                lease_until=None,
                # What waited behind a disabled or paused endpoint gets a new day of retries.
                **({} if endpoint.status == EndpointStatus.ACTIVE else {"retry_from": now}),
            )
        )
        endpoint.failing_since = None
    wanted = EndpointStatus.ACTIVE if active else EndpointStatus.DISABLED
    _note(
        session,
        endpoint,
        "webhook_endpoint.enabled" if active else "webhook_endpoint.disabled",
        status=[str(endpoint.status), str(wanted)],
    )
    endpoint.status = wanted
    endpoint.status_reason = None if active else (reason or "disabled by a designer")
    endpoint.updated_at = now
    session.add(endpoint)
    return endpoint


def remove_endpoint(*, session: Session, endpoint: WebhookEndpoint) -> None:
    """Remove an endpoint with its messages and their attempts."""
    _note(session, endpoint, "webhook_endpoint.removed", url=[endpoint.url, None])
    session.delete(endpoint)
    catalog.bump(session)
