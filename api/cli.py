"""The `questwall` command: migrate, manage games and credentials, serve."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from api.core.config import PROJECT_ROOT, get_settings
from api.core.crypto import get_secret_box
from api.core.db import DatabaseNotMigrated, ensure_migrated, get_engine, migrate, write_session
from api.services import games


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


def _require_migrated() -> None:
    try:
        ensure_migrated()
    except DatabaseNotMigrated as exc:
        raise click.ClickException(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Questwall: game events, missions and quests, offerwalls and postbacks."""


@main.command("migrate")
@click.option("--revision", default="head", show_default=True, help="Target Alembic revision.")
def migrate_cmd(revision: str) -> None:
    """Apply database migrations (DATABASE_URL, default SQLite under data/)."""
    migrate(revision=revision)
    url = get_engine().url.render_as_string(hide_password=True)
    click.echo(f"Database at {url} is migrated to {revision}.")


@main.group("game")
def game_group() -> None:
    """Create and list games."""


@game_group.command("create")
@click.argument("name")
def game_create(name: str) -> None:
    """Create a game; prints gameId, clientId and clientSecret (shown only this once)."""
    _require_migrated()
    with write_session() as session:
        issued = games.create_game(session=session, box=get_secret_box(), name=name)
    _print_json(
        {
            "gameId": issued.game_id,
            "clientId": issued.client_id,
            "clientSecret": issued.client_secret,
        }
    )


@game_group.command("list")
def game_list() -> None:
    """List games and their credentials (never the secrets)."""
    _require_migrated()
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
                        "createdAt": c.created_at.isoformat(),
                        "revokedAt": c.revoked_at.isoformat() if c.revoked_at else None,
                    }
                    for c in creds
                ],
            }
            for game, creds in rows
        ]
    )


@main.group("credential")
def credential_group() -> None:
    """Add, rotate and revoke a game's credentials (two may be live at once)."""


def _issue(fn: Any, **kwargs: Any) -> None:
    _require_migrated()
    try:
        with write_session() as session:
            issued = fn(session=session, **kwargs)
    except games.CredentialError as exc:
        raise click.ClickException(str(exc)) from None
    _print_json(
        {
            "gameId": issued.game_id,
            "clientId": issued.client_id,
            "clientSecret": issued.client_secret,
        }
    )


@credential_group.command("add")
@click.argument("game_id")
def credential_add(game_id: str) -> None:
    """Issue a second live credential for GAME_ID; prints the secret once."""
    _issue(games.add_credential, box=get_secret_box(), game_id=game_id)


@credential_group.command("rotate")
@click.argument("game_id")
@click.option("--revoke", "revoke_client_id", help="Also revoke this client id in the same step.")
def credential_rotate(game_id: str, revoke_client_id: str | None) -> None:
    """Issue a new credential for GAME_ID, optionally revoking an old one."""
    _issue(
        games.rotate_credential,
        box=get_secret_box(),
        game_id=game_id,
        revoke_client_id=revoke_client_id,
    )


@credential_group.command("revoke")
@click.argument("game_id")
@click.argument("client_id")
def credential_revoke(game_id: str, client_id: str) -> None:
    """Revoke CLIENT_ID of GAME_ID; it stops working at once."""
    _require_migrated()
    try:
        with write_session() as session:
            games.revoke_credential(session=session, game_id=game_id, client_id=client_id)
    except games.CredentialError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Revoked {client_id}.")


@main.command("prune")
def prune_cmd() -> None:
    """Delete expired retry and idempotency records."""
    from api.services.ingestion import prune_expired

    _require_migrated()
    removed = prune_expired(engine=get_engine(), settings=get_settings())
    click.echo(f"Removed {removed} expired record(s).")


@main.command("serve")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--host", default="0.0.0.0", show_default=True)  # noqa: S104
def serve(port: int, host: str) -> None:
    """Serve the portal and the API on one port (production build of the portal)."""
    _require_migrated()
    env = {**os.environ, "REFLEX_TELEMETRY_ENABLED": "false"}
    args = [
        sys.executable,
        "-m",
        "reflex",
        "run",
        "--env",
        "prod",
        "--single-port",
        "--backend-port",
        str(port),
        "--backend-host",
        host,
    ]
    os.chdir(PROJECT_ROOT)
    os.execvpe(args[0], args, env)  # noqa: S606


@main.command("api")
@click.option("--port", default=8001, show_default=True, type=int)
@click.option("--host", default="0.0.0.0", show_default=True)  # noqa: S104
@click.option("--workers", default=2, show_default=True, type=int, help="Worker processes.")
def api_cmd(port: int, host: str, workers: int) -> None:
    """Serve the API alone with N worker processes (for scale, against PostgreSQL)."""
    import uvicorn

    _require_migrated()
    uvicorn.run(
        "api.asgi:app",
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        proxy_headers=False,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
