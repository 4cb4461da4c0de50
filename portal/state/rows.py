"""Rows that more than one context's page shows: a conversion (the Conversions page and
the Fraud page's review queue) and an event an anti-cheat rule set aside (the Fraud page
and a game's live event debugger), each with its moments and money written."""

from __future__ import annotations

from dataclasses import dataclass

from api.conversions import ConversionRow
from api.fraud import FlagRow
from portal.components.formatting import minute, second, usd


@dataclass(frozen=True)
class ConversionLine:
    """A conversion as the Conversions page and the review queue show it
    (`ledger.ConversionRow` with its moments and payout written)."""

    id: int
    transaction_id: str
    created_at: str
    game: str
    mission: str
    mission_id: str
    publisher: str
    uid: str
    platform_user_id: str
    payout: str  # "$1.51"
    status: str
    reversed_at: str
    reversal_reason: str
    reversed_by: str
    signals: str
    review_due: str
    reviewed_by: str
    review_note: str
    test: bool  # the offerwall's test player's


def conversion_line(row: ConversionRow) -> ConversionLine:
    return ConversionLine(
        id=row.id,
        transaction_id=row.transaction_id,
        created_at=minute(row.created_at),
        game=row.game,
        mission=row.mission,
        mission_id=row.mission_id,
        publisher=row.publisher,
        uid=row.uid,
        platform_user_id=row.platform_user_id,
        payout=usd(row.payout_micros),
        status=row.status,
        reversed_at=minute(row.reversed_at),
        reversal_reason=row.reversal_reason,
        reversed_by=row.reversed_by,
        signals=row.signals,
        review_due=minute(row.review_due_at),
        reviewed_by=row.reviewed_by,
        review_note=row.review_note,
        test=row.test,
    )


@dataclass(frozen=True)
class FlagLine:
    """An event an anti-cheat rule set aside, as the Fraud page and the game's debugger
    list it (`FlagRow` with its moment written, to the second)."""

    at: str
    mission: str
    user_id: str
    event: str
    rule: str
    detail: str


def flag_line(row: FlagRow) -> FlagLine:
    return FlagLine(second(row.at), row.mission, row.user_id, row.event, row.rule, row.detail)
