"""The postback signing secret as the portal shows it (docs/publisher-integration.md#signatures):
revealed once, or rotated, each only after the account entered its password again
(`api.accounts.access.offerwall_after_password`). Sealing the secret, the overlap and which secrets
sign now are api/postbacks/endpoint.py's. Ownership is decided here by
api/accounts/access.py (`offerwall_for`): a publisher's own offerwall, staff the requested
one."""

from __future__ import annotations

from sqlmodel import Session

from api.accounts import Account, offerwall_after_password
from api.core.crypto import SecretBox
from api.postbacks import endpoint as endpoints
from models import Offerwall


def reveal_signing_secret(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str = ""
) -> str:
    """The offerwall's postback signing secret, once, for an account that re-entered its
    password: afterwards only a rotation shows one. Commit the session after: the reveal
    is recorded in it. Raises Forbidden, LoginThrottled, AccountError (field "password")
    or EndpointError (shown already)."""
    offerwall = offerwall_after_password(
        session=session, box=box, account=account, password=password, requested=requested
    )
    return endpoints.reveal_signing_secret(session=session, box=box, offerwall=offerwall)


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
    password; the old secret also signs for the overlap picked
    (endpoints.rotate_signing_secret). Raises Forbidden, LoginThrottled, AccountError
    (field "password") or EndpointError."""
    offerwall = offerwall_after_password(
        session=session, box=box, account=account, password=password, requested=requested
    )
    secret = endpoints.rotate_signing_secret(
        session=session, box=box, offerwall=offerwall, overlap=overlap
    )
    return secret, offerwall
