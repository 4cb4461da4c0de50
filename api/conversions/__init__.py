"""Conversions after they are made: finding them, reversing one (`ledger`), and the
review queue of held conversions (`review`).
"""

from api.conversions.ledger import (
    REASON_MAX,
    REASON_MIN,
    ConversionError,
    ConversionRow,
    visible_ids,
)
from api.conversions.review import Decided, auto_approve

__all__ = [
    "REASON_MAX",
    "REASON_MIN",
    "ConversionError",
    "ConversionRow",
    "Decided",
    "auto_approve",
    "visible_ids",
]
