"""The offerwall's API key as the portal shows it: opened (`api_key`), revealed or rotated
for an account that entered its password again (`api.accounts.access.offerwall_after_password`).
Issuing and sealing a key, and the old key's grace, are api/publishers/offerwalls.py's
(`rotate_key`). Ownership is decided here by api/accounts/access.py (`offerwall_for`): a
publisher's own offerwall, staff the requested one."""

from __future__ import annotations

from sqlmodel import Session

from api import audit
from api.accounts import Account, offerwall_after_password
from api.core.crypto import SecretBox, open_api_key
from api.publishers import offerwalls
from api.publishers.offerwalls import OfferwallError
from models import Offerwall


def api_key(*, box: SecretBox, offerwall: Offerwall) -> str:
    """The offerwall's API key, opened. Raises OfferwallError before it is approved."""
    if offerwall.api_key_sealed is None or offerwall.owid is None:
        raise OfferwallError("The offerwall has no API key until it is approved.")
    return open_api_key(box, offerwall.api_key_sealed, owid=offerwall.owid)


def reveal_api_key(
    *, session: Session, box: SecretBox, account: Account, password: str, requested: str = ""
) -> str:
    """The offerwall's API key, for an account that re-entered its password. Raises
    Forbidden, LoginThrottled, AccountError (field "password") or OfferwallError."""
    offerwall = offerwall_after_password(
        session=session, box=box, account=account, password=password, requested=requested
    )
    key = api_key(box=box, offerwall=offerwall)
    audit.record(  # who saw the key, and when: never the key
        session,
        "offerwall.api_key_revealed",
        target_type="offerwall",
        target_id=offerwall.id,
        target_name=offerwall.name,
        scope=("offerwall", offerwall.id),
    )
    return key


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
    its password: a rotation shows a key, as a reveal does. The old key keeps the grace
    picked (offerwalls.rotate_key). Raises Forbidden, LoginThrottled, AccountError (field
    "password") or OfferwallError."""
    offerwall = offerwall_after_password(
        session=session, box=box, account=account, password=password, requested=requested
    )
    issued = offerwalls.rotate_key(session=session, box=box, offerwall=offerwall, grace=grace)
    return issued.api_key, offerwall
