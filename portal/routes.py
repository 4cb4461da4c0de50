"""Every portal route in one place. The API owns /v2, /offerwall, /missions and /quests;
the portal lives beside them and never under those prefixes."""

from __future__ import annotations

from urllib.parse import quote

HOME = "/"
LOGIN = "/login"
SIGNUP = "/signup"
APPLICATION = "/account/application"
PUBLISHER = "/publisher"
PUBLISHER_POSTBACK = "/publisher/postback"
PUBLISHER_DELIVERIES = "/publisher/deliveries"
STAFF_PUBLISHERS = "/staff/publishers"
STAFF_STUDIOS = "/staff/studios"
GAMES = "/studio/games"
GAME = "/studio/game"
MISSIONS = "/studio/missions"
MISSION = "/studio/mission"
QUEST = "/studio/quest"
TESTER = "/studio/tester"
EVENTS = "/studio/events"
REPORTS = "/reports"
# The session's HTTP endpoints (portal/session_routes.py): sign-in, sign-up, sign-out.
AUTH = "/auth"


def login_for(next_path: str) -> str:
    return f"{LOGIN}?next={quote(next_path, safe='/?=&')}"


def safe_next(value: str | None, default: str) -> str:
    """Only a path on this site (no scheme, no //host) may be a redirect target."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return default


def home_for(role: str) -> str:
    return {"staff": STAFF_PUBLISHERS, "publisher": PUBLISHER, "designer": GAMES}.get(role, HOME)
