"""Publishers in the portal: the staff queue, the API key and signing secret reveals and
rotations (each after the password again), the test postback, the endpoint's health for the workspace's banner and the delivery log with
its resend. The lifecycle (approve, reject, suspend, reinstate, rotate the key)
belongs to api/publishers/offerwalls.py. Ownership is decided by the caller
(api/accounts/access.py); these functions take the offerwall they act on and check that
rows belong to it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from api.accounts import throttle
from api.accounts.access import Account, offerwall_for
from api.accounts.sessions import AccountError, LoginThrottled, check_password
from api.core.config import Settings
from api.core.crypto import SecretBox, open_api_key
from api.core.db import new_session
from api.core.money import format_money, in_currency
from api.core.paging import Window, paged
from api.core.refusals import SignedOut
from api.postbacks import endpoint as endpoints
from api.postbacks import outbox as postbacks
from api.postbacks import transport
from api.postbacks.url import render
from api.publishers import offerwalls
from api.publishers.offerwalls import OfferwallError
from models import Click, Conversion, Mission, Offerwall, Postback, PostbackAttempt, User
from models.types import utcnow


@dataclass(frozen=True)
class PublisherRow:
    id: str
    company: str
    website: str
    contact: str
    email: str
    status: str
    owid: str
    created_at: str
    rejection_reason: str


def list_publishers(
    *, session: Session, status: str = "", search: str = "", page: int = 1
) -> Window[PublisherRow]:
    """Publishers newest first, by status and a search over company, email, website, owid."""
    query = sa.select(Offerwall, col(User.email)).outerjoin(
        User, col(User.offerwall_id) == col(Offerwall.id)
    )
    if status:
        query = query.where(col(Offerwall.status) == status)
    if search.strip():
        like = f"%{search.strip().lower()}%"
        query = query.where(
            sa.or_(
                sa.func.lower(col(Offerwall.name)).like(like),
                sa.func.lower(col(User.email)).like(like),
                sa.func.lower(sa.func.coalesce(col(Offerwall.website), "")).like(like),
                sa.func.lower(sa.func.coalesce(col(Offerwall.owid), "")).like(like),
            )
        )
    rows, total, page, pages = paged(
        session, query.order_by(col(Offerwall.created_at).desc(), col(Offerwall.id)), page
    )
    return Window([_row(o, email) for o, email in rows], total, page, pages)


def status_counts(*, session: Session) -> dict[str, int]:
    counted = session.execute(
        sa.select(col(Offerwall.status), sa.func.count()).group_by(col(Offerwall.status))
    ).all()
    return {status: count for status, count in counted}


def _row(offerwall: Offerwall, email: str | None) -> PublisherRow:
    return PublisherRow(
        id=offerwall.id,
        company=offerwall.name,
        website=offerwall.website or "",
        contact=offerwall.contact_name or "",
        email=email or "",
        status=offerwall.status,
        owid=offerwall.owid or "",
        created_at=_when(offerwall.created_at),
        rejection_reason=offerwall.rejection_reason or "",
    )


def api_key(*, box: SecretBox, offerwall: Offerwall) -> str:
    if offerwall.api_key_sealed is None or offerwall.owid is None:
        raise OfferwallError("The offerwall has no API key until it is approved.")
    return open_api_key(box, offerwall.api_key_sealed, owid=offerwall.owid)


def reveal_api_key(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str = ""
) -> str:
    """The offerwall's API key, for an account that re-entered its password (see
    `_reauthenticated`). Raises Forbidden, LoginThrottled, AccountError (field
    "password") or OfferwallError."""
    offerwall = _reauthenticated(
        session=session, box=box, account=account, password=password, requested=requested
    )
    return api_key(box=box, offerwall=offerwall)


def reveal_signing_secret(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str = ""
) -> str:
    """The offerwall's postback signing secret, once, for an account that re-entered its
    password (see `_reauthenticated`): afterwards only a rotation shows one. Commit the
    session after: the reveal is recorded in it. Raises Forbidden, LoginThrottled,
    AccountError (field "password") or EndpointError (shown already)."""
    offerwall = _reauthenticated(
        session=session, box=box, account=account, password=password, requested=requested
    )
    return endpoints.reveal_signing_secret(session=session, box=box, offerwall=offerwall)


def rotate_api_key(
    *,
    session: Session,
    box: SecretBox,
    account: Account,
    password: str,
    grace: str,
    requested: str = "",
) -> tuple[str, Offerwall]:
    """A new API key and the offerwall it was issued for, for an account that re-entered
    its password (see `_reauthenticated`): a rotation shows a key, as a reveal does. The
    old key keeps the grace picked (offerwalls.rotate_key). Raises Forbidden,
    LoginThrottled, AccountError (field "password") or OfferwallError."""
    offerwall = _reauthenticated(
        session=session, box=box, account=account, password=password, requested=requested
    )
    issued = offerwalls.rotate_key(session=session, box=box, offerwall=offerwall, grace=grace)
    return issued.api_key, offerwall


def rotate_signing_secret(
    *,
    session: Session,
    box: SecretBox,
    account: Account,
    password: str,
    overlap: str,
    requested: str = "",
) -> tuple[str, Offerwall]:
    """A new postback signing secret and its offerwall, for an account that re-entered its
    password (see `_reauthenticated`); the old secret also signs for the overlap picked
    (endpoints.rotate_signing_secret). Raises Forbidden, LoginThrottled, AccountError
    (field "password") or EndpointError."""
    offerwall = _reauthenticated(
        session=session, box=box, account=account, password=password, requested=requested
    )
    secret = endpoints.rotate_signing_secret(
        session=session, box=box, offerwall=offerwall, overlap=overlap
    )
    return secret, offerwall


def _reauthenticated(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str
) -> Offerwall:
    """The offerwall a secret is shown from, once the account entered its password again.

    The offerwall is the account's own (staff: the requested one, see
    access.offerwall_for). A wrong password counts against the sign-in limit of the
    account's address, and a reveal is refused while that limit holds, so a reveal
    is no way around it. The count is committed before the password is checked, so a
    refusal cannot roll it back."""
    offerwall = offerwall_for(session=session, account=account, requested=requested)
    user = session.get(User, account.id)
    if user is None:
        raise SignedOut()
    key = box.digest(user.email)
    now = utcnow()
    wait = throttle.claim_attempt(session, key, now)
    session.commit()
    if wait is not None:
        raise LoginThrottled(wait)
    if not check_password(user, password):
        raise AccountError("Wrong password.", "password")
    throttle.forget_failures(session, key)
    return offerwall


def preview_url(*, template: str, offerwall: Offerwall, api_key: str) -> str:
    """The template rendered for a made-up conversion, as a real postback would be."""
    return render(template, postbacks.sample_values(offerwall).mapping(), api_key)


@dataclass(frozen=True)
class PostbackTrial:
    url: str
    status_code: int | None
    latency_ms: int
    answer: str
    error: str
    sent: bool  # False: refused before any request went out (latency means nothing then)


def send_test_postback(
    *, settings: Settings, box: SecretBox, offerwall: Offerwall
) -> PostbackTrial:
    """Send the sample postback to the saved URL once, with the dispatcher's rules; nothing
    is stored (a test transaction id tells the publisher it is not a real conversion)."""
    if not offerwall.postback_url:
        raise OfferwallError("Save a postback URL first.")
    url = preview_url(
        template=offerwall.postback_url,
        offerwall=offerwall,
        api_key=api_key(box=box, offerwall=offerwall),
    )
    secrets = endpoints.signing_secrets(box, offerwall)
    with transport.http_client(settings, pool=1) as client:
        result = transport.send(
            client, url, allow_private=settings.postback_allow_private, secrets=secrets
        )
    return PostbackTrial(
        url,
        result.status_code,
        result.duration_ms,
        result.body_excerpt or "",
        result.error or "",
        result.sent,
    )


@dataclass(frozen=True)
class EndpointFailure:
    """One failed attempt as the workspace's banner lists it."""

    at: str
    answer: str  # "HTTP 500", or "No answer" when none came
    detail: str  # the error, or the start of the answer


@dataclass(frozen=True)
class EndpointHealth:
    """How the offerwall's postback endpoint is doing: paused (since when, how many
    postbacks wait), failing (failures in a row), or neither (every field empty)."""

    paused_since: str
    failing_since: str
    failures: int
    waiting: int
    errors: list[EndpointFailure]


def endpoint_health(*, session: Session, offerwall: Offerwall) -> EndpointHealth:
    """What the workspace's banner says; reads the attempts only when something failed."""
    paused, failing = offerwall.deliveries_paused_at, offerwall.failing_since
    if paused is None and offerwall.consecutive_failures == 0:
        return EndpointHealth("", "", 0, 0, [])
    errors = [
        EndpointFailure(
            at=_when(failed.started_at),
            answer="No answer" if failed.status_code is None else f"HTTP {failed.status_code}",
            detail=failed.error,
        )
        for failed in endpoints.last_errors(session, offerwall.id)
    ]
    return EndpointHealth(
        paused_since=_when(paused),
        failing_since=_when(failing),
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
    payout: str
    status: str
    attempts: int
    created_at: str
    next_attempt_at: str
    last_status: str


@dataclass(frozen=True)
class AttemptRow:
    started_at: str
    status_code: str
    duration_ms: int
    answer: str
    error: str
    sent: bool


def delivery_log(
    *, session: Session, offerwall: Offerwall, status: str = "", search: str = "", page: int = 1
) -> Window[DeliveryRow]:
    """The offerwall's postbacks newest first, by status, searched (in SQL) by the
    player's uid, the click id or the transaction id: any of them containing the text.
    A reversed conversion has two rows: its conversion's postback and its reversal's."""
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
            col(Mission.title),
            last_code,
            col(Click.uid),
            col(Click.clickid),
        )
        .join(Conversion, col(Conversion.id) == col(Postback.conversion_id))
        .join(Mission, col(Mission.id) == col(Conversion.mission_id))
        .join(Click, col(Click.id) == col(Conversion.click_id))
        .where(col(Postback.offerwall_id) == offerwall.id)
    )
    if status:
        query = query.where(col(Postback.status) == status)
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
                payout=format_money(
                    in_currency(
                        micros,
                        exchange_rate=offerwall.exchange_rate,
                        decimals=offerwall.currency_decimals,
                    ),
                    decimals=offerwall.currency_decimals,
                    code=offerwall.currency_code,
                ),
                status=pb.status,
                attempts=pb.attempts,
                created_at=_when(pb.created_at),
                next_attempt_at=_when(pb.next_attempt_at) if pb.status == "pending" else "",
                last_status="" if code is None else str(code),
            )
            for pb, txn, conversion_status, micros, title, code, uid, clickid in rows
        ],
        total,
        page,
        pages,
    )


def owned_postback(*, session: Session, offerwall: Offerwall, postback_id: int) -> Postback:
    """The postback if it belongs to the offerwall; the same error whether it exists or not."""
    postback = session.get(Postback, postback_id)
    if postback is None or postback.offerwall_id != offerwall.id:
        raise OfferwallError("No such postback.")
    return postback


def resend_postback(
    *, engine: Engine, account: Account | None, postback_id: int, requested: str = ""
) -> None:
    """Queue a postback of the account's offerwall (staff: the requested one) for one
    more attempt now. Another offerwall's postback is refused like one that does not
    exist. Raises SignedOut, Forbidden or OfferwallError."""
    with new_session(engine) as session:
        offerwall = offerwall_for(session=session, account=account, requested=requested)
        owned_postback(session=session, offerwall=offerwall, postback_id=postback_id)
    postbacks.resend(engine, postback_id)


def attempts(*, session: Session, postback: Postback) -> list[AttemptRow]:
    found = session.exec(
        select(PostbackAttempt)
        .where(PostbackAttempt.postback_id == postback.id)
        .order_by(col(PostbackAttempt.id))
    ).all()
    return [
        AttemptRow(
            started_at=_when(a.started_at),
            status_code="" if a.status_code is None else str(a.status_code),
            duration_ms=a.duration_ms,
            answer=a.body_excerpt or "",
            error=a.error or "",
            sent=a.sent,
        )
        for a in found
    ]


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""
