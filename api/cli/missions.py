"""`questwall offers …`: import, list, activate and deactivate missions and quests."""

from __future__ import annotations

import json

import click

from api.cli.common import _print_json, _require_ready
from api.core.db import write_session
from api.missions import offers


@click.group("offers")
def offers_group() -> None:
    """Import, list, activate and deactivate missions and quests."""


@offers_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def offers_import(path: str) -> None:
    """Create or update the missions and quests of a JSON or YAML file (see docs/)."""
    import yaml
    from pydantic import ValidationError

    from models.offer_schemas import OffersFile

    _require_ready()
    with open(path, encoding="utf-8") as handle:
        raw = yaml.safe_load(handle) if path.endswith((".yaml", ".yml")) else json.load(handle)
    try:
        data = OffersFile.model_validate(raw)
        with write_session() as session:
            missions, quests = offers.import_offers(session=session, data=data)
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
