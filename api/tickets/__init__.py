"""Support tickets: a player's "Missing reward?" report from the hosted wall with its
snapshot of what Questwall saw, and the desk where staff and publishers answer them.
"""

from api.tickets.report import ANSWER_MAX
from api.tickets.snapshot import ClickFacts, ConversionFacts, MissionFacts

__all__ = [
    "ANSWER_MAX",
    "ClickFacts",
    "ConversionFacts",
    "MissionFacts",
]
