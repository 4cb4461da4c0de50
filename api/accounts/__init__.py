"""Portal accounts: sign-in and sessions, passwords and their reset links, the sign-in
throttles, staff's management of accounts, and who may do what (`access`, asked by every
portal action on the server).
"""

from api.accounts.access import (
    Account,
    Forbidden,
    NotApproved,
    account_for,
    game_after_password,
    game_for,
    offerwall_after_password,
    offerwall_for,
    require,
)
from api.accounts.devices import SessionRow, end_other_sessions, end_session, list_sessions
from api.accounts.passwords import ResetThrottled, forgot_password, reset_password, reset_throttle
from api.accounts.reauth import PasswordRequired, confirm_password, password_fresh
from api.accounts.sessions import (
    SESSION_COOKIE,
    SESSION_MAX,
    AccountError,
    Client,
    LoginThrottled,
    account_problems,
    create_user,
    prune_sessions,
    sign_in,
    sign_out,
)
from api.accounts.throttle import IpThrottle
from api.accounts.totp import ChallengeEnded, CodeRefused, sign_in_with_code

__all__ = [
    "SESSION_COOKIE",
    "SESSION_MAX",
    "Account",
    "AccountError",
    "ChallengeEnded",
    "Client",
    "CodeRefused",
    "Forbidden",
    "IpThrottle",
    "LoginThrottled",
    "NotApproved",
    "PasswordRequired",
    "ResetThrottled",
    "SessionRow",
    "account_for",
    "account_problems",
    "confirm_password",
    "create_user",
    "end_other_sessions",
    "end_session",
    "forgot_password",
    "game_after_password",
    "game_for",
    "list_sessions",
    "offerwall_after_password",
    "offerwall_for",
    "password_fresh",
    "prune_sessions",
    "require",
    "reset_password",
    "reset_throttle",
    "sign_in",
    "sign_in_with_code",
    "sign_out",
]
