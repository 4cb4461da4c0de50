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
from api.accounts.passwords import ResetThrottled, forgot_password, reset_password, reset_throttle
from api.accounts.sessions import (
    SESSION_COOKIE,
    SESSION_MAX,
    AccountError,
    LoginThrottled,
    account_problems,
    create_user,
    prune_sessions,
    sign_in,
    sign_out,
)
from api.accounts.throttle import IpThrottle

__all__ = [
    "SESSION_COOKIE",
    "SESSION_MAX",
    "Account",
    "AccountError",
    "Forbidden",
    "IpThrottle",
    "LoginThrottled",
    "NotApproved",
    "ResetThrottled",
    "account_for",
    "account_problems",
    "create_user",
    "forgot_password",
    "game_after_password",
    "game_for",
    "offerwall_after_password",
    "offerwall_for",
    "prune_sessions",
    "require",
    "reset_password",
    "reset_throttle",
    "sign_in",
    "sign_out",
]
