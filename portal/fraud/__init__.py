"""The Fraud page (page.py, one module per section: review.py, overview.py, blocklist.py,
rules.py) and its state (state.py)."""
