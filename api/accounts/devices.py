"""An account's sessions, one per signed-in browser (the account's Sessions page): the
device as its User-Agent reads, where it signed in from, when, and when it was last
seen; ending one of them, or every one but this browser's. Each end is recorded
(`session.ended`). Staff end another account's sessions with `staff.end_all_sessions`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from sqlmodel import Session, col, select
from ua_parser import parse

from api.accounts import events, passwords
from api.accounts.access import Account, require
from api.accounts.sessions import AccountError, session_expired
from api.core.refusals import SignedOut
from models import PortalSession, User
from models.types import utcnow

GONE = "This session has already ended."


@dataclass(frozen=True)
class SessionRow:
    id: str
    device: str  # "Firefox 140 on Linux"; "Unknown browser" without a User-Agent
    ip: str
    country: str  # two letters, "" when unknown
    created_at: datetime  # signed in
    last_seen_at: datetime
    current: bool  # the browser asking


@lru_cache(maxsize=1024)
def device(user_agent: str | None) -> str:
    """The browser and operating system a User-Agent names, in words."""
    if not user_agent:
        return "Unknown browser"
    parsed = parse(user_agent[:1024])
    browser = parsed.user_agent.family if parsed.user_agent else ""
    if browser and parsed.user_agent and parsed.user_agent.major:
        browser = f"{browser} {parsed.user_agent.major}"
    system = parsed.os.family if parsed.os else ""
    if browser in ("", "Other"):
        browser = "Unknown browser"
    if system and system != "Other":
        return f"{browser} on {system}"
    return browser


def list_sessions(*, session: Session, account: Account) -> list[SessionRow]:
    """The account's open sessions, the most recently seen first."""
    account = require(account)
    now = utcnow()
    found = session.exec(
        select(PortalSession)
        .where(col(PortalSession.user_id) == account.id)
        .order_by(col(PortalSession.last_seen_at).desc(), col(PortalSession.id))
    ).all()
    return [
        SessionRow(
            id=s.id,
            device=device(s.user_agent),
            ip=s.ip or "",
            country=s.country or "",
            created_at=s.created_at,
            last_seen_at=s.last_seen_at,
            current=s.id == account.session_id,
        )
        for s in found
        if not session_expired(s, now)
    ]


def end_session(*, session: Session, account: Account, session_id: str) -> None:
    """End one other session of the account (this browser's ends by signing out). The
    same answer for a session that is gone and one of another account."""
    account = require(account)
    if session_id and session_id == account.session_id:
        raise AccountError("To end this browser's session, sign out.")
    ended = session.get(PortalSession, session_id) if session_id else None
    if ended is None or ended.user_id != account.id:
        raise AccountError(GONE)
    user = _user(session, account)
    session.delete(ended)
    session.flush()
    events.record(session, user, "", ended=[ended], how="ended")


def end_other_sessions(*, session: Session, account: Account) -> int:
    """End every session of the account but this browser's; returns how many ended."""
    account = require(account)
    user = _user(session, account)
    if not account.session_id:
        raise SignedOut()
    ended = passwords.end_sessions(session=session, user_id=user.id, keep_id=account.session_id)
    events.record(session, user, "", ended=ended, how="others_ended")
    return len(ended)


def _user(session: Session, account: Account) -> User:
    user = session.get(User, account.id)
    if user is None:
        raise SignedOut()
    return user
