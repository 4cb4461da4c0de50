"""Studios, their designers, their games, and the games' signing credentials."""

from api.studios.games import create_game

__all__ = [
    "create_game",
]
