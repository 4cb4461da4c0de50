"""A publisher's signup (the portal's sign-up page, `questwall demo`): an application for
an offerwall and the account that follows it. The offerwall is created pending
(api/publishers/offerwalls.py, `create_offerwall`) and staff approve or reject it; the
account's rules (email, password) are api/accounts/sessions.py's."""

from __future__ import annotations

from sqlmodel import Session

from api.accounts import AccountError, Client, account_problems, create_user
from api.publishers.offerwalls import create_offerwall
from models import Role, User


def signup_publisher(
    *,
    session: Session,
    company: str,
    website: str,
    contact: str,
    email: str,
    password: str,
    confirm: str | None = None,
    client: Client | None = None,
) -> User:
    """A publisher's application: a pending offerwall and its account. Refused with
    every input's problem at once; `confirm`, when given, must repeat the password. The
    account's creation is recorded as done by itself from `client` (the signup's)."""
    company, contact, website = company.strip(), contact.strip(), website.strip()
    problems: dict[str, str] = {}
    if not 2 <= len(company) <= 200:
        problems["company"] = "Enter your company's name (2 to 200 characters)."
    if not website.lower().startswith(("http://", "https://")) or len(website) > 2048:
        problems["website"] = "Enter your website as a full URL, e.g. https://example.com."
    if not 2 <= len(contact) <= 200:
        problems["contact"] = "Enter the name of a contact person."
    problems |= account_problems(session=session, email=email, password=password)
    if confirm is not None and confirm != password:
        problems["confirm"] = "The two passwords differ."
    if problems:
        raise AccountError.several(problems)
    offerwall = create_offerwall(
        session=session,
        name=company,
        website=website,
        contact_name=contact,
        action="publisher.signed_up",
    )
    return create_user(
        session=session,
        email=email,
        password=password,
        role=Role.PUBLISHER,
        name=contact,
        offerwall_id=offerwall.id,
        client=client,
    )
