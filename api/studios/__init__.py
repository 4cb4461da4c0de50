"""Studios, their designers, their games, and the games' signing credentials."""
