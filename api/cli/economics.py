"""`questwall offerwall promotion …`, `questwall offerwall payout-rule …` and
`questwall game budget`: the network's economics (docs/economics.md), each step one use
case of `api/economics/`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click
from pydantic import ValidationError

from api.cli.common import _print_json, _require_ready
from api.core.db import write_session
from api.core.money import format_usd, multiplier_text
from api.economics import EconomicsError, PromotionIn, budgets, payout_rules, promotions
from api.publishers import offerwalls
from models import Game
from models.offer_schemas import BudgetIn
from models.types import utcnow


def _step(fn: Any) -> Any:
    """Run one step in a write session; a refusal is one line, never a traceback."""
    _require_ready()
    try:
        with write_session() as session:
            return fn(session)
    except ValidationError as exc:
        raise click.ClickException(_first_problem(exc)) from None
    except (EconomicsError, offerwalls.OfferwallError) as exc:
        raise click.ClickException(str(exc)) from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


# --- promotions -------------------------------------------------------------------------


@click.group("promotion")
def promotion_group() -> None:
    """Currency sales of an offerwall: add, list, end (docs/publisher-integration.md#promotions)."""


def _promotion_json(row: Any, now: datetime) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "multiplier": multiplier_text(row.multiplier),
        "start": row.starts_at.isoformat(),
        "end": row.ends_at.isoformat(),
        "weekly": row.weekly,
        "timeZone": row.time_zone,
        "countries": row.countries,
        "excludeCountries": row.exclude_countries,
        "firstConversionOnly": row.first_conversion_only,
        "endedAt": row.ended_at.isoformat() if row.ended_at else None,
        "state": promotions.state(row, now),
    }


@promotion_group.command("add")
@click.argument("offerwall")
@click.option("--name", required=True)
@click.option("--multiplier", required=True, help="1.01 to 10, e.g. 2 or 1.5")
@click.option("--start", required=True, help="ISO 8601 with its zone: 2026-12-24T18:00:00Z")
@click.option("--end", required=True, help="ISO 8601 with its zone")
@click.option("--weekly", is_flag=True, help="Repeat the window every week (in --time-zone).")
@click.option("--time-zone", default="UTC", show_default=True)
@click.option("--countries", default="", help="Comma-separated, e.g. US,CA (default: all).")
@click.option("--exclude-countries", is_flag=True, help="Every country but --countries.")
@click.option("--first-conversion-only", is_flag=True, help="A player's first conversion only.")
def promotion_add(
    offerwall: str,
    name: str,
    multiplier: str,
    start: str,
    end: str,
    weekly: bool,
    time_zone: str,
    countries: str,
    exclude_countries: bool,
    first_conversion_only: bool,
) -> None:
    """Add a promotion to the offerwall OFFERWALL (its id or owid); prints it."""

    def add(session: Any) -> dict[str, Any]:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall)
        data = PromotionIn.model_validate(
            {
                "name": name,
                "multiplier": multiplier,
                "start": start,
                "end": end,
                "weekly": weekly,
                "timeZone": time_zone,
                "countries": [c for c in countries.split(",") if c.strip()],
                "excludeCountries": exclude_countries,
                "firstConversionOnly": first_conversion_only,
            }
        )
        return _promotion_json(promotions.add(session, wall.id, data, by="cli"), utcnow())

    _print_json(_step(add))


@promotion_group.command("list")
@click.argument("offerwall")
def promotion_list(offerwall: str) -> None:
    """List the offerwall's promotions, the latest first, with their state."""

    def listed(session: Any) -> list[dict[str, Any]]:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall)
        now = utcnow()
        return [_promotion_json(r, now) for r in promotions.of_offerwall(session, wall.id)]

    _print_json(_step(listed))


@promotion_group.command("end")
@click.argument("promotion_id")
def promotion_end(promotion_id: str) -> None:
    """End a promotion now."""
    _print_json(_step(lambda s: _promotion_json(promotions.end(s, promotion_id), utcnow())))


# --- payout rules -----------------------------------------------------------------------


@click.group("payout-rule")
def payout_rule_group() -> None:
    """An offerwall's payout rules, set by staff (docs/economics.md#payout-precedence)."""


def _rules_json(session: Any, offerwall_id: str) -> list[dict[str, Any]]:
    return [
        {
            "mission": rule.mission_id or None,
            "missionTitle": title or None,
            "payoutUsd": None if rule.payout_micros is None else format_usd(rule.payout_micros),
            "sharePercent": rule.share_percent,
        }
        for rule, title in payout_rules.of_offerwall(session, offerwall_id)
    ]


@payout_rule_group.command("set")
@click.argument("offerwall")
@click.option("--mission", "mission_id", default=None, help="One mission (default: every one).")
@click.option("--payout", default=None, help="A fixed payout in USD (with --mission).")
@click.option("--share", default=None, help="A share of revenue in percent, e.g. 70.")
def payout_rule_set(
    offerwall: str, mission_id: str | None, payout: str | None, share: str | None
) -> None:
    """Set a rule: --share for every mission, or --mission with --payout or --share."""

    def put(session: Any) -> list[dict[str, Any]]:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall)
        if mission_id is None:
            if payout is not None or share is None:
                raise EconomicsError(
                    "For every mission give --share; a fixed --payout needs --mission."
                )
            payout_rules.set_share(session, wall.id, share, by="cli")
        else:
            payout_rules.set_for_mission(
                session, wall.id, mission_id, payout=payout, share=share, by="cli"
            )
        return _rules_json(session, wall.id)

    _print_json(_step(put))


@payout_rule_group.command("list")
@click.argument("offerwall")
def payout_rule_list(offerwall: str) -> None:
    """List the offerwall's payout rules."""

    def listed(session: Any) -> list[dict[str, Any]]:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall)
        return _rules_json(session, wall.id)

    _print_json(_step(listed))


@payout_rule_group.command("remove")
@click.argument("offerwall")
@click.option(
    "--mission", "mission_id", default="", help="One mission's rule (default: the share)."
)
def payout_rule_remove(offerwall: str, mission_id: str) -> None:
    """Remove a rule: the offerwall's share, or one mission's."""

    def remove(session: Any) -> list[dict[str, Any]]:
        wall = offerwalls.get_offerwall(session=session, ref=offerwall)
        if not payout_rules.remove(session, wall.id, mission_id):
            raise EconomicsError("No such rule.")
        return _rules_json(session, wall.id)

    _print_json(_step(remove))


# --- a game's budget --------------------------------------------------------------------


@click.command("budget")
@click.argument("game_id")
@click.option("--amount", default=None, help="USD of revenue, e.g. 500")
@click.option(
    "--every",
    type=click.Choice(["day", "week", "month", "total"]),
    default="day",
    show_default=True,
)
@click.option("--time-zone", default="UTC", show_default=True)
@click.option("--remove", is_flag=True, help="Remove the game's budget.")
def game_budget(game_id: str, amount: str | None, every: str, time_zone: str, remove: bool) -> None:
    """Set (or --remove) the game's budget of revenue over all its missions; prints its burn."""

    def put(session: Any) -> dict[str, Any]:
        if remove == (amount is not None):
            raise EconomicsError("Give --amount, or --remove.")
        budget = None
        if amount is not None:
            budget = BudgetIn.model_validate(
                {"amount": amount, "every": every, "timeZone": time_zone}
            )
        budgets.set_game_budget(session, game_id, budget)
        game = session.get(Game, game_id)
        burns = budgets.burn(session, game_id, [], utcnow())
        return {
            "gameId": game_id,
            "budget": game.budget if game else None,
            "spentUsd": format_usd(burns[0].spent_micros) if burns else None,
            "period": burns[0].period if burns else None,
        }

    _print_json(_step(put))
