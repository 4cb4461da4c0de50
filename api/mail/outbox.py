"""The mail outbox: every message is stored first, then delivered from the table.

`enqueue` adds a message to the caller's transaction, so a message exists exactly when
the action that sends it committed. When that transaction commits, the senders of this
process (`MailSender`, run by `questwall serve` and `questwall worker` when `SMTP_URL` is
set) are woken and send it at once; a server that does not answer leaves it queued for a
later attempt, so an action never fails because of mail and no message is lost. Without
`SMTP_URL` messages stay queued: staff read them on the "Mail outbox" page.

Nothing here logs a message's body (it may hold a reset link) or the SMTP password.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

import aiosmtplib
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import Session, col

from api.core import outbox
from api.core.config import Settings, get_settings
from api.core.db import write_session
from api.core.paging import Window, paged, searched
from api.core.smtp import parse_smtp_url, send_message
from api.ops import count_attempt, delivered_on_commit
from models import MailMessage, MailStatus
from models.types import utcnow

log = logging.getLogger("questwall.mail")

# The pause before each next attempt; after the last one the message has failed.
RETRY_DELAYS = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(hours=1),
    timedelta(hours=4),
)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LEASE = timedelta(seconds=120)
BATCH = 20
# Sent and failed messages are kept this long, then `questwall prune` removes them.
KEPT_FOR = timedelta(days=30)
REDACTED = "(The reset link is removed from the outbox once the message is {}.)"


def enqueue(
    session: Session,
    *,
    to: str,
    subject: str,
    body: str,
    sensitive: bool = False,
    expires_at: datetime | None = None,
) -> MailMessage:
    """Store a message in the caller's transaction; it is sent once that commits.

    `sensitive` marks a body that holds a secret (a reset link): staff never read it while
    mail goes out through SMTP, and it is blanked once sent. A message still unsent at
    `expires_at` is given up rather than sent stale."""
    message = MailMessage(
        to_address=to,
        subject=subject[:200],
        body=body,
        sensitive=sensitive,
        expires_at=expires_at,
    )
    session.add(message)
    session.flush()
    outbox.queued(session, MailSender.kind)
    return message


def portal_url(path: str) -> str:
    """An address in the portal for a link in a message: `BASE_URL` and the path."""
    return get_settings().base_url + path


# --- delivery ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Claimed:
    id: int
    to_address: str
    subject: str
    body: str


def claim(engine: Engine, *, limit: int = BATCH) -> list[_Claimed]:
    """Take due queued messages for this sender until the lease ends (another sender skips
    them meanwhile); messages past their `expires_at` are given up instead."""
    now = utcnow()
    table = MailMessage.__table__  # type: ignore[attr-defined]
    with write_session(engine) as session:
        session.execute(
            sa.update(table)
            .where(table.c.status == MailStatus.QUEUED, table.c.expires_at < now)
            .values(
                status=MailStatus.FAILED,
                last_error="Not sent before it expired.",
                body=sa.case((table.c.sensitive, REDACTED.format("given up")), else_=table.c.body),
                lease_until=None,
            )
        )
    columns = ("id", "to_address", "subject", "body")
    due = outbox.claim_due(engine, table, columns, now=now, lease=LEASE, limit=limit)
    return [_Claimed(*row) for row in due]


def _record(engine: Engine, message_id: int, error: str | None, *, permanent: bool) -> None:
    """The outcome of one attempt: sent, or failed with its error (queued again after the
    next pause, unless the server refused it for good or it was the last attempt)."""
    now = utcnow()
    with write_session(engine) as session:
        message = session.get(MailMessage, message_id)
        if message is None:
            return
        message.attempts += 1
        message.lease_until = None
        message.last_error = error
        if error is None:
            message.status, message.sent_at = MailStatus.SENT, now
            delivered_on_commit(session, "mail", message.created_at, now)
        elif permanent or message.attempts >= MAX_ATTEMPTS:
            message.status = MailStatus.FAILED
        else:
            message.next_attempt_at = now + RETRY_DELAYS[message.attempts - 1]
        if message.sensitive and message.status != MailStatus.QUEUED:
            message.body = REDACTED.format("sent" if error is None else "given up")
        session.add(message)


class MailSender(outbox.OutboxSender):
    """Sends queued messages through `SMTP_URL`: at once when a transaction that queued
    one commits in this process, and every `poll` seconds for retries and for messages
    queued by other processes (the CLI)."""

    kind = "mail"

    def __init__(self, *, engine: Engine, settings: Settings, poll: float = 15.0):
        super().__init__(poll=poll)
        self.engine, self.settings = engine, settings
        self.server = parse_smtp_url(settings.smtp_url)

    def run_once(self) -> int:
        """Claim and try every due message once; returns how many were tried."""
        claimed = claim(self.engine)
        for message in claimed:
            started = time.perf_counter()
            error, permanent = self._send(message)
            took = time.perf_counter() - started
            _record(self.engine, message.id, error, permanent=permanent)
            outcome = "delivered" if error is None else "refused" if permanent else "error"
            count_attempt(
                "mail", status_code=None, sent=True, duration_seconds=took, outcome=outcome
            )
        return len(claimed)

    def _send(self, message: _Claimed) -> tuple[str | None, bool]:
        """Send one message: (None, _) when the server took it, else (error, permanent)."""
        try:
            send_message(self.server, self._email(message))
        except aiosmtplib.SMTPRecipientsRefused as exc:
            refused = exc.recipients[0] if exc.recipients else None
            code, text = (refused.code, refused.message) if refused else (550, "refused")
            return self._refused(message, code, text)
        except aiosmtplib.SMTPResponseException as exc:
            return self._refused(message, exc.code, exc.message)
        except Exception as exc:  # unreachable, timed out, TLS: try again later
            log.warning("mail %s not sent to %s: %s", message.id, self.server.describe(), exc)
            return f"{self.server.describe()} did not take it: {exc}"[:500], False
        return None, False

    def _refused(self, message: _Claimed, code: int, text: str) -> tuple[str, bool]:
        """The server answered with an error code: 5xx is for good, 4xx worth retrying."""
        log.warning("mail %s refused by %s: %s", message.id, self.server.describe(), code)
        return f"The mail server answered {code}: {text}"[:500], code >= 500

    def _email(self, message: _Claimed) -> EmailMessage:
        email = EmailMessage()
        email["From"] = self.settings.sender
        email["To"] = message.to_address
        email["Subject"] = message.subject
        email["Date"] = formatdate(usegmt=True)
        email["Message-ID"] = make_msgid(domain=self.server.host)
        email.set_content(message.body)
        return email


# --- the staff's outbox page ------------------------------------------------------


@dataclass(frozen=True)
class MailRow:
    id: int
    to_address: str
    subject: str
    status: str
    attempts: int
    created_at: datetime
    sent_at: datetime | None
    last_error: str


def list_messages(
    *, session: Session, status: str = "", search: str = "", page: int = 1
) -> Window[MailRow]:
    """The outbox newest first, by status and a search over address and subject."""
    query = sa.select(MailMessage)
    if status:
        query = query.where(col(MailMessage.status) == status)
    query = searched(query, search, col(MailMessage.to_address), col(MailMessage.subject))
    rows, total, page, pages = paged(session, query.order_by(col(MailMessage.id).desc()), page)
    return Window([_row(m) for (m,) in rows], total, page, pages)


def _row(m: MailMessage) -> MailRow:
    return MailRow(
        m.id or 0,
        m.to_address,
        m.subject,
        m.status,
        m.attempts,
        m.created_at,
        m.sent_at,
        m.last_error or "",
    )


def readable_body(*, session: Session, message_id: int, smtp_configured: bool) -> str:
    """A message's text as staff may read it: a reset link only while the outbox is where
    mail goes (no SMTP_URL); once mail goes out by SMTP it is for its recipient alone."""
    message = session.get(MailMessage, message_id)
    if message is None:
        return ""
    if message.sensitive and smtp_configured:
        return "This message holds a password reset link, which only its recipient reads."
    return message.body


def prune(session: Session, now: datetime) -> int:
    """Delete sent and failed messages older than `KEPT_FOR`."""
    return outbox.prune_done(session, MailMessage.__table__, now, KEPT_FOR)  # type: ignore[attr-defined]
