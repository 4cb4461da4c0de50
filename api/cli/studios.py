"""`questwall game …` and `questwall credential …`: games and their signing credentials."""

from __future__ import annotations

from typing import Any

import click

from api.cli.common import _print_json, _require_ready
from api.core.crypto import get_secret_box
from api.core.db import write_session
from api.studios import games


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
