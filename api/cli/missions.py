"""`questwall offers …`: import, backtest, list, activate and deactivate missions and
quests."""

from __future__ import annotations

import json

import click

from api.cli.common import _print_json, _require_ready
from api.core.db import write_session
from api.missions import offers
from models.offer_schemas import OffersFile


@click.group("offers")
def offers_group() -> None:
    """Import, list, activate and deactivate missions and quests."""


@offers_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def offers_import(path: str) -> None:
    """Create or update the missions and quests of a JSON or YAML file (see docs/)."""
    data = _offers_file(path)
    try:
        with write_session() as session:
            missions, quests = offers.import_offers(session=session, data=data)
            result = {
                "missions": [{"id": m.id, "title": m.title} for m in missions],
                "quests": [{"id": q.id, "name": q.name} for q in quests],
            }
    except offers.OfferError as exc:
        raise click.ClickException(str(exc)) from None
    _print_json(result)


@offers_group.command("backtest")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--days",
    type=click.IntRange(1, 3660),
    default=30,
    show_default=True,
    help="How many days of stored events, up to now.",
)
def offers_backtest(path: str, days: int) -> None:
    """Run every mission of an import file over the game's stored events of the last
    DAYS days, as if each player had started it at their first event; saves nothing
    (docs/missions.md#backtest)."""
    from api.core.db import get_engine
    from api.missions.backtest import run_backtest
    from models import Game
    from models.types import utcnow

    data = _offers_file(path)
    drafts = [*data.missions, *(m for q in data.quests for m in q.missions)]
    with write_session() as session:
        if session.get(Game, data.gameId) is None:
            raise click.ClickException(f"no game with id {data.gameId}")

    def report(done: int, total: int) -> None:
        click.echo(f"{done:,} of {total:,} events read", err=True)

    with get_engine().connect() as conn:
        try:
            result = run_backtest(
                conn,
                game_id=data.gameId,
                missions=drafts,
                days=days,
                now=utcnow(),
                on_progress=report,
            )
        except offers.OfferError as exc:
            raise click.ClickException(str(exc)) from None
    _print_json(result.as_json())


def _offers_file(path: str) -> OffersFile:
    """An import file (JSON or YAML), checked: the schema's and the rule engine's checks."""
    import yaml
    from pydantic import ValidationError

    _require_ready()
    with open(path, encoding="utf-8") as handle:
        raw = yaml.safe_load(handle) if path.endswith((".yaml", ".yml")) else json.load(handle)
    try:
        data = OffersFile.model_validate(raw)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        raise click.ClickException("the file is invalid:\n" + "\n".join(lines)) from None
    try:
        for mission in [*data.missions, *(m for q in data.quests for m in q.missions)]:
            offers.check_rule(mission)
    except offers.OfferError as exc:
        raise click.ClickException(str(exc)) from None
    return data


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
