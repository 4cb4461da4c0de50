"""Offerwalls: create, approve (owid + API key), reject, suspend, reinstate, settings."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from sqlmodel import Session, select

from api.core.crypto import SecretBox, new_token, seal_api_key
from models import Offerwall, OfferwallStatus
from models.types import utcnow

CURRENCY_CODE = re.compile(r"[A-Z]{3}")


class OfferwallError(ValueError):
    """An offerwall operation the rules forbid."""


@dataclass(frozen=True)
class IssuedKey:
    """An API key as shown once (on approval or rotation)."""

    offerwall_id: str
    owid: str
    api_key: str


def create_offerwall(*, session: Session, name: str) -> Offerwall:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise OfferwallError("an offerwall's name must be 1 to 200 characters")
    offerwall = Offerwall(name=name)
    session.add(offerwall)
    session.flush()
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


def approve(*, session: Session, box: SecretBox, offerwall: Offerwall) -> IssuedKey:
    """Approve a pending (or rejected) offerwall: it gets its owid and API key."""
    if offerwall.status not in (OfferwallStatus.PENDING, OfferwallStatus.REJECTED):
        raise OfferwallError(f"offerwall is {offerwall.status}; only a pending one is approved")
    offerwall.status = OfferwallStatus.APPROVED
    offerwall.approved_at = utcnow()
    offerwall.owid = offerwall.owid or _new_owid()
    return _issue_key(session, box, offerwall)


def rotate_key(*, session: Session, box: SecretBox, offerwall: Offerwall) -> IssuedKey:
    """Replace the API key; the old one stops working at once."""
    if offerwall.owid is None:
        raise OfferwallError("the offerwall is not approved yet")
    return _issue_key(session, box, offerwall)


def set_status(*, session: Session, offerwall: Offerwall, status: OfferwallStatus) -> Offerwall:
    """Reject, suspend or reinstate (approved) an offerwall."""
    allowed = {
        OfferwallStatus.REJECTED: {OfferwallStatus.PENDING},
        OfferwallStatus.SUSPENDED: {OfferwallStatus.APPROVED},
        OfferwallStatus.APPROVED: {OfferwallStatus.SUSPENDED},
    }
    if offerwall.status not in allowed.get(status, set()):
        raise OfferwallError(f"an offerwall that is {offerwall.status} cannot become {status}")
    offerwall.status = status
    session.add(offerwall)
    session.flush()
    return offerwall


def set_postback_url(*, session: Session, offerwall: Offerwall, url: str | None) -> Offerwall:
    if url is not None:
        url = url.strip()
        if not url.lower().startswith(("http://", "https://")) or len(url) > 2048:
            raise OfferwallError(
                "the postback URL must be an http(s) URL of at most 2048 characters"
            )
    offerwall.postback_url = url or None
    session.add(offerwall)
    session.flush()
    return offerwall


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
    offerwall.currency_name = name.strip()
    offerwall.currency_code = code
    offerwall.exchange_rate = float(exchange_rate)
    offerwall.currency_decimals = decimals
    session.add(offerwall)
    session.flush()
    return offerwall


def find_by_api_key(*, session: Session, box: SecretBox, api_key: str) -> Offerwall | None:
    """The offerwall whose API key this is (looked up by keyed digest), whatever its status."""
    digests = box.candidate_digests(api_key)
    return session.exec(select(Offerwall).where(Offerwall.api_key_digest.in_(digests))).first()  # type: ignore[union-attr]


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
