"""Every portal route in one place. The API owns /v2, /offerwall, /missions and /quests;
the portal lives beside them and never under those prefixes."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

HOME = "/"
LOGIN = "/login"
# The sign-in's second step, for an account with two-factor sign-in.
LOGIN_CODE = "/login/code"
SIGNUP = "/signup"
APPLICATION = "/account/application"
PUBLISHER = "/publisher"
PUBLISHER_POSTBACK = "/publisher/postback"
PUBLISHER_DELIVERIES = "/publisher/deliveries"
PUBLISHER_WALL = "/publisher/wall"
PUBLISHER_PROMOTIONS = "/publisher/promotions"
STAFF_PUBLISHERS = "/staff/publishers"
STAFF_OFFERWALL = "/staff/publishers/offerwall"
STAFF = "/staff"
PUBLISHER_OFFERS = "/publisher/offers"
STAFF_STUDIOS = "/staff/studios"
STUDIO = "/studio"
GAMES = f"{STUDIO}/games"
GAME = "/studio/game"
MISSIONS = "/studio/missions"
MISSION = "/studio/mission"
QUEST = "/studio/quest"
TESTER = "/studio/tester"
EVENTS = "/studio/events"
WEBHOOKS = "/studio/webhooks"
WEBHOOK = "/studio/webhook"
REPORTS = "/reports"
REPORTS_MARGIN = "/reports/margin"
CONVERSIONS = "/conversions"
FRAUD = "/fraud"
TICKETS = "/tickets"
ACCOUNT = "/account"
ACCOUNT_SESSIONS = "/account/sessions"
FORGOT_PAGE = "/forgot-password"
RESET_PAGE = "/reset-password"
STAFF_USERS = "/staff/users"
STAFF_MAIL = "/staff/mail"
STAFF_SYSTEM = "/staff/system"
# The audit trail: staff's Audit log (the API's /staff/audit is its JSON), the History of
# a publisher, a game or a mission, and a publisher's or a studio's Security log.
STAFF_AUDIT = "/staff/audit-log"
PUBLISHER_HISTORY = "/publisher/history"
PUBLISHER_SECURITY = "/publisher/security"
GAME_HISTORY = "/studio/history"
STUDIO_SECURITY = "/studio/security"
# The session's HTTP routes (portal/session_routes.py): sign-in, sign-up, sign-out.
AUTH = "/auth"
SIGN_IN = f"{AUTH}/sign-in"
SIGN_IN_CODE = f"{AUTH}/sign-in/code"
SIGN_UP = f"{AUTH}/sign-up"
SIGN_OUT = f"{AUTH}/sign-out"
FORGOT = f"{AUTH}/forgot-password"
RESET = f"{AUTH}/reset-password"

# The builders below take a plain string or a Reflex Var (a row's id in a page), so the
# pages and the states build a path the same way; `+` keeps both working.


def with_game(path: str, game_id: Any) -> Any:
    """A per-game page (`?game=<id>`)."""
    return f"{path}?game=" + game_id


def game(game_id: Any) -> Any:
    return with_game(GAME, game_id)


def missions(game_id: Any) -> Any:
    return with_game(MISSIONS, game_id)


def mission(game_id: Any, mission_id: Any) -> Any:
    return with_game(MISSION, game_id) + "&mission=" + mission_id


def quest(game_id: Any, quest_id: Any) -> Any:
    return with_game(QUEST, game_id) + "&quest=" + quest_id


def webhook(game_id: Any, endpoint_id: Any) -> Any:
    """One webhook endpoint of a game: its test event, secret and delivery log."""
    return with_game(WEBHOOK, game_id) + "&endpoint=" + endpoint_id


def mission_history(game_id: Any, mission_id: Any) -> Any:
    """A mission's History: the audit events about it."""
    return with_game(GAME_HISTORY, game_id) + "&mission=" + mission_id


def studio_security(studio_id: Any) -> Any:
    """A studio's Security log as staff open it."""
    return STUDIO_SECURITY + "?studio=" + studio_id


def tester(game_id: Any, mission_id: Any) -> Any:
    """The rule tester, opened on a mission's rule."""
    return with_game(TESTER, game_id) + "&mission=" + mission_id


def publishers_with_status(status: str) -> str:
    """The staff queue of publishers, filtered on a status."""
    return f"{STAFF_PUBLISHERS}?status={status}"


def deliveries(offerwall_id: Any, status: str = "") -> Any:
    """A publisher's delivery log as staff open it, filtered on a status."""
    return (
        PUBLISHER_DELIVERIES
        + offerwall_query(offerwall_id)
        + (f"&status={status}" if status else "")
    )


def offerwall_query(offerwall_id: Any) -> Any:
    """What staff append to workspace links to stay on the publisher they opened."""
    return "?offerwall=" + offerwall_id


def publisher(offerwall_id: Any) -> Any:
    """A publisher's workspace as staff open it."""
    return PUBLISHER + offerwall_query(offerwall_id)


def staff_offerwall(offerwall_id: Any) -> Any:
    """An offerwall's staff page: its publisher and its payout rules."""
    return STAFF_OFFERWALL + offerwall_query(offerwall_id)


def tracking_link_template(base_url: str, owid: str) -> str:
    """The API's tracking link as the workspace shows it, with its placeholders."""
    return f"{base_url}/missions/{{mission_id}}?owid={owid}&uid={{uid}}"


def login_for(next_path: str) -> str:
    return f"{LOGIN}?next={quote(next_path, safe='/')}"


def safe_next(value: str | None, default: str) -> str:
    """Only a path on this site (no scheme, no //host) may be a redirect target."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return default


def home_for(role: str) -> str:
    return {"staff": STAFF, "publisher": PUBLISHER, "designer": GAMES}.get(role, HOME)
