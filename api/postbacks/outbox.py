"""The postback outbox (docs/contract.md#postbacks): one row per postback owed, from the
conversion's transaction until it is delivered or given up.

`enqueue` writes a conversion's postback row (in the conversion's transaction);
`values_for`/`sample_values` give the macro values of a real or a made-up conversion;
`claim` takes due postbacks with a lease (`renew_leases`, `release_leases`), `urls_for`
tells where each goes; `record` keeps every attempt (and whether it was sent) and moves
the postback on: delivered, retried on a schedule (`RETRY_DELAYS`), or failed; `resend`
queues one again. The dispatcher (`api/postbacks/dispatcher.py`) drives these, and the
requests themselves are `api/postbacks/transport.py`'s.

At least once: a dispatcher that dies mid-delivery holds its lease until it expires, then
another claims the postback. Several dispatchers (processes or threads) share the outbox:
claims are one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED)` on PostgreSQL,
and serialized by the single writer on SQLite.

A little over 400 lines: the outbox's every statement (write, claim, lease, address,
record, resend) is here, so its states change in one module.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from api.core.config import Settings
from api.core.crypto import SecretBox, open_api_key
from api.core.db import new_session, write_session
from api.core.money import in_currency, multiplier_text, usd
from api.ops import delivered_on_commit, made_by
from api.postbacks import endpoint as endpoints
from api.postbacks.transport import AttemptResult, Target
from api.postbacks.url import PostbackValues, render, with_status
from models import ConversionStatus, Offerwall, PostbackKind, PostbackStatus
from models.tables import click as _click
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import offerwall as _offerwall
from models.tables import postback as _postback
from models.tables import postback_attempt as _attempt
from models.tables import quest as _quest
from models.types import utcnow

# Waits after the 1st, 2nd, … failed attempt; after the last, the postback has failed.
RETRY_DELAYS = (5, 300, 1800, 7200, 18000, 36000, 36000)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
SAMPLE_PAYOUT_MICROS = 1_500_000  # $1.50, the portal's made-up conversion


# A test conversion whose offerwall does not want test postbacks.
_UNWANTED_TEST = (
    sa.select(_conversion.c.id)
    .join(_offerwall, _offerwall.c.id == _conversion.c.offerwall_id)
    .where(
        _conversion.c.id == sa.bindparam("conversion_id"),
        _conversion.c.test,
        sa.not_(_offerwall.c.test_postbacks),
    )
)


def enqueue(
    session: Session,
    *,
    conversion_id: int,
    offerwall_id: str,
    now: datetime,
    kind: PostbackKind = PostbackKind.CONVERSION,
) -> None:
    """Put a conversion's postback (or its reversal's) in the outbox, due now; the
    dispatcher delivers it.

    The only writer of outbox rows. Call it in the conversion's (or the reversal's) own
    transaction, so neither is committed without its postback, nor a postback without it.
    A test player's conversion has none unless its offerwall asks for them
    (`test_postbacks`)."""
    if session.execute(_UNWANTED_TEST, {"conversion_id": conversion_id}).first() is not None:
        return
    session.execute(
        _postback.insert().values(
            conversion_id=conversion_id,
            offerwall_id=offerwall_id,
            kind=kind,
            status=PostbackStatus.PENDING,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
            **made_by(),
        )
    )


def _payouts(
    payout_micros: int, *, exchange_rate: float, decimals: int, multiplier: int = 100
) -> tuple[str, str]:
    """The payout in the offerwall's currency (with a promotion's multiplier, in
    hundredths) and in USD (never with it), as the macros write them."""
    payout = in_currency(
        payout_micros, exchange_rate=exchange_rate, decimals=decimals, multiplier=multiplier
    )
    return f"{payout:f}", f"{usd(payout_micros).normalize():f}"


def values_for(row: Any) -> PostbackValues:
    """The macro values of a real conversion (or its reversal), from the row `urls_for`
    reads."""
    payout, payout_usd = _payouts(
        row.payout_micros,
        exchange_rate=row.exchange_rate,
        decimals=row.currency_decimals,
        multiplier=row.multiplier,
    )
    return PostbackValues(
        uid=row.uid or "",
        owid=row.owid,
        mission_id=row.mission_id,
        mission_name=row.title,
        quest_id=row.quest_id or "",
        quest_name=row.quest_name or "",
        payout=payout,
        payout_usd=payout_usd,
        clickid=row.clickid or "",
        session_ip=row.ip,
        transaction_id=row.transaction_id,
        timestamp=int(row.created_at.timestamp()),
        currency=row.currency_code,
        platform_sub1=row.sub1 or "",
        platform_sub2=row.sub2 or "",
        platform_sub3=row.sub3 or "",
        status=STATUS_OF[row.kind],
        reason=_reason(row),
        period=row.period or "",
        stage=str(row.stage) if row.stage else "",
        stage_count=str(len(row.stages or ())) if row.stage else "",
        promotion=row.promotion or "",
        multiplier=multiplier_text(row.multiplier),
    )


# The {status} each kind of postback says.
STATUS_OF = {
    PostbackKind.CONVERSION: "approved",
    PostbackKind.REVERSAL: "reversed",
    PostbackKind.HELD: "pending",
    PostbackKind.REJECTION: "rejected",
}


def _reason(row: Any) -> str:
    """The {reason}: a reversal's or a rejection's, as the reviewer wrote it."""
    if row.kind == PostbackKind.REVERSAL:
        return row.reversal_reason or ""
    if row.kind == PostbackKind.REJECTION:
        return row.review_note or ""
    return ""


def sample_values(offerwall: Offerwall) -> PostbackValues:
    """The macro values of a made-up conversion, for the portal's preview and test
    postback (its transaction id tells the publisher it is not a real one)."""
    payout, payout_usd = _payouts(
        SAMPLE_PAYOUT_MICROS,
        exchange_rate=offerwall.exchange_rate,
        decimals=offerwall.currency_decimals,
    )
    return PostbackValues(
        uid="player-123",
        owid=offerwall.owid or "",
        mission_id="00000000-0000-4000-8000-000000000001",
        mission_name="Win 3 matches in a row",
        quest_id="",
        quest_name="",
        payout=payout,
        payout_usd=payout_usd,
        clickid="test-click",
        session_ip="203.0.113.7",
        transaction_id="test-00000000-0000-4000-8000-000000000000",
        timestamp=int(utcnow().timestamp()),
        currency=offerwall.currency_code,
        platform_sub1="",
        platform_sub2="",
        platform_sub3="",
    )


# A paused offerwall's postbacks wait (api/postbacks/endpoint.py), and each postback of a
# conversion waits for the ones queued before it (held, then approved or rejected, then
# reversed) to be delivered or given up, so they arrive in order.
_PAUSED = (
    sa.select(_offerwall.c.id)
    .where(
        _offerwall.c.id == _postback.c.offerwall_id,
        _offerwall.c.deliveries_paused_at.is_not(None),
    )
    .exists()
)
_earlier = _postback.alias("earlier")
_EARLIER_UNSENT = (
    sa.select(_earlier.c.id)
    .where(
        _earlier.c.conversion_id == _postback.c.conversion_id,
        _earlier.c.id < _postback.c.id,
        _earlier.c.status == PostbackStatus.PENDING,
    )
    .exists()
)


# A ladder's stages reached together are separate conversions: each stage's postbacks wait
# while an earlier stage of the same progress is held for review or its postbacks are
# unsent, so a publisher hears of stage 2 only after stage 1.
_mine = _conversion.alias("mine")
_theirs = _conversion.alias("theirs")
_earlier_stage = _postback.alias("earlier_stage")
_EARLIER_STAGE_UNSENT = (
    sa.select(_theirs.c.id)
    .select_from(_mine.join(_theirs, _theirs.c.progress_id == _mine.c.progress_id))
    .where(
        _mine.c.id == _postback.c.conversion_id,
        _mine.c.stage > 1,
        _theirs.c.id < _mine.c.id,
        sa.or_(
            _theirs.c.status == ConversionStatus.PENDING,
            sa.select(_earlier_stage.c.id)
            .where(
                _earlier_stage.c.conversion_id == _theirs.c.id,
                _earlier_stage.c.status == PostbackStatus.PENDING,
            )
            .exists(),
        ),
    )
    .exists()
)

# A due postback a dispatcher takes (and the oldest-due gauge counts).
SENDABLE = (~_PAUSED, ~_EARLIER_UNSENT, ~_EARLIER_STAGE_UNSENT)


def claim(
    engine: Engine,
    *,
    limit: int,
    lease_seconds: float,
    per_offerwall: int | None = None,
    busy: Mapping[str, int] | None = None,
) -> dict[int, str]:
    """Take up to `limit` due postbacks for this dispatcher until the lease ends; returns
    postback id → offerwall id.

    With `per_offerwall`, at most that many of one offerwall's postbacks are in flight,
    counting `busy` (this dispatcher's running requests by offerwall): offerwalls already
    at the cap are not even read, so a slow one's backlog cannot fill every claim."""
    busy = busy or {}
    cap = per_offerwall or limit
    full = [offerwall for offerwall, running in busy.items() if running >= cap]
    now = utcnow()
    due = sa.select(_postback.c.id, _postback.c.offerwall_id).where(
        _postback.c.status == PostbackStatus.PENDING,
        _postback.c.next_attempt_at <= now,
        sa.or_(_postback.c.lease_until.is_(None), _postback.c.lease_until < now),
        *SENDABLE,
    )
    if full:
        due = due.where(_postback.c.offerwall_id.not_in(full))
    # Read a few more than the limit, so that one offerwall's rows at the head of the
    # queue leave room for others'; the rows left over are unlocked at commit.
    due = (
        due.order_by(_postback.c.next_attempt_at)
        .limit(limit * 4 if per_offerwall else limit)
        .with_for_update(skip_locked=True)
    )
    with write_session(engine) as session:
        taken: dict[int, str] = {}
        room: dict[str, int] = {}
        for postback_id, offerwall_id in session.execute(due).all():
            left = room.setdefault(offerwall_id, cap - busy.get(offerwall_id, 0))
            if left > 0 and len(taken) < limit:
                taken[postback_id] = offerwall_id
                room[offerwall_id] = left - 1
        if taken:
            session.execute(
                sa.update(_postback)
                .where(_postback.c.id.in_(list(taken)))
                .values(lease_until=now + timedelta(seconds=lease_seconds))
            )
        return taken


def renew_leases(engine: Engine, ids: list[int], *, lease_seconds: float) -> None:
    """Extend the lease of postbacks whose requests are still running, so that no other
    dispatcher takes them meanwhile (a dispatcher that dies stops renewing)."""
    if not ids:
        return
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(
                _postback.c.id.in_(ids),
                _postback.c.status == PostbackStatus.PENDING,
                _postback.c.lease_until.is_not(None),
            )
            .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
        )


def release_leases(engine: Engine, ids: list[int]) -> None:
    """Give claimed postbacks that were never sent back to the outbox (a stopping
    dispatcher), so another dispatcher takes them at once rather than after the lease."""
    if not ids:
        return
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(_postback.c.id.in_(ids), _postback.c.status == PostbackStatus.PENDING)
            .values(lease_until=None)
        )


def urls_for(engine: Engine, box: SecretBox, ids: list[int]) -> dict[int, Target]:
    """For each postback: its stored URL, or one rendered now from the offerwall's template
    (first attempt: the API key of that moment makes its hash_key, kept for every resend);
    a reversal goes to the reversal URL when there is one, and says `status=reversed`."""
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(
                _postback.c.id,
                _postback.c.url,
                _postback.c.kind,
                _postback.c.request_id,
                _postback.c.traceparent,
                _offerwall.c.postback_url,
                _offerwall.c.reversal_url,
                _offerwall.c.review_postbacks,
                _offerwall.c.api_key_sealed,
                _offerwall.c.signing_secret_sealed,
                _offerwall.c.signing_secret_previous_sealed,
                _offerwall.c.signing_secret_previous_until,
                _offerwall.c.owid,
                _offerwall.c.exchange_rate,
                _offerwall.c.currency_decimals,
                _offerwall.c.currency_code,
                _conversion.c.transaction_id,
                _conversion.c.payout_micros,
                _conversion.c.multiplier,
                _conversion.c.promotion,
                _conversion.c.created_at,
                _conversion.c.quest_id,
                _conversion.c.reversal_reason,
                _conversion.c.review_note,
                _conversion.c.period,
                _conversion.c.stage,
                _mission.c.id.label("mission_id"),
                _mission.c.title,
                _mission.c.stages,
                _quest.c.name.label("quest_name"),
                _click.c.uid,
                _click.c.clickid,
                _click.c.ip,
                _click.c.sub1,
                _click.c.sub2,
                _click.c.sub3,
            )
            .select_from(
                _postback.join(_conversion, _conversion.c.id == _postback.c.conversion_id)
                .join(_offerwall, _offerwall.c.id == _postback.c.offerwall_id)
                .join(_mission, _mission.c.id == _conversion.c.mission_id)
                .join(_click, _click.c.id == _conversion.c.click_id)
                .outerjoin(_quest, _quest.c.id == _conversion.c.quest_id)
            )
            .where(_postback.c.id.in_(ids))
        ).all()
    keys: dict[str, str] = {}
    opened: dict[str, str] = {}
    now = utcnow()
    found: dict[int, Target] = {}
    for row in rows:
        secrets = endpoints.signing_secrets(box, row, now=now, cache=opened)
        template = row.postback_url
        if row.kind == PostbackKind.REVERSAL:
            template = row.reversal_url or template
        # A receiver that hears of reviews (or of reversals) needs each postback's status.
        if template and (row.kind != PostbackKind.CONVERSION or row.review_postbacks):
            template = with_status(template)
        origin = {"request_id": row.request_id, "traceparent": row.traceparent}  # its request
        if row.url:
            found[row.id] = Target(row.url, secrets=secrets, **origin)
        elif not template or not row.api_key_sealed:
            found[row.id] = Target(None, "the offerwall has no postback URL", **origin)
        else:
            if row.api_key_sealed not in keys:
                keys[row.api_key_sealed] = open_api_key(box, row.api_key_sealed, owid=row.owid)
            url = render(template, values_for(row).mapping(), keys[row.api_key_sealed])
            found[row.id] = Target(url, secrets=secrets, **origin)
    return found


# A receiver that answers 410 Gone says the postback must not come again.
GONE = 410


def record(
    engine: Engine,
    done: list[tuple[int, str | None, datetime, AttemptResult]],
    settings: Settings,
) -> list[endpoints.Notice]:
    """Keep the attempts and move each postback on: delivered, retried later, or failed
    (out of attempts, or 410 Gone); count them into their offerwalls' health. Returns the
    offerwalls this paused, to be announced."""
    now = utcnow()
    with write_session(engine) as session:
        read = [_postback.c[c] for c in ("id", "attempts", "offerwall_id", "created_at")]
        ids = [d[0] for d in done]
        rows = session.execute(
            sa.select(*read, _postback.c.delivered_at).where(_postback.c.id.in_(ids))
        ).all()
        counts = {row.id: row.attempts for row in rows}
        walls = {row.id: row.offerwall_id for row in rows}
        first = {row.id: row.created_at for row in rows if row.delivered_at is None}
        session.execute(
            _attempt.insert(),
            [
                {
                    "postback_id": i,
                    "started_at": at,
                    "duration_ms": r.duration_ms,
                    "status_code": r.status_code,
                    "body_excerpt": r.body_excerpt,
                    "error": r.error,
                    "sent": r.sent,
                }
                for i, _, at, r in done
            ],
        )
        # One executemany per kind of change (delivered, failed, retried; with or without
        # a URL), not one statement per postback.
        changes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for postback_id, url, _, result in done:
            attempts = counts[postback_id] + 1
            values: dict[str, Any] = {"attempts": attempts, "lease_until": None}
            if url is not None:
                values["url"] = url
            if result.delivered:
                values.update(status=PostbackStatus.DELIVERED, delivered_at=now)
                if postback_id in first:
                    delivered_on_commit(session, "postback", first[postback_id], now)
            elif url is None or attempts >= MAX_ATTEMPTS or result.status_code == GONE:
                values.update(status=PostbackStatus.FAILED)
            else:
                values["next_attempt_at"] = now + timedelta(seconds=RETRY_DELAYS[attempts - 1])
            changes.setdefault(tuple(sorted(values)), []).append({"row_id": postback_id, **values})
        for columns, alike in changes.items():
            session.execute(_recorded(columns), alike)
        # Attempts without a URL say nothing about the endpoint (there is none).
        outcomes = [
            endpoints.Outcome(walls[i], at, not r.delivered, _error_text(r))
            for i, url, at, r in done
            if url is not None and i in walls
        ]
        return endpoints.record_outcomes(session, outcomes, settings, now)


@functools.lru_cache(maxsize=16)
def _recorded(columns: tuple[str, ...]) -> sa.Update:
    """UPDATE postback SET (columns) WHERE id = :row_id, each value a bound parameter."""
    return (
        sa.update(_postback)
        .where(_postback.c.id == sa.bindparam("row_id"))
        .values({c: sa.bindparam(c) for c in columns})
    )


def _error_text(result: AttemptResult) -> str:
    """An attempt's failure in a few words (the pause notice)."""
    if result.error:
        return result.error
    return f"HTTP {result.status_code}" if result.status_code is not None else ""


def resend(engine: Engine, postback_id: int) -> None:
    """Queue a postback for one more attempt now (the portal's "resend")."""
    with write_session(engine) as session:
        session.execute(
            sa.update(_postback)
            .where(_postback.c.id == postback_id)
            .values(
                status=PostbackStatus.PENDING,
                next_attempt_at=utcnow(),
                lease_until=None,
                attempts=sa.case(
                    (_postback.c.attempts >= MAX_ATTEMPTS, MAX_ATTEMPTS - 1),
                    else_=_postback.c.attempts,
                ),
            )
        )
