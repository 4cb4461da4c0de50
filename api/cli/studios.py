"""`questwall game …` and `questwall credential …`: games and their signing credentials."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from api import webhooks
from api.cli.common import _print_json, _require_ready
from api.core.config import get_settings
from api.core.crypto import get_secret_box
from api.core.db import new_session, write_session
from api.studios import games
from models.types import utcnow


def _print_issued(issued: Any) -> None:
    """The new credential, its secret shown only this once."""
    _print_json(
        {
            "gameId": issued.game_id,
            "clientId": issued.client_id,
            "clientSecret": issued.client_secret,
            "name": issued.name,
        }
    )


@click.group("game")
def game_group() -> None:
    """Create and list games."""


@game_group.command("create")
@click.argument("name")
def game_create(name: str) -> None:
    """Create a game; prints gameId, clientId and clientSecret (shown only this once)."""
    _require_ready()
    with write_session() as session:
        issued = games.create_game(session=session, box=get_secret_box(), name=name)
    _print_issued(issued)


@game_group.command("list")
def game_list() -> None:
    """List games and their credentials (never the secrets)."""
    _require_ready()
    with write_session() as session:
        rows = games.list_games(session=session)
    _print_json(
        [
            {
                "gameId": game.id,
                "name": game.name,
                "credentials": [
                    {
                        "clientId": c.client_id,
                        "name": c.name,
                        "createdAt": c.created_at.isoformat(),
                        "revokedAt": c.revoked_at.isoformat() if c.revoked_at else None,
                    }
                    for c in creds
                ],
            }
            for game, creds in rows
        ]
    )


@click.group("credential")
def credential_group() -> None:
    """Add, rotate and revoke a game's credentials (two may be live at once)."""


def _credential_step(fn: Any, **kwargs: Any) -> Any:
    """Run one credential step in a write session; a refused step is one line, not a trace."""
    try:
        with write_session() as session:
            return fn(session=session, **kwargs)
    except games.CredentialError as exc:
        raise click.ClickException(str(exc)) from None


@credential_group.command("add")
@click.argument("game_id")
@click.option("--name", default="", help='What to call it ("prod-key"); default "Key N".')
def credential_add(game_id: str, name: str) -> None:
    """Issue a second live credential for GAME_ID; prints the secret once."""
    _require_ready()
    _print_issued(
        _credential_step(games.add_credential, box=get_secret_box(), game_id=game_id, name=name)
    )


@credential_group.command("rotate")
@click.argument("game_id")
@click.option("--revoke", "revoke_client_id", help="Also revoke this client id in the same step.")
@click.option("--name", default="", help='What to call the new one; default "Key N".')
def credential_rotate(game_id: str, revoke_client_id: str | None, name: str) -> None:
    """Issue a new credential for GAME_ID, optionally revoking an old one."""
    _require_ready()
    issued = _credential_step(
        games.rotate_credential,
        box=get_secret_box(),
        game_id=game_id,
        revoke_client_id=revoke_client_id,
        name=name,
    )
    _print_issued(issued)


@credential_group.command("revoke")
@click.argument("game_id")
@click.argument("client_id")
def credential_revoke(game_id: str, client_id: str) -> None:
    """Revoke CLIENT_ID of GAME_ID; it stops working at once."""
    _require_ready()
    _credential_step(games.revoke_credential, game_id=game_id, client_id=client_id)
    click.echo(f"Revoked {client_id}.")


@game_group.group("webhook")
def webhook_group() -> None:
    """Webhooks to the game's own server: add, list, test, rotate-secret, disable, enable,
    remove, replay (docs/game-integration.md#webhooks)."""


def _endpoint_json(endpoint: Any) -> dict[str, Any]:
    return {
        "id": endpoint.id,
        "gameId": endpoint.game_id,
        "url": endpoint.url,
        "description": endpoint.description,
        "events": endpoint.event_types,
        "status": endpoint.status,
        "statusReason": endpoint.status_reason,
        "secretOverlapUntil": endpoint.previous_until.isoformat()
        if endpoint.previous_until
        else None,
    }


def _webhook_step(fn: Any, **kwargs: Any) -> Any:
    """Run one webhook step in a write session; a refused step is one line, not a trace."""
    try:
        with write_session() as session:
            return fn(session=session, **kwargs)
    except webhooks.WebhookError as exc:
        raise click.ClickException(str(exc)) from None


@webhook_group.command("add")
@click.argument("game_id")
@click.argument("url")
@click.option("--events", default="", help="Comma-separated types (default: every type).")
@click.option("--description", default="")
def webhook_add(game_id: str, url: str, events: str, description: str) -> None:
    """Add an endpoint; prints it with its signing secret (shown only this once)."""
    _require_ready()
    settings = get_settings()

    def add(session: Any) -> dict[str, Any]:
        added = webhooks.add_endpoint(
            session=session,
            box=get_secret_box(),
            game_id=game_id,
            url=url,
            event_types=webhooks.chosen_types(events),
            description=description,
            allow_private=settings.postback_allow_private,
        )
        return _endpoint_json(added.endpoint) | {"secret": added.secret}

    _print_json(_webhook_step(add))


@webhook_group.command("list")
@click.argument("game_id")
def webhook_list(game_id: str) -> None:
    """List the game's endpoints (never their secrets)."""
    _require_ready()

    def found(session: Any) -> list[dict[str, Any]]:
        return [
            _endpoint_json(e) for e in webhooks.list_endpoints(session=session, game_id=game_id)
        ]

    _print_json(_webhook_step(found))


@webhook_group.command("rotate-secret")
@click.argument("endpoint_id")
@click.option(
    "--overlap",
    default="24h",
    show_default=True,
    type=click.Choice(list(webhooks.OVERLAP)),
    help="How long the old secret keeps signing beside the new one.",
)
def webhook_rotate(endpoint_id: str, overlap: str) -> None:
    """A new signing secret, shown only this once; the old one signs too for the overlap."""
    _require_ready()

    def rotate(session: Any) -> dict[str, Any]:
        endpoint = webhooks.endpoint_of_game(session=session, endpoint_id=endpoint_id)
        secret = webhooks.rotate_secret(
            session=session, box=get_secret_box(), endpoint=endpoint, overlap=overlap, now=utcnow()
        )
        return _endpoint_json(endpoint) | {"secret": secret}

    _print_json(_webhook_step(rotate))


@webhook_group.command("disable")
@click.argument("endpoint_id")
def webhook_disable(endpoint_id: str) -> None:
    """Stop sending to the endpoint; its messages wait, none is dropped."""
    _require_ready()
    _set_endpoint(endpoint_id, active=False)


@webhook_group.command("enable")
@click.argument("endpoint_id")
def webhook_enable(endpoint_id: str) -> None:
    """Send to the endpoint again, the waiting messages first, in order."""
    _require_ready()
    _set_endpoint(endpoint_id, active=True)


def _set_endpoint(endpoint_id: str, *, active: bool) -> None:
    def change(session: Any) -> dict[str, Any]:
        endpoint = webhooks.endpoint_of_game(session=session, endpoint_id=endpoint_id)
        return _endpoint_json(
            webhooks.set_status(session=session, endpoint=endpoint, active=active)
        )

    _print_json(_webhook_step(change))


@webhook_group.command("remove")
@click.argument("endpoint_id")
def webhook_remove(endpoint_id: str) -> None:
    """Remove the endpoint with its messages."""
    _require_ready()

    def remove(session: Any) -> dict[str, Any]:
        endpoint = webhooks.endpoint_of_game(session=session, endpoint_id=endpoint_id)
        webhooks.remove_endpoint(session=session, endpoint=endpoint)
        return {"removed": endpoint_id}

    _print_json(_webhook_step(remove))


@webhook_group.command("test")
@click.argument("endpoint_id")
@click.option(
    "--type",
    "message_type",
    default="mission.completed",
    show_default=True,
    type=click.Choice(list(webhooks.TYPES)),
)
def webhook_test(endpoint_id: str, message_type: str) -> None:
    """Send a made-up message of a type to the endpoint now and print the answer."""
    _require_ready()
    settings = get_settings()
    try:  # read, then sent outside any transaction (a slow receiver holds no lock)
        with new_session() as session:
            endpoint = webhooks.endpoint_of_game(session=session, endpoint_id=endpoint_id)
            session.expunge(endpoint)
    except webhooks.WebhookError as exc:
        raise click.ClickException(str(exc)) from None
    result = webhooks.send_test(
        endpoint=endpoint, box=get_secret_box(), settings=settings, message_type=message_type
    )
    _print_json(
        {
            "delivered": result.delivered,
            "statusCode": result.status_code,
            "error": result.error,
            "durationMs": result.duration_ms,
        }
    )


def _moment(text: str) -> datetime:
    """An ISO 8601 moment; without an offset, UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not an ISO 8601 moment") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@webhook_group.command("replay")
@click.argument("endpoint_id")
@click.option(
    "--from", "start", required=True, help="From this moment (ISO 8601; UTC unless given)."
)
@click.option("--to", "end", required=True, help="Up to this moment (at most 7 days after --from).")
@click.option("--type", "message_type", default="", type=click.Choice(["", *webhooks.TYPES]))
def webhook_replay(endpoint_id: str, start: str, end: str, message_type: str) -> None:
    """Send again every message of the endpoint made in the range (of one type), in order."""
    _require_ready()
    begin, until = _moment(start), _moment(end)

    def replay(session: Any) -> dict[str, Any]:
        endpoint = webhooks.endpoint_of_game(session=session, endpoint_id=endpoint_id)
        queued = webhooks.delivery_log.replay_range(
            session=session,
            game_id=endpoint.game_id,
            endpoint_id=endpoint_id,
            start=begin,
            end=until,
            now=utcnow(),
            message_type=message_type,
        )
        return {"endpointId": endpoint_id, "queued": queued}

    _print_json(_webhook_step(replay))
