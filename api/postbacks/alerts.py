"""The alert outbox: the notices `ALERT_WEBHOOK_URL` gets when an offerwall's deliveries
pause or resume, stored first and then posted, as mail is (`api/mail/outbox.py`).

`enqueue` adds a notice to the transaction that paused or resumed the offerwall, so an
alert exists exactly when that change committed. The senders (`AlertSender`, run by
`questwall serve` and `questwall worker` when the URL is set) are woken by the commit and
post it at once; an answer other than 2xx, or none, leaves it queued for the next attempt
after a pause (`RETRY_DELAYS`), and after the last one it has failed (logged). The URL is
the operator's own, but it is reached as postbacks are: through `api.core.egress`, so a
non-public address is refused at connect time unless POSTBACK_ALLOW_PRIVATE is set.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import Engine
from sqlmodel import Session

from api.core import outbox
from api.core.config import Settings
from api.core.db import write_session
from api.core.egress import refusal, total_timeout
from api.postbacks.transport import http_client
from models import AlertMessage, MailStatus
from models.types import utcnow

log = logging.getLogger("questwall.alerts")

# The pause before each next attempt; after the last one the alert has failed.
RETRY_DELAYS = (
    timedelta(seconds=30),
    timedelta(minutes=2),
    timedelta(minutes=10),
    timedelta(minutes=30),
    timedelta(hours=2),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE = timedelta(seconds=60)
BATCH = 20
# Sent and failed alerts are kept this long, then `questwall prune` removes them.
KEPT_FOR = timedelta(days=30)


def enqueue(session: Session, settings: Settings, notice: dict[str, Any]) -> None:
    """Store the notice (the webhook's JSON) in the caller's transaction when
    ALERT_WEBHOOK_URL is set; it is posted once that commits."""
    if not settings.alert_webhook_url:
        return
    session.add(AlertMessage(event=str(notice["event"]), body=json.dumps(notice)))
    outbox.queued(session, AlertSender.kind)


@dataclass(frozen=True)
class _Claimed:
    id: int
    body: str


def claim(engine: Engine, now: datetime, *, limit: int = BATCH) -> list[_Claimed]:
    """Take due queued alerts for this sender until the lease ends (another skips them)."""
    table = AlertMessage.__table__  # type: ignore[attr-defined]
    due = outbox.claim_due(engine, table, ("id", "body"), now=now, lease=LEASE, limit=limit)
    return [_Claimed(*row) for row in due]


def _record(engine: Engine, alert_id: int, error: str | None, now: datetime) -> None:
    """The outcome of one attempt: sent, or queued again after the next pause, or failed
    after the last one."""
    with write_session(engine) as session:
        alert = session.get(AlertMessage, alert_id)
        if alert is None:
            return
        alert.attempts += 1
        alert.lease_until = None
        alert.last_error = error
        if error is None:
            alert.status, alert.sent_at = MailStatus.SENT, now
        elif alert.attempts >= MAX_ATTEMPTS:
            alert.status = MailStatus.FAILED
            log.warning("alert %s given up after %d attempts: %s", alert_id, alert.attempts, error)
        else:
            alert.next_attempt_at = now + RETRY_DELAYS[alert.attempts - 1]
        session.add(alert)


class AlertSender(outbox.OutboxSender):
    """Posts queued alerts to ALERT_WEBHOOK_URL with the postbacks' egress checks."""

    kind = "alert"

    def __init__(self, *, engine: Engine, settings: Settings, poll: float = 15.0):
        super().__init__(poll=poll)
        self.engine, self.settings = engine, settings
        self._client = http_client

    def run_once(self, now: datetime | None = None) -> int:
        """Claim and post every due alert once (as of `now`); returns how many were tried."""
        now = now or utcnow()
        claimed = claim(self.engine, now)
        if claimed:
            with self._client(self.settings, pool=1) as client:
                for alert in claimed:
                    _record(self.engine, alert.id, self._post(client, alert), now)
        return len(claimed)

    def _post(self, client: httpx.Client, alert: _Claimed) -> str | None:
        """None when the webhook answered 2xx, else what went wrong (never the URL, which
        may hold a token)."""
        try:
            with total_timeout(self.settings.postback_total_timeout):
                answer = client.post(
                    self.settings.alert_webhook_url,
                    content=alert.body,
                    headers={
                        "Content-Type": "application/json",
                        "User-Agent": "Questwall-Alert/1.0",
                    },
                )
        except httpx.HTTPError as exc:
            reason = refusal(exc) or type(exc).__name__
            log.warning("alert %s not posted: %s", alert.id, reason)
            return f"No answer: {reason}"[:500]
        if not answer.is_success:
            log.warning("alert %s answered %d", alert.id, answer.status_code)
            return f"HTTP {answer.status_code}"
        return None


def prune(session: Session, now: datetime) -> int:
    """Delete sent and failed alerts older than `KEPT_FOR`."""
    return outbox.prune_done(session, AlertMessage.__table__, now, KEPT_FOR)  # type: ignore[attr-defined]
