"""The hosted wall: the page a publisher shows its players (api/routes/wall.py serves it)."""
