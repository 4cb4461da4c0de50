"""Publishers in the portal: staff's Publishers page (publishers.py), a publisher's own
workspace (publisher.py) and its hosted wall's settings (wall.py)."""
