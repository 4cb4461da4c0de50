"""SQLModel tables shared by the API and the portal. Imports no web framework."""

from models.events import Event, IdempotencyRecord, SignedRequest
from models.games import Game, GameCredential
from models.players import GameUser, GameUserIdentifier, PlatformUser, PlatformUserIdentifier

__all__ = [
    "Event",
    "Game",
    "GameCredential",
    "GameUser",
    "GameUserIdentifier",
    "IdempotencyRecord",
    "PlatformUser",
    "PlatformUserIdentifier",
    "SignedRequest",
]
