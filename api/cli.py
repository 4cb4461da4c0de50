"""The `questwall` command: migrate, manage games and credentials, serve."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from api.core.config import PROJECT_ROOT, get_settings
from api.core.crypto import get_secret_box
from api.core.db import get_engine, migrate, pending_migrations, write_session
from api.core.keycheck import MasterKeyMismatch
from api.core.startup import (
    StartRefused,
    check_master_key_setting,
    check_master_keys,
    check_ready,
    database_engine,
    load_settings,
)
from api.services import games, offers, offerwalls


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2))


@contextmanager
def _refusals() -> Iterator[None]:
    """A refusal to start is one line on stderr and exit status 1, never a traceback."""
    try:
        yield
    except StartRefused as exc:
        raise click.ClickException(str(exc)) from None


def _require_ready() -> None:
    """Settings, database, migrations and master keys, checked before any command uses them."""
    with _refusals():
        check_ready()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Questwall: game events, missions and quests, offerwalls and postbacks."""


@main.command("migrate")
@click.option("--revision", default="head", show_default=True, help="Target Alembic revision.")
def migrate_cmd(revision: str) -> None:
    """Apply database migrations (DATABASE_URL, default SQLite under data/)."""
    with _refusals():
        check_master_key_setting(load_settings())
        engine = database_engine()
        try:
            migrate(revision=revision)
        except MasterKeyMismatch as exc:
            raise StartRefused(str(exc)) from None
        if not pending_migrations(engine):
            # A fresh database records its master key here (and a wrong one is refused).
            check_master_keys(engine)
    url = engine.url.render_as_string(hide_password=True)
    click.echo(f"Database at {url} is migrated to {revision}.")


@main.group("game")
def game_group() -> None:
    """Create and list games."""


@game_group.command("create")
@click.argument("name")
def game_create(name: str) -> None:
    """Create a game; prints gameId, clientId and clientSecret (shown only this once)."""
    _require_ready()
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
    _require_ready()
    _issue(games.add_credential, box=get_secret_box(), game_id=game_id)


@credential_group.command("rotate")
@click.argument("game_id")
@click.option("--revoke", "revoke_client_id", help="Also revoke this client id in the same step.")
def credential_rotate(game_id: str, revoke_client_id: str | None) -> None:
    """Issue a new credential for GAME_ID, optionally revoking an old one."""
    _require_ready()
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
    _require_ready()
    try:
        with write_session() as session:
            games.revoke_credential(session=session, game_id=game_id, client_id=client_id)
    except games.CredentialError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Revoked {client_id}.")


@main.group("offerwall")
def offerwall_group() -> None:
    """Create, approve, reject, suspend, reinstate and configure offerwalls."""


def _offerwall_json(ow: Any) -> dict[str, Any]:
    return {
        "id": ow.id,
        "name": ow.name,
        "status": ow.status,
        "owid": ow.owid,
        "rejectionReason": ow.rejection_reason,
        "currency": {
            "name": ow.currency_name,
            "code": ow.currency_code,
            "exchangeRate": ow.exchange_rate,
            "decimals": ow.currency_decimals,
        },
        "postbackUrl": ow.postback_url,
    }


def _with_offerwall(ref: str, fn: Any) -> Any:
    _require_ready()
    try:
        with write_session() as session:
            ow = offerwalls.get_offerwall(session=session, ref=ref)
            return fn(session, ow)
    except (offerwalls.OfferwallError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@offerwall_group.command("create")
@click.argument("name")
def offerwall_create(name: str) -> None:
    """Create a pending offerwall (as a publisher's signup does)."""
    _require_ready()
    with write_session() as session:
        ow = offerwalls.create_offerwall(session=session, name=name)
        _print_json(_offerwall_json(ow))


@offerwall_group.command("approve")
@click.argument("offerwall")
def offerwall_approve(offerwall: str) -> None:
    """Approve a pending or rejected OFFERWALL (id or owid); prints its owid and API key
    (shown only this once). An earlier rejection reason is cleared."""
    issued = _with_offerwall(
        offerwall, lambda s, ow: offerwalls.approve(session=s, box=get_secret_box(), offerwall=ow)
    )
    _print_json({"offerwallId": issued.offerwall_id, "owid": issued.owid, "apiKey": issued.api_key})


@offerwall_group.command("rotate-key")
@click.argument("offerwall")
def offerwall_rotate_key(offerwall: str) -> None:
    """Issue a new API key for OFFERWALL; the old one stops working at once."""
    issued = _with_offerwall(
        offerwall,
        lambda s, ow: offerwalls.rotate_key(session=s, box=get_secret_box(), offerwall=ow),
    )
    _print_json({"offerwallId": issued.offerwall_id, "owid": issued.owid, "apiKey": issued.api_key})


@offerwall_group.command("reject")
@click.argument("offerwall")
@click.option(
    "--reason",
    required=True,
    help="Why, in words the publisher reads on their application page (3 to 1000 characters).",
)
def offerwall_reject(offerwall: str, reason: str) -> None:
    """Reject a pending OFFERWALL with a reason."""
    ow = _with_offerwall(
        offerwall, lambda s, ow: offerwalls.reject(session=s, offerwall=ow, reason=reason)
    )
    _print_json(_offerwall_json(ow))


@offerwall_group.command("suspend")
@click.argument("offerwall")
def offerwall_suspend(offerwall: str) -> None:
    """Suspend an approved OFFERWALL: its API key and tracking links stop working at once."""
    ow = _with_offerwall(offerwall, lambda s, ow: offerwalls.suspend(session=s, offerwall=ow))
    _print_json(_offerwall_json(ow))


@offerwall_group.command("reinstate")
@click.argument("offerwall")
def offerwall_reinstate(offerwall: str) -> None:
    """Approve a suspended OFFERWALL again, with the owid and API key it had."""
    ow = _with_offerwall(offerwall, lambda s, ow: offerwalls.reinstate(session=s, offerwall=ow))
    _print_json(_offerwall_json(ow))


@offerwall_group.command("set-postback")
@click.argument("offerwall")
@click.argument("url")
def offerwall_set_postback(offerwall: str, url: str) -> None:
    """Set the postback URL template of OFFERWALL (macros such as {transaction_id})."""
    ow = _with_offerwall(
        offerwall, lambda s, ow: offerwalls.set_postback_url(session=s, offerwall=ow, url=url)
    )
    _print_json(_offerwall_json(ow))


@offerwall_group.command("set-currency")
@click.argument("offerwall")
@click.option("--name", required=True, help="e.g. Gems")
@click.option("--code", required=True, help="3 capital letters, e.g. GEM")
@click.option("--rate", required=True, type=float, help="units per USD")
@click.option("--decimals", default=0, show_default=True, type=int)
def offerwall_set_currency(
    offerwall: str, name: str, code: str, rate: float, decimals: int
) -> None:
    """Set the currency payouts are shown and posted back in."""
    ow = _with_offerwall(
        offerwall,
        lambda s, ow: offerwalls.set_currency(
            session=s, offerwall=ow, name=name, code=code, exchange_rate=rate, decimals=decimals
        ),
    )
    _print_json(_offerwall_json(ow))


@offerwall_group.command("list")
def offerwall_list() -> None:
    """List offerwalls (never their API keys)."""
    _require_ready()
    from sqlmodel import select

    from models import Offerwall

    with write_session() as session:
        _print_json([_offerwall_json(ow) for ow in session.exec(select(Offerwall))])


@main.group("offers")
def offers_group() -> None:
    """Import, list, activate and deactivate missions and quests."""


@offers_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def offers_import(path: str) -> None:
    """Create or update the missions and quests of a JSON or YAML file (see docs/)."""
    import yaml
    from pydantic import ValidationError

    from models.offer_schemas import CatalogFile

    _require_ready()
    with open(path, encoding="utf-8") as handle:
        raw = yaml.safe_load(handle) if path.endswith((".yaml", ".yml")) else json.load(handle)
    try:
        data = CatalogFile.model_validate(raw)
        with write_session() as session:
            missions, quests = offers.import_catalog(session=session, data=data)
            result = {
                "missions": [{"id": m.id, "title": m.title} for m in missions],
                "quests": [{"id": q.id, "name": q.name} for q in quests],
            }
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise click.ClickException("the file is invalid:\n" + "\n".join(lines)) from None
    except offers.OfferError as exc:
        raise click.ClickException(str(exc)) from None
    _print_json(result)


@offers_group.command("list")
@click.option("--game", "game_id", help="Only this game's offers.")
def offers_list(game_id: str | None) -> None:
    """List missions and quests with their state."""
    _require_ready()
    with write_session() as session:
        _print_json(offers.listing(session=session, game_id=game_id))


def _set_active(kind: str, offer_id: str, active: bool) -> None:
    _require_ready()
    try:
        with write_session() as session:
            offers.set_active(session=session, kind=kind, offer_id=offer_id, active=active)
    except offers.OfferError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{kind} {offer_id} is {'active' if active else 'inactive'}.")


@offers_group.command("activate")
@click.argument("kind", type=click.Choice(["mission", "quest"]))
@click.argument("offer_id")
def offers_activate(kind: str, offer_id: str) -> None:
    """Activate a mission or quest."""
    _set_active(kind, offer_id, True)


@offers_group.command("deactivate")
@click.argument("kind", type=click.Choice(["mission", "quest"]))
@click.argument("offer_id")
def offers_deactivate(kind: str, offer_id: str) -> None:
    """Deactivate a mission or quest: it starts and converts no one."""
    _set_active(kind, offer_id, False)


@main.group("user")
def user_group() -> None:
    """Portal accounts (the first staff account comes from here)."""


@user_group.command("create-staff")
@click.argument("email")
@click.option("--name", default="", help="Display name.")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from standard input instead of prompting (for scripts).",
)
def user_create_staff(email: str, name: str, password_stdin: bool) -> None:
    """Create a staff account; the password is prompted for (never an argument)."""
    from api.services.accounts import AccountError, create_user
    from models import Role

    _require_ready()
    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        with write_session() as session:
            user = create_user(
                session=session, email=email, password=password, role=Role.STAFF, name=name
            )
            created = user.email
    except AccountError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Staff account {created} created. Sign in at {get_settings().base_url}/login.")


@main.command("demo")
@click.option("--players", default=40, show_default=True, type=int, help="Players to simulate.")
@click.option("--receiver-port", default=8799, show_default=True, type=int)
def demo_cmd(players: int, receiver_port: int) -> None:
    """Seed a demo studio, game, missions, quest and publisher, and simulate players."""
    from api.demo import run_demo

    _require_ready()
    try:
        run_demo(
            settings=get_settings(),
            box=get_secret_box(),
            players=players,
            port=receiver_port,
            echo=click.echo,
        )
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None


@main.command("prune")
def prune_cmd() -> None:
    """Delete expired retry and idempotency records, portal sessions and sign-in failures."""
    from api.services.accounts import prune_sessions
    from api.services.ingestion import prune_expired

    _require_ready()
    removed = prune_expired(engine=get_engine(), settings=get_settings())
    with write_session() as session:
        removed += prune_sessions(session=session)
    click.echo(f"Removed {removed} expired record(s).")


@main.command("rotate-secrets")
def rotate_secrets_cmd() -> None:
    """Reseal every secret and recompute every keyed digest under SECRET_KEY, so the keys
    in SECRET_KEY_PREVIOUS can be removed afterwards (safe to run again)."""
    from api.services.rotation import rotate_secrets

    _require_ready()
    done = rotate_secrets(engine=get_engine(), box=get_secret_box())
    click.echo(
        f"Resealed {done.resealed} secret(s) and recomputed {done.digests} digest(s) under "
        f"master key {done.key_id}; SECRET_KEY_PREVIOUS is no longer needed."
    )


@main.command("worker")
@click.option("--threads", default=16, show_default=True, type=int, help="Parallel deliveries.")
def worker_cmd(threads: int) -> None:
    """Deliver postbacks (run any number, against PostgreSQL; stop with Ctrl-C or SIGTERM)."""
    import signal

    from api.services.postbacks import Dispatcher

    _require_ready()
    dispatcher = Dispatcher(
        engine=get_engine(), box=get_secret_box(), settings=get_settings(), threads=threads
    )
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: dispatcher.stop())
    click.echo(f"Delivering postbacks with {threads} threads. Stop with Ctrl-C.")
    dispatcher.run()


@main.command("serve")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--host", default="0.0.0.0", show_default=True)  # noqa: S104
def serve(port: int, host: str) -> None:
    """Serve the portal and the API on one port (production build of the portal)."""
    _require_ready()
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

    _require_ready()
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
