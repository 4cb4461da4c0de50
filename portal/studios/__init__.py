"""Studios and games in the portal: staff's studios, the games and their credentials (page.py;
states in state.py and games_state.py)."""
