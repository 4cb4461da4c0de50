"""Payouts: stored in millionths of a USD, shown and posted back in an offerwall's currency."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MICROS = Decimal(1_000_000)


def usd(payout_micros: int) -> Decimal:
    return Decimal(payout_micros) / MICROS


def in_currency(payout_micros: int, *, exchange_rate: float, decimals: int) -> Decimal:
    """USD × the offerwall's rate, rounded half-up to its decimals."""
    quantum = Decimal(1).scaleb(-decimals)
    return (usd(payout_micros) * Decimal(str(exchange_rate))).quantize(
        quantum, rounding=ROUND_HALF_UP
    )
