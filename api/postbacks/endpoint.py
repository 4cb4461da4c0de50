"""A publisher's postback endpoint: the secret that signs its postbacks, and its health.

Signing (docs/publisher-integration.md#signatures): every offerwall has a postback signing
secret, sealed at rest, separate from its API key. It is shown once; rotating it shows the
new one, and the old one keeps signing beside it for the overlap the publisher picks.

Health (docs/publisher-integration.md#pausing): the dispatcher reports every attempt here.
An offerwall whose every attempt has failed for `POSTBACK_PAUSE_AFTER_SECONDS` (and at
least `POSTBACK_PAUSE_MIN_FAILURES` in a row) is paused: its postbacks stay queued, none
is sent or dropped, its publisher is mailed, staff see it. Resuming releases the queue in
order at `POSTBACK_RESUME_RATE` per second. `ALERT_WEBHOOK_URL` hears of both, through
the alert outbox (`api/postbacks/alerts.py`).

Why one module of this size: the secret and the health are the two halves of the endpoint's
row (`offerwall`'s postback columns), and every statement that writes them is here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from api import audit
from api.core.config import Settings
from api.core.crypto import SecretBox, new_token, open_signing_secret, seal_signing_secret
from api.core.refusals import DomainError
from api.core.wording import counted
from api.mail import outbox as mail
from api.postbacks import alerts
from models import Offerwall, Postback, PostbackAttempt, PostbackStatus, User
from models.tables import postback as _postback
from models.types import utcnow

log = logging.getLogger("questwall.endpoints")

SECRET_PREFIX = "qw_ps_"  # noqa: S105 (a prefix, not a secret)
# How long a replaced secret (or API key) keeps working: none is for one that leaked.
OVERLAP: dict[str, timedelta] = {
    "none": timedelta(0),
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
}
WORKSPACE_PATH = "/publisher/postback"
LAST_ERRORS = 5


class EndpointError(DomainError, ValueError):
    """A step on the offerwall's postbacks the rules refuse: the signing secret, pause and
    resume, the test postback (api/postbacks/trial.py), a postback that is not the
    offerwall's (api/postbacks/delivery_log.py)."""


# --- the signing secret -------------------------------------------------------------


def new_signing_secret(box: SecretBox, offerwall: Offerwall) -> str:
    """Give the offerwall a new current secret (not yet shown); returns it."""
    if offerwall.owid is None:
        raise EndpointError("The offerwall has no signing secret until it is approved.")
    secret = new_token(SECRET_PREFIX)
    offerwall.signing_secret_sealed = seal_signing_secret(box, secret, owid=offerwall.owid)
    offerwall.signing_secret_shown_at = None
    return secret


def reveal_signing_secret(*, session: Session, box: SecretBox, offerwall: Offerwall) -> str:
    """The current secret, once: afterwards only a rotation shows one. An offerwall
    approved before secrets existed gets its first one here."""
    if offerwall.signing_secret_shown_at is not None:
        raise EndpointError(
            "The signing secret was shown once already. Rotate it to get a new one."
        )
    if offerwall.signing_secret_sealed is None or offerwall.owid is None:
        secret = new_signing_secret(box, offerwall)
    else:
        secret = open_signing_secret(box, offerwall.signing_secret_sealed, owid=offerwall.owid)
    offerwall.signing_secret_shown_at = utcnow()
    session.add(offerwall)
    session.flush()
    # Who saw it, and when: never the secret.
    audit.note(session, "offerwall.signing_secret_revealed", audit.Target.offerwall(offerwall))
    return secret


def rotate_signing_secret(
    *, session: Session, box: SecretBox, offerwall: Offerwall, overlap: str
) -> str:
    """A new secret, shown now. The old one signs beside it for `overlap` (none, 1h, 24h)."""
    if overlap not in OVERLAP:
        raise EndpointError("The overlap is none, 1h or 24h.")
    period = OVERLAP[overlap]
    previous = offerwall.signing_secret_sealed if period else None
    secret = new_signing_secret(box, offerwall)
    offerwall.signing_secret_previous_sealed = previous
    offerwall.signing_secret_previous_until = utcnow() + period if previous else None
    offerwall.signing_secret_shown_at = utcnow()
    session.add(offerwall)
    session.flush()
    # Recorded as rotated, with the overlap picked: neither secret is a value.
    audit.note(
        session,
        "offerwall.signing_secret_rotated",
        audit.Target.offerwall(offerwall),
        {"overlap": [None, overlap]},
    )
    return secret


def signing_secrets(
    box: SecretBox, row: Any, *, now: datetime | None = None, cache: dict[str, str] | None = None
) -> tuple[str, ...]:
    """The secrets that sign the offerwall's postbacks now, the current one first. `row`
    has owid, signing_secret_sealed, signing_secret_previous_sealed and _until."""
    now = now or utcnow()
    cache = {} if cache is None else cache
    sealed = [row.signing_secret_sealed]
    until = row.signing_secret_previous_until
    if row.signing_secret_previous_sealed and until is not None and until > now:
        sealed.append(row.signing_secret_previous_sealed)
    opened = []
    for value in sealed:
        if value and row.owid:
            if value not in cache:
                cache[value] = open_signing_secret(box, value, owid=row.owid)
            opened.append(cache[value])
    return tuple(opened)


def secret_overlap_until(offerwall: Offerwall) -> datetime | None:
    """Until when the replaced signing secret still signs, or None."""
    until = offerwall.signing_secret_previous_until
    if offerwall.signing_secret_previous_sealed is None or until is None or until <= utcnow():
        return None
    return until


# --- health ---------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One recorded attempt, as health counts it."""

    offerwall_id: str
    started_at: datetime
    failed: bool
    error: str


@dataclass(frozen=True)
class Notice:
    """An offerwall's deliveries paused or resumed (the alert webhook's JSON)."""

    event: str  # "endpoint.paused" or "endpoint.resumed"
    offerwall_id: str
    owid: str
    name: str
    at: datetime
    failing_since: datetime | None
    failures: int
    last_error: str

    def json(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "offerwallId": self.offerwall_id,
            "owid": self.owid,
            "name": self.name,
            "at": self.at.isoformat(),
            "failingSince": self.failing_since.isoformat() if self.failing_since else None,
            "consecutiveFailures": self.failures,
            "lastError": self.last_error,
        }


def record_outcomes(
    session: Session, outcomes: Iterable[Outcome], settings: Settings, now: datetime
) -> list[Notice]:
    """Count the attempts into their offerwalls' health (in the caller's transaction) and
    pause those past the threshold; returns the pauses, to be announced after commit."""
    by_wall: dict[str, list[Outcome]] = {}
    for outcome in sorted(outcomes, key=lambda o: o.started_at):
        by_wall.setdefault(outcome.offerwall_id, []).append(outcome)
    if not by_wall:
        return []
    failing = [wall_id for wall_id, seen in by_wall.items() if any(o.failed for o in seen)]
    # Only offerwalls whose count changes are locked (in id order: no deadlock between
    # dispatchers); a healthy offerwall's success writes nothing.
    walls = session.scalars(
        select(Offerwall)
        .where(
            col(Offerwall.id).in_(list(by_wall)),
            sa.or_(col(Offerwall.id).in_(failing), col(Offerwall.consecutive_failures) > 0),
        )
        .order_by(col(Offerwall.id))
        .with_for_update()
    ).all()
    notices = []
    threshold = timedelta(seconds=settings.postback_pause_after_seconds)
    for wall in walls:
        failures, since = wall.consecutive_failures, wall.failing_since
        for outcome in by_wall[wall.id]:
            if outcome.failed:
                failures, since = failures + 1, since or outcome.started_at
            else:
                failures, since = 0, None
        if (failures, since) == (wall.consecutive_failures, wall.failing_since):
            continue
        wall.consecutive_failures, wall.failing_since = failures, since
        due = since is not None and now - since >= threshold
        if due and failures >= settings.postback_pause_min_failures and not _paused(wall):
            wall.deliveries_paused_at = now
            notice = _notice("endpoint.paused", wall, now, by_wall[wall.id][-1].error)
            _mail_pause(session, wall, notice)
            alerts.enqueue(session, settings, notice.json())
            notices.append(notice)
        session.add(wall)
    session.flush()
    return notices


def _paused(wall: Offerwall) -> bool:
    return wall.deliveries_paused_at is not None


def _notice(event: str, wall: Offerwall, now: datetime, error: str) -> Notice:
    return Notice(
        event,
        wall.id,
        wall.owid or "",
        wall.name,
        now,
        wall.failing_since,
        wall.consecutive_failures,
        error,
    )


def _mail_pause(session: Session, wall: Offerwall, notice: Notice) -> None:
    email = session.scalar(sa.select(col(User.email)).where(col(User.offerwall_id) == wall.id))
    if not email:
        return
    mail.enqueue(
        session,
        to=email,
        subject=f"Postbacks to {wall.name} are paused",
        body=(
            f"Every postback to {wall.name} has failed since "
            f"{notice.failing_since:%Y-%m-%d %H:%M} UTC "
            f"({counted(notice.failures, 'attempt', 'attempts')} in a "
            f"row; the last: {notice.last_error}).\n\n"
            "Questwall has paused your deliveries: new postbacks wait in your queue and "
            "none is lost. Fix your postback URL, send a test postback, then resume:\n"
            f"{mail.portal_url(WORKSPACE_PATH)}\n"
        ),
    )


def resume(
    *, session: Session, offerwall: Offerwall, settings: Settings, now: datetime | None = None
) -> tuple[int, Notice]:
    """Resume a paused offerwall: its queued postbacks (and those that ran out of attempts
    while every attempt failed) are due again in the order they were made, one every
    1/POSTBACK_RESUME_RATE seconds, each with a fresh retry schedule and rendered again
    from the postback URL saved now. Returns how many."""
    if offerwall.deliveries_paused_at is None:
        raise EndpointError("Deliveries to this offerwall are not paused.")
    now = now or utcnow()
    waits = _waiting().where(col(Postback.offerwall_id) == offerwall.id)
    queued = [
        postback_id
        for _, postback_id in session.execute(
            waits.order_by(col(Postback.created_at), col(Postback.id))
        ).all()
    ]
    step = 1.0 / settings.postback_resume_rate
    if queued:
        session.execute(
            _postback.update()
            .where(_postback.c.id == sa.bindparam("b_id"))
            .values(
                status=PostbackStatus.PENDING,
                attempts=0,
                lease_until=None,
                next_attempt_at=sa.bindparam("b_due"),
                # Rendered again from the URL the publisher fixed before resuming: the
                # one stored at their first attempt is the URL that failed.
                url=None,
            ),
            [
                {"b_id": postback_id, "b_due": now + timedelta(seconds=i * step)}
                for i, postback_id in enumerate(queued)
            ],
        )
    notice = _notice("endpoint.resumed", offerwall, now, "")
    alerts.enqueue(session, settings, notice.json())
    audit.note(
        session,
        "offerwall.deliveries_resumed",
        audit.Target.offerwall(offerwall),
        {
            "deliveries_paused_at": [offerwall.deliveries_paused_at.isoformat(), None],
            "requeued": [None, len(queued)],
        },
    )
    offerwall.deliveries_paused_at = None
    offerwall.consecutive_failures = 0
    offerwall.failing_since = None
    session.add(offerwall)
    session.flush()
    return len(queued), notice


def _waiting() -> sa.Select[Any, Any]:
    """The postbacks a resume releases, with their offerwall's id: those of paused
    offerwalls that are queued, and those that ran out of attempts while every attempt
    failed (since the failures began, or the pause). The one definition of what waits:
    the resume, the publisher's banner and the staff dashboard all read it."""
    since = sa.func.coalesce(col(Offerwall.failing_since), col(Offerwall.deliveries_paused_at))
    ran_out = sa.exists().where(
        col(PostbackAttempt.postback_id) == col(Postback.id),
        col(PostbackAttempt.started_at) >= since,
    )
    return (
        sa.select(col(Postback.offerwall_id), col(Postback.id))
        .join(Offerwall, col(Offerwall.id) == col(Postback.offerwall_id))
        .where(
            col(Offerwall.deliveries_paused_at).is_not(None),
            sa.or_(
                col(Postback.status) == PostbackStatus.PENDING,
                sa.and_(col(Postback.status) == PostbackStatus.FAILED, ran_out),
            ),
        )
    )


def waiting_counts(session: Session, offerwall_ids: Iterable[str] | None = None) -> dict[str, int]:
    """How many postbacks a resume would release now, per paused offerwall (all of them,
    or those of `offerwall_ids`); an offerwall with none is left out."""
    query = _waiting()
    if offerwall_ids is not None:
        query = query.where(col(Postback.offerwall_id).in_(list(offerwall_ids)))
    waits = query.subquery()
    rows = session.execute(
        sa.select(waits.c.offerwall_id, sa.func.count()).group_by(waits.c.offerwall_id)
    ).all()
    return {wall_id: count for wall_id, count in rows}


def waiting(session: Session, offerwall: Offerwall) -> int:
    """How many postbacks a resume would release now (the paused banner's count)."""
    return waiting_counts(session, [offerwall.id]).get(offerwall.id, 0)


@dataclass(frozen=True)
class FailedAttempt:
    started_at: datetime
    status_code: int | None
    error: str
    url: str


def last_errors(
    session: Session, offerwall_id: str, *, limit: int = LAST_ERRORS
) -> list[FailedAttempt]:
    """The offerwall's latest failed attempts, newest first (the paused banner)."""
    rows = session.execute(
        sa.select(
            col(PostbackAttempt.started_at),
            col(PostbackAttempt.status_code),
            col(PostbackAttempt.error),
            col(PostbackAttempt.body_excerpt),
            col(Postback.url),
        )
        .join(Postback, col(Postback.id) == col(PostbackAttempt.postback_id))
        .where(
            col(Postback.offerwall_id) == offerwall_id,
            sa.or_(
                col(PostbackAttempt.status_code).is_(None),
                col(PostbackAttempt.status_code) < 200,
                col(PostbackAttempt.status_code) >= 300,
            ),
        )
        .order_by(col(PostbackAttempt.id).desc())
        .limit(limit)
    ).all()
    return [
        FailedAttempt(at, code, error or (body or "")[:200], url or "")
        for at, code, error, body, url in rows
    ]


@dataclass(frozen=True)
class PausedEndpoint:
    offerwall_id: str
    name: str
    paused_at: datetime
    failing_since: datetime | None
    failures: int
    queued: int


def paused_endpoints(session: Session) -> list[PausedEndpoint]:
    """Every paused offerwall with its queue, longest paused first (staff)."""
    rows = session.execute(
        sa.select(
            col(Offerwall.id),
            col(Offerwall.name),
            col(Offerwall.deliveries_paused_at),
            col(Offerwall.failing_since),
            col(Offerwall.consecutive_failures),
        )
        .where(col(Offerwall.deliveries_paused_at).is_not(None))
        .order_by(col(Offerwall.deliveries_paused_at))
    ).all()
    queued = waiting_counts(session)
    return [
        PausedEndpoint(wall_id, name, paused_at, since, failures, queued.get(wall_id, 0))
        for wall_id, name, paused_at, since, failures in rows
    ]


def announce(notices: Iterable[Notice]) -> None:
    """Log each pause or resume once its transaction committed (ALERT_WEBHOOK_URL's
    notice was queued in that transaction: `api/postbacks/alerts.py`)."""
    for notice in notices:
        log.warning(
            "%s: %s (%s), failed attempts in a row: %d",
            notice.event,
            notice.name,
            notice.owid,
            notice.failures,
        )
