"""Payouts: stored in millionths of a USD, shown and posted back in an offerwall's currency.

Every amount a person reads (the portal, the hosted wall, mail, CSV exports) is written by
`format_money`, from a `Decimal`, rounded half-up as postbacks round: a $1.505 payout
reads $1.51 everywhere, never $1.50 here and $1.505 there. The portal writes its amounts
through `portal/components/formatting.py`, which calls these."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

MICROS = Decimal(1_000_000)


def usd(payout_micros: int) -> Decimal:
    return Decimal(payout_micros) / MICROS


def rounded(amount: Decimal, decimals: int) -> Decimal:
    """`amount` to `decimals` places, half-up (the postbacks' rounding)."""
    return amount.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def in_currency(
    payout_micros: int, *, exchange_rate: float, decimals: int, multiplier: int = 100
) -> Decimal:
    """USD × the offerwall's rate (× a promotion's `multiplier`, in hundredths), rounded
    half-up to its decimals once."""
    amount = usd(payout_micros) * Decimal(str(exchange_rate))
    if multiplier != 100:
        amount = amount * multiplier / 100
    return rounded(amount, decimals)


def format_money(amount: Decimal, *, decimals: int = 2, code: str = "", plain: bool = False) -> str:
    """An amount for people, rounded half-up to `decimals`: "$1,234.51" in US dollars (no
    `code`), "1,234.5 GEM" with a currency's code, or with `plain` "1234.51" (a
    spreadsheet's cell, a value kept for later)."""
    value = rounded(amount, decimals)
    if plain:
        return f"{value:f}"
    if code:
        return f"{value:,f} {code}"
    return f"-${-value:,f}" if value < 0 else f"${value:,f}"


def format_usd(payout_micros: int) -> str:
    """A USD payout in cents, as people read it ("$1.51")."""
    return format_money(usd(payout_micros))


def multiplier_text(hundredths: int) -> str:
    """A promotion's multiplier (in hundredths) as people and the `{multiplier}` macro
    write it: "1", "2", "2.5", "1.25"."""
    return f"{(Decimal(hundredths) / 100).normalize():f}"
