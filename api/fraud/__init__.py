"""Fraud screening's rules: the risk signals and what each does (`policy`, per offerwall
and stricter per mission), staff's blocklist and each offerwall's rules.
"""

from api.fraud.cheat_flags import FlagRow, cheat_flags
from api.fraud.policy import (
    DEFAULT_POLICY,
    DESCRIPTIONS,
    SIGNALS,
    FraudRuleError,
    Policy,
    strictest,
)
from api.fraud.rules import OfferwallRules, offerwall_rules, set_offerwall_rules

__all__ = [
    "DEFAULT_POLICY",
    "DESCRIPTIONS",
    "SIGNALS",
    "FlagRow",
    "FraudRuleError",
    "OfferwallRules",
    "Policy",
    "cheat_flags",
    "offerwall_rules",
    "set_offerwall_rules",
    "strictest",
]
