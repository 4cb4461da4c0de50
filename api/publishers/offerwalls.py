"""Offerwalls, the one owner of their lifecycle and settings.

Apply (create a pending offerwall: the CLI and the publisher signup), approve (owid and
API key), reject with a reason, suspend, reinstate, rotate the key, and the currency and
postback settings. The CLI and the portal both call these functions, so an offerwall
follows the same rules whoever acts on it, and its publisher gets the same mail on
approval and rejection."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, select

from api import audit
from api.core.crypto import SecretBox, new_token, seal_api_key
from api.core.refusals import DomainError
from api.mail import outbox as mail
from api.postbacks import endpoint as endpoints
from models import Offerwall, OfferwallStatus, User
from models.types import utcnow

CURRENCY_CODE = re.compile(r"[A-Z]{3}")
# A rejection reason's length, once stripped.
REASON_MIN, REASON_MAX = 3, 1000
# Portal pages the publisher's mails link to (portal/routes.py; a unit test keeps them equal).
WORKSPACE_PATH = "/publisher"
APPLICATION_PATH = "/account/application"


class OfferwallError(DomainError, ValueError):
    """An offerwall operation the rules forbid."""


@dataclass(frozen=True)
class IssuedKey:
    """An API key as shown once (on approval or rotation)."""

    offerwall_id: str
    owid: str
    api_key: str


def create_offerwall(
    *,
    session: Session,
    name: str,
    website: str | None = None,
    contact_name: str | None = None,
    action: str = "offerwall.created",
) -> Offerwall:
    """Apply: a new pending offerwall, with no owid or API key until it is approved
    (recorded as `action`: a publisher's signup names its own)."""
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise OfferwallError("an offerwall's name must be 1 to 200 characters")
    offerwall = Offerwall(name=name, website=website, contact_name=contact_name)
    session.add(offerwall)
    session.flush()
    _audit(
        session,
        offerwall,
        action,
        name=[None, name],
        website=[None, website],
        contact_name=[None, contact_name],
        status=[None, offerwall.status],
    )
    return offerwall


def get_offerwall(*, session: Session, ref: str) -> Offerwall:
    """Find an offerwall by its id or its owid."""
    found = (
        session.get(Offerwall, ref)
        or session.exec(select(Offerwall).where(Offerwall.owid == ref)).first()
    )
    if found is None:
        raise OfferwallError(f"no offerwall {ref}")
    return found


# The lifecycle, in one place for the CLI and the portal alike: each step and the
# statuses it may start from. Anything else is refused with the same OfferwallError,
# whoever asks (approving a suspended offerwall is a reinstatement, not an approval;
# a pending one has nothing to suspend).
_STARTS_FROM: dict[str, frozenset[OfferwallStatus]] = {
    "approved": frozenset({OfferwallStatus.PENDING, OfferwallStatus.REJECTED}),
    "rejected": frozenset({OfferwallStatus.PENDING}),
    "suspended": frozenset({OfferwallStatus.APPROVED}),
    "reinstated": frozenset({OfferwallStatus.SUSPENDED}),
    # A suspended publisher's key may still leak: staff can replace it before reinstating.
    "given a new API key": frozenset({OfferwallStatus.APPROVED, OfferwallStatus.SUSPENDED}),
}


def approve(*, session: Session, box: SecretBox, offerwall: Offerwall) -> IssuedKey:
    """Approve a pending or rejected offerwall: it gets its owid and a new API key (shown
    once, in the result), and any earlier rejection reason is cleared."""
    _require_status(offerwall, "approved")
    _audit(session, offerwall, "offerwall.approved", status=[offerwall.status, "approved"])
    offerwall.status = OfferwallStatus.APPROVED
    offerwall.approved_at = utcnow()
    offerwall.rejection_reason = None
    offerwall.owid = offerwall.owid or _new_owid()
    issued = _issue_key(session, box, offerwall)
    if offerwall.signing_secret_sealed is None:
        endpoints.new_signing_secret(box, offerwall)
    _tell_publisher(
        session,
        offerwall,
        subject=f"{offerwall.name} is approved on Questwall",
        body=(
            f"Good news: {offerwall.name} is approved on Questwall.\n\n"
            f"Your offerwall id (owid) is {offerwall.owid}.\n\n"
            "Your workspace shows your tracking link and your API key (after you enter your "
            "password again), and is where you set your currency and your postback URL:\n"
            f"{mail.portal_url(WORKSPACE_PATH)}\n"
        ),
    )
    return issued


def rejection_reason_problem(reason: str) -> str | None:
    """Why this rejection reason is refused, or None. The publisher reads the reason on
    their application page, so it must say something."""
    if not REASON_MIN <= len(reason.strip()) <= REASON_MAX:
        return f"Give the publisher a reason ({REASON_MIN} to {REASON_MAX} characters)."
    return None


def reject(*, session: Session, offerwall: Offerwall, reason: str) -> Offerwall:
    """Reject a pending offerwall with a reason (required: see rejection_reason_problem)."""
    problem = rejection_reason_problem(reason)
    if problem is not None:
        raise OfferwallError(problem)
    _require_status(offerwall, "rejected")
    _audit(
        session,
        offerwall,
        "offerwall.rejected",
        status=[offerwall.status, "rejected"],
        rejection_reason=[offerwall.rejection_reason, reason.strip()],
    )
    offerwall.rejection_reason = reason.strip()
    _tell_publisher(
        session,
        offerwall,
        subject=f"Your application for {offerwall.name} on Questwall",
        body=(
            f"We have looked at your application for {offerwall.name} and cannot approve it "
            f"as it is. The reason:\n\n{offerwall.rejection_reason}\n\n"
            "You can read it again on your application page:\n"
            f"{mail.portal_url(APPLICATION_PATH)}\n"
        ),
    )
    return _move(session, offerwall, OfferwallStatus.REJECTED)


def _tell_publisher(session: Session, offerwall: Offerwall, *, subject: str, body: str) -> None:
    """Mail the offerwall's publisher account, if it has one (`questwall offerwall create`
    makes offerwalls without). Never the API key: it is shown in the workspace only."""
    email = session.exec(select(User.email).where(User.offerwall_id == offerwall.id)).first()
    if email:
        mail.enqueue(session, to=email, subject=subject, body=body)


def suspend(*, session: Session, offerwall: Offerwall) -> Offerwall:
    """Suspend an approved offerwall: its API key and tracking links stop working at once."""
    _require_status(offerwall, "suspended")
    _audit(session, offerwall, "offerwall.suspended", status=[offerwall.status, "suspended"])
    return _move(session, offerwall, OfferwallStatus.SUSPENDED)


def reinstate(*, session: Session, offerwall: Offerwall) -> Offerwall:
    """Approve a suspended offerwall again, with the owid and API key it had."""
    _require_status(offerwall, "reinstated")
    _audit(session, offerwall, "offerwall.reinstated", status=[offerwall.status, "approved"])
    return _move(session, offerwall, OfferwallStatus.APPROVED)


# How long a replaced API key keeps working, as the publisher picks it: none is for a key
# that leaked; an hour or a day lets servers that still send the old key move over.
KEY_GRACE: dict[str, timedelta] = endpoints.OVERLAP


def rotate_key(
    *, session: Session, box: SecretBox, offerwall: Offerwall, grace: str = "none"
) -> IssuedKey:
    """Replace the API key of an approved or suspended offerwall. The old one keeps working
    for the grace period (`KEY_GRACE`), then gets 401; with none it stops at once. A key
    still in an earlier grace period stops now: only the last replaced key has grace."""
    if grace not in KEY_GRACE:
        raise OfferwallError("the grace period is none, 1h or 24h")
    _require_status(offerwall, "given a new API key")
    period = KEY_GRACE[grace]
    kept = bool(period and offerwall.api_key_digest)
    offerwall.api_key_previous_digest = offerwall.api_key_digest if kept else None
    # Sealed too: `questwall rotate-secrets` recomputes its digest under a new master key,
    # and the hosted wall checks links signed with it (api/wall/page.py).
    offerwall.api_key_previous_sealed = offerwall.api_key_sealed if kept else None
    offerwall.api_key_previous_until = utcnow() + period if kept else None
    # Recorded as rotated, with the grace picked: neither key is a value.
    _audit(session, offerwall, "offerwall.api_key_rotated", grace=[None, grace])
    return _issue_key(session, box, offerwall)


def key_grace_until(offerwall: Offerwall) -> datetime | None:
    """Until when the replaced API key still works, or None (none, or its grace is over)."""
    until = offerwall.api_key_previous_until
    if offerwall.api_key_previous_digest is None or until is None or until <= utcnow():
        return None
    return until


def _require_status(offerwall: Offerwall, step: str) -> None:
    allowed = _STARTS_FROM[step]
    if offerwall.status not in allowed:
        starts = " or ".join(sorted(allowed))
        raise OfferwallError(
            f"This offerwall is {offerwall.status}: only one that is {starts} can be {step}."
        )


def _move(session: Session, offerwall: Offerwall, status: OfferwallStatus) -> Offerwall:
    offerwall.status = status
    session.add(offerwall)
    session.flush()
    return offerwall


def _checked_url(url: str | None, what: str) -> str | None:
    """A postback template as stored (stripped; empty is None), or OfferwallError."""
    url = (url or "").strip()
    if url and (not url.lower().startswith(("http://", "https://")) or len(url) > 2048):
        raise OfferwallError(f"the {what} must be an http(s) URL of at most 2048 characters")
    return url or None


def set_postback_url(*, session: Session, offerwall: Offerwall, url: str | None) -> Offerwall:
    return _set_url(session, offerwall, "postback_url", _checked_url(url, "postback URL"))


def set_reversal_url(*, session: Session, offerwall: Offerwall, url: str | None) -> Offerwall:
    """Where reversal postbacks go; empty: to the postback URL, like conversions."""
    return _set_url(session, offerwall, "reversal_url", _checked_url(url, "reversal URL"))


def _set_url(session: Session, offerwall: Offerwall, field: str, url: str | None) -> Offerwall:
    """Point the offerwall's `field` at `url` (checked), recorded when it changes."""
    before = getattr(offerwall, field)
    if url != before:
        _audit(session, offerwall, f"offerwall.{field}_changed", **{field: [before, url]})
    setattr(offerwall, field, url)
    session.add(offerwall)
    session.flush()
    return offerwall


def note_settings(
    session: Session,
    offerwall: Offerwall,
    action: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Record a change of the offerwall's settings (`action`), each changed field before
    and after; nothing when none changed."""
    audit.note_changed(session, action, audit.Target.offerwall(offerwall), before, after)


def _audit(session: Session, offerwall: Offerwall, action: str, **changes: list[Any]) -> None:
    """An audit event of the offerwall, in its own scope (its publisher's views); the
    values unchanged are left out."""
    plain = {name: [getattr(v, "value", v) for v in pair] for name, pair in changes.items()}
    audit.note(
        session,
        action,
        audit.Target.offerwall(offerwall),
        {name: pair for name, pair in plain.items() if pair[0] != pair[1]},
    )


def set_currency(
    *,
    session: Session,
    offerwall: Offerwall,
    name: str,
    code: str,
    exchange_rate: float,
    decimals: int,
) -> Offerwall:
    if not CURRENCY_CODE.fullmatch(code):
        raise OfferwallError("the currency code is 3 capital letters, e.g. USD")
    if not 1 <= len(name.strip()) <= 64:
        raise OfferwallError("the currency name must be 1 to 64 characters")
    if not exchange_rate > 0:
        raise OfferwallError("the exchange rate must be positive")
    if not 0 <= decimals <= 8:
        raise OfferwallError("decimals must be between 0 and 8")
    wanted = {
        "currency_name": name.strip(),
        "currency_code": code,
        "exchange_rate": float(exchange_rate),
        "currency_decimals": decimals,
    }
    before = {field: getattr(offerwall, field) for field in wanted}
    note_settings(session, offerwall, "offerwall.currency_changed", before, wanted)
    for field, value in wanted.items():
        setattr(offerwall, field, value)
    session.add(offerwall)
    session.flush()
    return offerwall


def _issue_key(session: Session, box: SecretBox, offerwall: Offerwall) -> IssuedKey:
    if offerwall.owid is None:
        raise OfferwallError("the offerwall is not approved yet")
    api_key = new_token("qw_ak_")
    offerwall.api_key_sealed = seal_api_key(box, api_key, owid=offerwall.owid)
    offerwall.api_key_digest = box.digest(api_key)
    session.add(offerwall)
    session.flush()
    return IssuedKey(offerwall.id, offerwall.owid, api_key)


def _new_owid() -> str:
    alphabet = "abcdefghijkmnpqrstuvwxyz23456789"  # no look-alikes
    return "ow" + "".join(secrets.choice(alphabet) for _ in range(10))
