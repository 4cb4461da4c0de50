"""The staff dashboard: what needs staff's attention when they sign in.

Pending applications, today's figures (the reports' own, for the UTC day), the support
tickets waiting for an answer, the offerwalls whose postbacks are failing and those whose
deliveries are paused (`endpoints.paused_endpoints`), and the alerts for ALERT_WEBHOOK_URL
that failed or are being retried, with their attempts (`api/postbacks/alerts.py`). As in
reports, today's conversions and payout include those reversed since, and reversed and net
payout count the reversals of today's conversions only: a reversal of an older conversion
counts on that conversion's day. Each figure is one indexed query: offerwalls by status
(`ix_offerwall_status`), clicks and conversions by time (`ix_click_created`,
`ix_conversion_created`), postbacks by status and due time (`ix_postback_due`), alerts by
status (`ix_alert_message_due`) and their attempts by alert; the tickets are one count of
their small table."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col

from api.accounts import Account, require
from api.postbacks import alerts as alert_outbox
from api.postbacks import endpoint as endpoints
from api.reports import figures as reports
from api.tickets import desk
from models import Offerwall, OfferwallStatus, Postback, PostbackStatus, Role

# A postback that failed for good counts while its last attempt is this recent.
FAILING_WINDOW = timedelta(hours=24)
MAX_FAILING = 10


@dataclass(frozen=True)
class FailingEndpoint:
    """An offerwall whose postbacks are retrying or failed within FAILING_WINDOW."""

    offerwall_id: str
    company: str
    retrying: int
    failed: int
    last_due: datetime  # when the latest of them was (or is) due


@dataclass(frozen=True)
class PausedEndpoint:
    """An offerwall whose deliveries are paused until its publisher (or staff) resumes."""

    offerwall_id: str
    company: str
    paused_since: datetime
    failures: int  # attempts failed in a row
    queued: int  # postbacks waiting


@dataclass(frozen=True)
class Dashboard:
    pending_applications: int
    day: str  # the UTC day of the figures, YYYY-MM-DD
    today: reports.ReportRow
    failing: list[FailingEndpoint]
    paused: list[PausedEndpoint]
    # Players' support tickets that wait for an answer, every offerwall's.
    open_tickets: int = 0
    # The newest alerts that failed or are retried, and how many there are in all.
    alerts: list[alert_outbox.FailingAlert] = field(default_factory=list)
    failing_alerts: int = 0


def pending_applications(*, session: Session) -> int:
    return session.execute(
        sa.select(sa.func.count()).where(col(Offerwall.status) == OfferwallStatus.PENDING)
    ).scalar_one()


def failing_endpoints(*, session: Session, now: datetime) -> list[FailingEndpoint]:
    """Offerwalls with postbacks being retried (pending after a failed attempt) or failed
    within the last day, most failures first."""
    status, due = col(Postback.status), col(Postback.next_attempt_at)
    retrying = sa.and_(status == PostbackStatus.PENDING, col(Postback.attempts) > 0)
    failed = sa.and_(status == PostbackStatus.FAILED, due >= now - FAILING_WINDOW)
    counted = (
        sa.select(
            col(Postback.offerwall_id),
            sa.func.sum(sa.case((retrying, 1), else_=0)).label("retrying"),
            sa.func.sum(sa.case((failed, 1), else_=0)).label("failed"),
            sa.func.max(due).label("last_due"),
        )
        .where(sa.or_(retrying, failed))
        .group_by(col(Postback.offerwall_id))
        .subquery()
    )
    rows = session.execute(
        sa.select(counted, col(Offerwall.name))
        .join(Offerwall, col(Offerwall.id) == counted.c.offerwall_id)
        .order_by((counted.c.retrying + counted.c.failed).desc(), col(Offerwall.name))
        .limit(MAX_FAILING)
    ).all()
    return [
        FailingEndpoint(wall_id, name, int(n_r or 0), int(n_f or 0), last)
        for wall_id, n_r, n_f, last, name in rows
    ]


def paused_endpoints(*, session: Session) -> list[PausedEndpoint]:
    """Every paused offerwall, longest paused first."""
    return [
        PausedEndpoint(
            paused.offerwall_id,
            paused.name,
            paused.paused_at,
            paused.failures,
            paused.queued,
        )
        for paused in endpoints.paused_endpoints(session)
    ]


def staff_dashboard(*, session: Session, account: Account, now: datetime) -> Dashboard:
    """The staff dashboard's figures at `now` (UTC). Staff only."""
    require(account, Role.STAFF)
    day = now.astimezone(UTC).date()
    failing_alerts, alerts_in_all = alert_outbox.failing(session=session)
    return Dashboard(
        pending_applications=pending_applications(session=session),
        day=day.isoformat(),
        today=reports.day_totals(session=session, account=account, day=day),
        failing=failing_endpoints(session=session, now=now),
        paused=paused_endpoints(session=session),
        open_tickets=desk.open_count(session, account=account),
        alerts=failing_alerts,
        failing_alerts=alerts_in_all,
    )
