"""The account's Sessions page, for every role: each browser signed in to the account,
this one marked; end one, or every other. `api/accounts/devices.py` checks, on the server,
that each session is the account's own."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import reflex as rx
from sqlmodel import Session

from api.accounts import Account, SessionRow, devices
from api.core.countries import country
from models.types import utcnow
from portal.components.formatting import ago, when
from portal.state.auth import AuthState, refusals


@dataclass(frozen=True)
class SessionLine:
    """A session as the page shows it."""

    id: str
    device: str
    where: str  # the IP address and its country's name ("203.0.113.9 · France")
    signed_in: str
    last_seen: str  # "Active now" for this browser, else "Last seen 12 min ago"
    current: bool


def session_line(row: SessionRow, now: datetime | None = None) -> SessionLine:
    return SessionLine(
        id=row.id,
        device=row.device,
        where=" · ".join(
            part
            for part in (
                row.ip or "unknown address",
                country(row.country).name if row.country else "",
            )
            if part
        ),
        signed_in=when(row.created_at),
        last_seen="Active now"
        if row.current
        else "Last seen " + ago(row.last_seen_at, now or utcnow()),
        current=row.current,
    )


class SessionsState(AuthState):
    rows: list[SessionLine] = []
    ending: str = ""  # the session whose "End" is on its way ("others": end all others)

    @rx.var
    def others(self) -> int:
        return sum(1 for r in self.rows if not r.current)

    @rx.event
    @refusals()
    async def load(self):
        self.ending = ""
        return await self._load_page()

    async def _fetch(self) -> None:
        found = await self._run(lambda s, a: devices.list_sessions(session=s, account=a))
        now = utcnow()
        # This browser first, then the others as recently seen.
        self.rows = [session_line(r, now) for r in sorted(found, key=lambda r: not r.current)]

    @rx.event
    @refusals()
    async def end(self, session_id: str):
        """End one other session: that browser is signed out at its next step."""
        self.ending = session_id
        yield
        try:

            def work(session: Session, account: Account) -> None:
                devices.end_session(session=session, account=account, session_id=session_id)

            await self._run(work, write=True)
        finally:
            self.ending = ""
        await self._fetch()
        yield rx.toast.success("Session ended: that browser is signed out.")

    @rx.event
    @refusals()
    async def end_others(self):
        self.ending = "others"
        yield
        try:
            ended = await self._run(
                lambda s, a: devices.end_other_sessions(session=s, account=a), write=True
            )
        finally:
            self.ending = ""
        await self._fetch()
        yield rx.toast.success(
            f"{ended} other session{'s' * (ended != 1)} ended."
            if ended
            else "No other browser was signed in."
        )
