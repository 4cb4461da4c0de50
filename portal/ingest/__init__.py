"""A game's Live events page (page.py): the events and identifiers the game sends, as they
arrive, and its state (state.py)."""
