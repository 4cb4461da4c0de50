"""The review queue (docs/fraud.md#the-review-queue): conversions held for review, and the
decisions on them.

A held conversion is `pending`: it counts against its mission's cap but no postback has
gone (or, when the offerwall asked for it, one with `status=pending`). Staff, and the
designers of the studio whose game the offer belongs to, approve or reject held
conversions, one or many at a time:

- approve: `approved`, and its postback joins the outbox in the same transaction;
- reject (a reason is required): `rejected`, never paid; its place under the cap is
  given back, and a `status=rejected` postback goes when the offerwall asked for one;
- flag: it stays held, and is no longer approved by itself when its time is up.

Every decision is one conditional `UPDATE … WHERE status = 'pending'`, so of two
reviewers (or a reviewer and the automatic approval) deciding at once, each conversion
is decided once and its postback queued once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session

from api import audit
from api.conversions.ledger import (
    REASON_MAX,
    REASON_MIN,
    ConversionError,
    take_back,
    visible_ids,
)
from api.core.db import write_session
from api.fraud import Policy
from api.postbacks import outbox as postbacks
from api.webhooks.conversions import tell_decided
from models import ConversionStatus, PostbackKind
from models.tables import conversion as _conversion
from models.tables import offerwall as _offerwall
from models.types import utcnow

AUTO = "auto"  # the reviewer of a conversion approved by itself
AUTO_NOTE = "No decision within the review period."
MAX_AT_ONCE = 500  # conversions one decision may name


@dataclass(frozen=True)
class Decided:
    """How many of the named conversions were decided now, and how many were not (not
    pending any more, or not the reviewer's to see)."""

    decided: int
    skipped: int


def _note(note: str, *, required: bool) -> str:
    note = " ".join(note.split())
    if required and not REASON_MIN <= len(note) <= REASON_MAX:
        raise ConversionError(
            f"Give a reason of {REASON_MIN} to {REASON_MAX} characters.", field="reason"
        )
    if len(note) > REASON_MAX:
        raise ConversionError(f"Keep the note to {REASON_MAX} characters.", field="reason")
    return note


def _named(transaction_ids: Sequence[str]) -> list[str]:
    named = list(dict.fromkeys(t.strip() for t in transaction_ids if t and t.strip()))
    if not named:
        raise ConversionError("Choose at least one held conversion.")
    if len(named) > MAX_AT_ONCE:
        raise ConversionError(f"Decide at most {MAX_AT_ONCE} conversions at once.")
    return named


def approve(
    *,
    session: Session,
    transaction_ids: Sequence[str],
    actor: str,
    studio_id: str | None,
    note: str = "",
) -> Decided:
    """Approve held conversions the actor may see; each one's postback is queued once."""
    named = _named(transaction_ids)
    chosen = visible_ids(studio_id).where(_conversion.c.transaction_id.in_(named))
    decided = _decide(session, chosen, approved=True, actor=actor, note=_note(note, required=False))
    return Decided(decided, len(named) - decided)


def reject(
    *,
    session: Session,
    transaction_ids: Sequence[str],
    actor: str,
    studio_id: str | None,
    reason: str,
    policy: Policy | None = None,
) -> Decided:
    """Reject held conversions the actor may see, with a reason: never paid, no postback
    (or `status=rejected` when the offerwall asked), their places under the caps freed
    (`take_back`, `policy` screening a waiting completion they pay)."""
    named = _named(transaction_ids)
    chosen = visible_ids(studio_id).where(_conversion.c.transaction_id.in_(named))
    reason = _note(reason, required=True)
    decided = _decide(session, chosen, approved=False, actor=actor, note=reason, policy=policy)
    return Decided(decided, len(named) - decided)


def flag(
    *, session: Session, transaction_ids: Sequence[str], actor: str, studio_id: str | None
) -> Decided:
    """Keep held conversions for a reviewer: they are no longer approved by themselves."""
    named = _named(transaction_ids)
    chosen = visible_ids(studio_id).where(_conversion.c.transaction_id.in_(named))
    result = session.execute(
        sa.update(_conversion)
        .where(
            _conversion.c.id.in_(chosen),
            _conversion.c.status == ConversionStatus.PENDING,
        )
        .values(review_due_at=None, review_note=f"Flagged by {actor}"[:REASON_MAX])
        .returning(
            _conversion.c.id,
            _conversion.c.offerwall_id,
            _conversion.c.transaction_id,
            _conversion.c.review_due_at,
        )
    ).all()
    # The returned due time is the new one (None); the old is gone with the update, so
    # the change recorded is "held for a reviewer", one event per conversion.
    audit.record_all(
        session,
        [
            audit.Entry(
                "conversion.flagged",
                "conversion",
                row.id,
                row.transaction_id,
                ("offerwall", row.offerwall_id),
                {"auto_approval": ["due", None]},
            )
            for row in result
        ],
    )
    return Decided(len(result), len(named) - len(result))


def _decide(
    session: Session,
    chosen: sa.Select,
    *,
    approved: bool,
    actor: str,
    note: str,
    policy: Policy | None = None,
) -> int:
    now = utcnow()
    status = ConversionStatus.APPROVED if approved else ConversionStatus.REJECTED
    rows = session.execute(
        sa.update(_conversion)
        .where(
            _conversion.c.id.in_(chosen),
            _conversion.c.status == ConversionStatus.PENDING,
        )
        .values(
            status=status,
            reviewed_at=now,
            reviewed_by=actor[:320],
            review_note=note or None,
            review_due_at=None,
        )
        .returning(
            _conversion.c.id,
            _conversion.c.offerwall_id,
            _conversion.c.mission_id,
            _conversion.c.transaction_id,
        )
    ).all()
    if not rows:
        return 0
    decided = "conversion.approved" if approved else "conversion.rejected"
    changes = {"status": ["pending", status.value], "review_note": [None, note or None]}
    entries = [  # one event per conversion, bulk decisions too
        audit.Entry(
            decided,
            "conversion",
            row.id,
            row.transaction_id,
            ("offerwall", row.offerwall_id),
            changes,
        )
        for row in rows
    ]
    tell_decided(session, [row.id for row in rows], decided, now, reason=note or None)
    if approved:
        for row in rows:
            postbacks.enqueue(session, conversion_id=row.id, offerwall_id=row.offerwall_id, now=now)
        # The trail's head is the transaction's last lock, as in every writer: no cycle.
        audit.record_all(session, entries, at=now)
        return len(rows)
    take_back(session, [row.id for row in rows], now, policy)
    notified = set(
        session.execute(
            sa.select(_offerwall.c.id).where(
                _offerwall.c.id.in_({row.offerwall_id for row in rows}),
                _offerwall.c.review_postbacks,
            )
        ).scalars()
    )
    for row in rows:
        if row.offerwall_id in notified:
            postbacks.enqueue(
                session,
                conversion_id=row.id,
                offerwall_id=row.offerwall_id,
                now=now,
                kind=PostbackKind.REJECTION,
            )
    audit.record_all(session, entries, at=now)
    return len(rows)


def auto_approve(engine: Engine, *, now: datetime | None = None, limit: int = MAX_AT_ONCE) -> int:
    """Approve the held conversions whose review time is up (not flagged); returns how
    many. Run by every postback dispatcher once a minute; safe to run in several."""
    now = now or utcnow()
    with write_session(engine) as session:
        due = (
            sa.select(_conversion.c.id)
            .where(
                _conversion.c.status == ConversionStatus.PENDING,
                _conversion.c.review_due_at.is_not(None),
                _conversion.c.review_due_at <= now,
            )
            .order_by(_conversion.c.review_due_at)
            .limit(limit)
        )
        return _decide(session, due, approved=True, actor=AUTO, note=AUTO_NOTE)
