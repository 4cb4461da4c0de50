"""The alert outbox: the notices `ALERT_WEBHOOK_URL` gets when an offerwall's deliveries
pause or resume, stored first and then posted, as mail is (`api/mail/outbox.py`).

`enqueue` adds a notice to the transaction that paused or resumed the offerwall, so an
alert exists exactly when that change committed. The senders (`AlertSender`, run by
`questwall serve` and `questwall worker` when the URL is set) are woken by the commit and
post it at once; every attempt is kept (`AlertAttempt`: the answer's status and its first
KiB, or the error), and an answer other than 2xx, or none, leaves the alert queued for the
next attempt after a pause (`RETRY_DELAYS`); after the last one it has failed (logged).
Staff see the failed and failing alerts with their attempts on their dashboard (`failing`)
and send one again (`send_again`, staff only). The URL is the operator's own, but it is
reached as postbacks are: through `api.core.egress`, so a non-public address is refused
at connect time unless POSTBACK_ALLOW_PRIVATE is set; the URL (it may hold a token) is
never logged nor stored with an attempt.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

import httpx
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, col

from api.accounts import Account, require
from api.core import outbox
from api.core.config import Settings
from api.core.db import write_session
from api.core.refusals import DomainError
from api.ops import delivered_on_commit
from api.postbacks import transport
from api.postbacks.transport import AttemptResult, count_result, http_client
from models import AlertAttempt, AlertMessage, MailStatus, Role
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
# What an attempt's error keeps, and the failing alerts the staff dashboard lists.
ERROR_CHARS = 500
MAX_FAILING = 10
_alert: sa.Table = AlertMessage.__table__  # type: ignore[attr-defined]


class AlertError(DomainError, ValueError):
    """An alert that cannot be sent again: unknown, delivered, or being sent right now."""


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
    due = outbox.claim_due(engine, _alert, ("id", "body"), now=now, lease=LEASE, limit=limit)
    return [_Claimed(*row) for row in due]


def _problem(result: AttemptResult) -> str | None:
    """None when the webhook answered 2xx, else what went wrong in a few words."""
    if result.delivered:
        return None
    if result.status_code is not None:
        return f"HTTP {result.status_code}"
    return f"No answer: {result.error or 'none'}"[:ERROR_CHARS]


def _record(engine: Engine, alert_id: int, result: AttemptResult, now: datetime) -> None:
    """The attempt, and what it did to the alert: sent, or queued again after the next
    pause, or failed after the last one."""
    error = _problem(result)
    with write_session(engine) as session:
        alert = session.get(AlertMessage, alert_id)
        if alert is None:
            return
        session.add(
            AlertAttempt(
                alert_id=alert_id,
                started_at=now,
                duration_ms=result.duration_ms,
                status_code=result.status_code,
                body_excerpt=result.body_excerpt,
                error=result.error[:ERROR_CHARS] if result.error else None,
                sent=result.sent,
            )
        )
        alert.attempts += 1
        alert.lease_until = None
        alert.last_error = error
        if error is None:
            alert.status, alert.sent_at = MailStatus.SENT, now
            delivered_on_commit(session, "alert", alert.created_at, now)
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
                    result = self._post(client, alert)
                    _record(self.engine, alert.id, result, now)
                    count_result("alert", result)
        return len(claimed)

    def _post(self, client: httpx.Client, alert: _Claimed) -> AttemptResult:
        """One POST of the alert, its answer's start kept; an error never names the URL,
        which may hold a token."""
        url = self.settings.alert_webhook_url
        result = transport.post(
            client,
            url,
            body=alert.body.encode(),
            headers={"Content-Type": "application/json", "User-Agent": "Questwall-Alert/1.0"},
            allow_private=self.settings.postback_allow_private,
        )
        if url and result.error and url in result.error:
            result = replace(result, error=result.error.replace(url, "ALERT_WEBHOOK_URL"))
        if result.status_code is None:
            log.warning("alert %s not posted: %s", alert.id, result.error)
        elif not result.delivered:
            log.warning("alert %s answered %d", alert.id, result.status_code)
        return result


# --- what staff see of it ---------------------------------------------------------


@dataclass(frozen=True)
class AttemptRow:
    """One attempt as the staff dashboard lists it."""

    started_at: datetime
    status_code: int | None
    duration_ms: int
    answer: str  # the first KiB of the answer
    error: str
    sent: bool


@dataclass(frozen=True)
class FailingAlert:
    """An alert given up (failed) or being retried after a failed attempt, with every
    attempt, first to last."""

    id: int
    event: str  # "endpoint.paused", "endpoint.resumed"
    offerwall: str  # the notice's offerwall's name, as it was sent
    status: str  # "failed", or "queued" while it is retried
    created_at: datetime
    next_attempt_at: datetime | None  # a queued one's next attempt
    last_error: str
    attempts: list[AttemptRow]


def failing(*, session: Session, limit: int = MAX_FAILING) -> tuple[list[FailingAlert], int]:
    """The newest alerts that failed or are being retried after a failed attempt (at most
    `limit`, with their attempts), and how many there are."""
    troubled = sa.or_(
        col(AlertMessage.status) == MailStatus.FAILED,
        sa.and_(
            col(AlertMessage.status) == MailStatus.QUEUED,
            col(AlertMessage.last_error).is_not(None),
        ),
    )
    count = session.execute(sa.select(sa.func.count()).where(troubled)).scalar_one()
    alerts = session.scalars(
        sa.select(AlertMessage).where(troubled).order_by(col(AlertMessage.id).desc()).limit(limit)
    ).all()
    tried: dict[int, list[AttemptRow]] = {}
    for a in session.scalars(
        sa.select(AlertAttempt)
        .where(col(AlertAttempt.alert_id).in_([alert.id for alert in alerts]))
        .order_by(col(AlertAttempt.id))
    ):
        tried.setdefault(a.alert_id, []).append(
            AttemptRow(
                a.started_at,
                a.status_code,
                a.duration_ms,
                a.body_excerpt or "",
                a.error or "",
                a.sent,
            )
        )
    return [
        FailingAlert(
            id=alert.id or 0,
            event=alert.event,
            offerwall=_offerwall_of(alert.body),
            status=alert.status,
            created_at=alert.created_at,
            next_attempt_at=alert.next_attempt_at if alert.status == MailStatus.QUEUED else None,
            last_error=alert.last_error or "",
            attempts=tried.get(alert.id or 0, []),
        )
        for alert in alerts
    ], int(count)


def _offerwall_of(body: str) -> str:
    """The offerwall's name a notice carries (`endpoint.Notice.json`; "" without one)."""
    try:
        notice = json.loads(body)
    except ValueError:
        return ""
    name = notice.get("name") if isinstance(notice, dict) else None
    return str(name) if name else ""


def send_again(*, session: Session, account: Account | None, alert_id: int, now: datetime) -> None:
    """Staff only: queue a failed or failing alert for one more attempt now (its attempts
    are kept; if this one fails too, it has failed again). A delivered alert, or one being
    sent right now, is refused; an unknown one too."""
    require(account, Role.STAFF)
    queued = session.execute(
        sa.update(_alert)
        .where(
            _alert.c.id == alert_id,
            _alert.c.status != MailStatus.SENT,
            sa.or_(_alert.c.lease_until.is_(None), _alert.c.lease_until < now),
        )
        .values(
            status=MailStatus.QUEUED,
            next_attempt_at=now,
            lease_until=None,
            attempts=sa.case(
                (_alert.c.attempts >= MAX_ATTEMPTS, MAX_ATTEMPTS - 1), else_=_alert.c.attempts
            ),
        )
    )
    if queued.rowcount == 1:  # type: ignore[attr-defined]
        outbox.queued(session, AlertSender.kind)
        return
    status = session.execute(sa.select(_alert.c.status).where(_alert.c.id == alert_id)).scalar()
    if status is None:
        raise AlertError("No such alert.")
    if status == MailStatus.SENT:
        raise AlertError("This alert was delivered: there is nothing to send again.")
    raise AlertError("This alert is being sent right now; look again in a moment.")


def prune(session: Session, now: datetime) -> int:
    """Delete sent and failed alerts older than `KEPT_FOR` (their attempts with them)."""
    return outbox.prune_done(session, _alert, now, KEPT_FOR)
