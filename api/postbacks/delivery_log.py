"""What the publisher's workspace shows of its postbacks (docs/publisher-integration.md#delivery):
the endpoint's health for the banner (`endpoint_health`: paused, failing, the last
errors), the delivery log searched and paged (`delivery_log`), each postback's attempts,
and resend. The rows carry moments and amounts; the portal writes them for people
(portal/state/workspace.py, portal/postbacks/state.py). Ownership is decided by the caller (api/accounts/access.py), except for
`resend_postback`, which asks it; these functions take the offerwall they act on and
check that rows belong to it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from api.accounts import Account, offerwall_for
from api.core.db import new_session
from api.core.money import in_currency
from api.core.paging import Window, paged
from api.postbacks import endpoint as endpoints
from api.postbacks import outbox
from api.postbacks.endpoint import EndpointError
from models import Click, Conversion, Mission, Offerwall, Postback, PostbackAttempt


@dataclass(frozen=True)
class EndpointFailure:
    """One failed attempt as the workspace's banner lists it."""

    at: datetime
    answer: str  # "HTTP 500", or "No answer" when none came
    detail: str  # the error, or the start of the answer


@dataclass(frozen=True)
class EndpointHealth:
    """How the offerwall's postback endpoint is doing: paused (since when, how many
    postbacks wait), failing (failures in a row), or neither (no moments, no counts)."""

    paused_since: datetime | None
    failing_since: datetime | None
    failures: int
    waiting: int
    errors: list[EndpointFailure]


def endpoint_health(*, session: Session, offerwall: Offerwall) -> EndpointHealth:
    """What the workspace's banner says; reads the attempts only when something failed."""
    paused, failing = offerwall.deliveries_paused_at, offerwall.failing_since
    if paused is None and offerwall.consecutive_failures == 0:
        return EndpointHealth(None, None, 0, 0, [])
    errors = [
        EndpointFailure(
            at=failed.started_at,
            answer="No answer" if failed.status_code is None else f"HTTP {failed.status_code}",
            detail=failed.error,
        )
        for failed in endpoints.last_errors(session, offerwall.id)
    ]
    return EndpointHealth(
        paused_since=paused,
        failing_since=failing,
        failures=offerwall.consecutive_failures,
        waiting=endpoints.waiting(session, offerwall),
        errors=errors,
    )


@dataclass(frozen=True)
class DeliveryRow:
    id: int
    kind: str  # "conversion", "reversal", "held" or "rejection" (PostbackKind)
    conversion_status: str  # approved, reversed, … (ConversionStatus)
    transaction_id: str
    uid: str  # the player's id the publisher sent in the tracking link
    clickid: str
    mission: str
    payout: Decimal  # in the offerwall's currency
    currency_decimals: int
    currency_code: str
    status: str
    attempts: int
    created_at: datetime
    next_attempt_at: datetime | None  # a pending postback's next attempt; None otherwise
    last_status: str
    test: bool = False  # the test player's conversion (docs/publisher-integration.md)


@dataclass(frozen=True)
class AttemptRow:
    started_at: datetime
    status_code: str
    duration_ms: int
    answer: str
    error: str
    sent: bool


def delivery_log(
    *,
    session: Session,
    offerwall: Offerwall,
    status: str = "",
    search: str = "",
    test: bool | None = None,
    page: int = 1,
) -> Window[DeliveryRow]:
    """The offerwall's postbacks newest first, by status, searched (in SQL) by the
    player's uid, the click id or the transaction id: any of them containing the text.
    A reversed conversion has two rows: its conversion's postback and its reversal's.
    `test`: the test player's only (True), real players' only (False), or both (None)."""
    last_code = (
        sa.select(col(PostbackAttempt.status_code))
        .where(col(PostbackAttempt.postback_id) == col(Postback.id))
        .order_by(col(PostbackAttempt.id).desc())
        .limit(1)
        .scalar_subquery()
    )
    query = (
        sa.select(
            Postback,
            col(Conversion.transaction_id),
            col(Conversion.status),
            col(Conversion.payout_micros),
            col(Conversion.multiplier),
            col(Mission.title),
            last_code,
            col(Click.uid),
            col(Click.clickid),
            col(Conversion.test),
        )
        .join(Conversion, col(Conversion.id) == col(Postback.conversion_id))
        .join(Mission, col(Mission.id) == col(Conversion.mission_id))
        .join(Click, col(Click.id) == col(Conversion.click_id))
        .where(col(Postback.offerwall_id) == offerwall.id)
    )
    if status:
        query = query.where(col(Postback.status) == status)
    if test is not None:
        query = query.where(col(Conversion.test) if test else sa.not_(col(Conversion.test)))
    if search.strip():
        text = search.strip().lower()
        query = query.where(
            sa.or_(
                *(
                    sa.func.lower(column).contains(text, autoescape=True)
                    for column in (
                        col(Conversion.transaction_id),
                        col(Click.uid),
                        col(Click.clickid),
                    )
                )
            )
        )
    rows, total, page, pages = paged(session, query.order_by(col(Postback.id).desc()), page)
    return Window(
        [
            DeliveryRow(
                id=pb.id,
                kind=pb.kind,
                conversion_status=conversion_status,
                transaction_id=txn,
                uid=uid or "",
                clickid=clickid or "",
                mission=title,
                payout=in_currency(
                    micros,
                    exchange_rate=offerwall.exchange_rate,
                    decimals=offerwall.currency_decimals,
                    multiplier=multiplier,  # a promotion's: as the postback said it
                ),
                currency_decimals=offerwall.currency_decimals,
                currency_code=offerwall.currency_code,
                status=pb.status,
                attempts=pb.attempts,
                created_at=pb.created_at,
                next_attempt_at=pb.next_attempt_at if pb.status == "pending" else None,
                last_status="" if code is None else str(code),
                test=bool(test_player),
            )
            for (
                pb,
                txn,
                conversion_status,
                micros,
                multiplier,
                title,
                code,
                uid,
                clickid,
                test_player,
            ) in rows
        ],
        total,
        page,
        pages,
    )


def owned_postback(*, session: Session, offerwall: Offerwall, postback_id: int) -> Postback:
    """The postback if it belongs to the offerwall; the same error whether it exists or not."""
    postback = session.get(Postback, postback_id)
    if postback is None or postback.offerwall_id != offerwall.id:
        raise EndpointError("No such postback.")
    return postback


def resend_postback(
    *, engine: Engine, account: Account | None, postback_id: int, requested: str = ""
) -> None:
    """Queue a postback of the account's offerwall (staff: the requested one) for one
    more attempt now. Another offerwall's postback is refused like one that does not
    exist. Raises SignedOut, Forbidden or EndpointError."""
    with new_session(engine) as session:
        offerwall = offerwall_for(session=session, account=account, requested=requested)
        owned_postback(session=session, offerwall=offerwall, postback_id=postback_id)
    outbox.resend(engine, postback_id)


def attempts(*, session: Session, postback: Postback) -> list[AttemptRow]:
    """The postback's attempts, first to last, each with whether it was sent."""
    found = session.exec(
        select(PostbackAttempt)
        .where(PostbackAttempt.postback_id == postback.id)
        .order_by(col(PostbackAttempt.id))
    ).all()
    return [
        AttemptRow(
            started_at=a.started_at,
            status_code="" if a.status_code is None else str(a.status_code),
            duration_ms=a.duration_ms,
            answer=a.body_excerpt or "",
            error=a.error or "",
            sent=a.sent,
        )
        for a in found
    ]
