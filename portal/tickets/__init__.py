"""The Tickets page (page.py), its state (state.py) and how a ticket is worded for people
(words.py)."""
