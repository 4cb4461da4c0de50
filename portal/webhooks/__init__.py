"""A game's webhooks: the endpoints, their messages and replays (page.py), and their states
(state.py)."""
