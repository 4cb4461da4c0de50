"""`questwall conversion …`: find conversions and reverse one, through
`api/conversions/ledger.py` (the portal's Conversions page calls the same functions)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from api.cli.common import _print_json, _require_ready
from api.conversions import ConversionRow
from api.conversions import ledger as conversions
from api.core.db import new_session, write_session
from api.core.money import format_money, usd
from models import ConversionStatus
from models.tracking import TEST_CHOICES

# Who a reversal from the command line is recorded as (the portal records the account's
# e-mail address).
ACTOR = "cli"


@click.group("conversion")
def conversion_group() -> None:
    """Find conversions and reverse one (its publisher receives a reversal postback)."""


def _minute(at: datetime | None) -> str | None:
    """A moment to the minute, unlabelled ("2026-01-05 14:03"; None for none)."""
    return f"{at:%Y-%m-%d %H:%M}" if at else None


def _conversion_json(row: ConversionRow) -> dict[str, Any]:
    return {
        "transactionId": row.transaction_id,
        "createdAt": _minute(row.created_at),
        "game": row.game,
        "mission": row.mission,
        "missionId": row.mission_id,
        "publisher": row.publisher,
        "uid": row.uid,
        "platformUserId": row.platform_user_id,
        "payoutUsd": format_money(usd(row.payout_micros), plain=True),
        "status": row.status,
        "reversedAt": _minute(row.reversed_at),
        "reversalReason": row.reversal_reason or None,
        "reversedBy": row.reversed_by or None,
        "signals": row.signals.split(", ") if row.signals else [],
        "reviewDueAt": _minute(row.review_due_at),
        "reviewedBy": row.reviewed_by or None,
        "reviewNote": row.review_note or None,
        "test": row.test,
    }


@conversion_group.command("reverse")
@click.argument("transaction_id")
@click.option(
    "--reason",
    required=True,
    help="Why, in words the publisher receives in the reversal postback as {reason} "
    "(3 to 500 characters).",
)
def conversion_reverse(transaction_id: str, reason: str) -> None:
    """Reverse the approved conversion TRANSACTION_ID, once. Its reversal postback is
    queued at once and sent by `questwall serve` or `questwall worker`, after the
    conversion's own postback."""
    _require_ready()
    try:
        with write_session() as session:
            row = conversions.reverse(
                session=session,
                transaction_id=transaction_id,
                reason=reason,
                actor=ACTOR,
                studio_id=None,
            )
    except conversions.ConversionError as exc:
        raise click.ClickException(str(exc)) from None
    _print_json(_conversion_json(row))


@conversion_group.command("list")
@click.option(
    "--search",
    default="",
    help="A transaction id, the publisher's uid, a platform user id, the game's own user id "
    "or a mission id, or part of a mission's title.",
)
@click.option("--status", type=click.Choice([s.value for s in ConversionStatus]))
@click.option(
    "--players",
    type=click.Choice(["all", *TEST_CHOICES]),
    default="all",
    show_default=True,
    help="Real players' conversions only, the offerwalls' test player's only (\"test\": "
    "true), or both.",
)
@click.option("--page", default=1, show_default=True, type=click.IntRange(min=1))
def conversion_list(search: str, status: str | None, players: str, page: int) -> None:
    """List conversions, newest first, 20 to a page."""
    _require_ready()
    with new_session() as session:
        window = conversions.search(
            session=session,
            studio_id=None,
            text=search,
            status=status or "",
            test=TEST_CHOICES.get(players),
            page=page,
        )
    _print_json(
        {
            "total": window.total,
            "page": window.page,
            "pages": window.pages,
            "conversions": [_conversion_json(row) for row in window.rows],
        }
    )
