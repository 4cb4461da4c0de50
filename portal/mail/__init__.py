"""Staff's mail outbox page (page.py) and its state (state.py)."""
