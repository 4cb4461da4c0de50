"""A publisher's Postback page and delivery log (page.py) and their states (state.py)."""
