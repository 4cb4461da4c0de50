"""The network's economics: which payout applies (`terms.resolve`: country, offerwall,
default), an offerwall's payout rules (`payout_rules`), currency sales (`promotions`) and
budgets of revenue (`budgets`). docs/economics.md tells the rules in words.
"""

from api.economics.budgets import Budget, Burn, burn
from api.economics.errors import EconomicsError
from api.economics.promotions import Applied, PromotionIn, Sale, best
from api.economics.terms import NO_RULES, Resolved, Terms, WallRules, resolve

__all__ = [
    "NO_RULES",
    "Applied",
    "Budget",
    "Burn",
    "EconomicsError",
    "PromotionIn",
    "Resolved",
    "Sale",
    "Terms",
    "WallRules",
    "best",
    "burn",
    "resolve",
]
