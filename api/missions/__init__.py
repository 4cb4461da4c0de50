"""Missions and quests: the one owner of their rules (`offers`), the rule engine (`rules`)
and a rule in words (`rule_words`), players' progress and the conversions it makes
(`progress`), the in-memory index of active missions (`index`), the open-offer predicate,
the editor's forms and use cases (`forms`, `editor`), the rule tester (`rule_tester`,
`tester_events`, `tester_replay`), the missions list (`offer_rows`, `live_badges`), the
game's budget (`game_budget`) and each mission's funnel.
"""

from api.missions.forms import PICKERS, TYPED, form_values
from api.missions.index import INDEX, bump
from api.missions.offers import OfferError, mission_rule, rule_of, standing
from api.missions.progress import evaluate_events, pay_waiting, replay_for_link
from api.missions.rule_words import summary
from api.missions.rules import plain_number

__all__ = [
    "INDEX",
    "PICKERS",
    "TYPED",
    "OfferError",
    "bump",
    "evaluate_events",
    "form_values",
    "mission_rule",
    "pay_waiting",
    "plain_number",
    "replay_for_link",
    "rule_of",
    "standing",
    "summary",
]
