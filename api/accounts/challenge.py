"""The sign-in's second step: after a right password, an account with two-factor sign-in
gets a short-lived challenge instead of a session (portal/session_routes.py keeps it in an
HttpOnly cookie). The challenge names the account and when it ends, sealed with the
master key and bound to the account, so a browser can neither read nor forge nor stretch
it; `api.accounts.totp.sign_in_with_code` takes it with the code and opens the session."""

from __future__ import annotations

from datetime import datetime, timedelta

from api.core.crypto import SIGN_IN_CHALLENGE, SecretBox

# How long the code may be entered after the password.
LIFETIME = timedelta(minutes=5)


def issue(box: SecretBox, user_id: str, now: datetime) -> str:
    """A challenge for `user_id`, good until `now` + `LIFETIME`."""
    until = str(int((now + LIFETIME).timestamp()))
    return f"{user_id}.{box.seal(until, context=SIGN_IN_CHALLENGE, row=user_id)}"


def account_of(box: SecretBox, challenge: str, now: datetime) -> str | None:
    """The account id a challenge names, or None when it is not one of ours or has ended."""
    user_id, _, sealed = challenge.partition(".")
    if not user_id or not sealed:
        return None
    try:
        until = int(box.open(sealed, context=SIGN_IN_CHALLENGE, row=user_id))
    except (ValueError, UnicodeDecodeError):
        return None
    return user_id if now.timestamp() < until else None
