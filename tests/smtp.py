"""A real SMTP server for tests (aiosmtpd) on a free local port, keeping what it receives."""

from __future__ import annotations

import email
import email.policy
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from tests.live import free_port


class MailCatcher:
    """The server's handler: every message it took, or the refusal it answers with."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.logins: list[tuple[str, str]] = []
        self.refuse_with = ""  # e.g. "550 No such user here": refuse every message
        self.url = ""
        self._arrived = threading.Condition()

    async def handle_DATA(self, server, session, envelope) -> str:
        if self.refuse_with:
            return self.refuse_with
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        with self._arrived:
            self.messages.append(message)  # type: ignore[arg-type]
            self._arrived.notify_all()
        return "250 Message accepted"

    def wait_for(self, to: str, *, timeout: float = 10.0, subject: str = "") -> EmailMessage:
        """The first message to `to` (with `subject` in its subject), waiting for it."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for message in self.messages:
                    if message["To"] == to and subject in str(message["Subject"]):
                        return message
                left = deadline - time.monotonic()
                assert left > 0, f"no message to {to} within {timeout} s: {self.messages}"
                self._arrived.wait(left)


def text_of(message: EmailMessage) -> str:
    return message.get_content().replace("\r\n", "\n")


def reset_link(message: EmailMessage) -> str:
    [link] = re.findall(r"https?://\S+/reset-password#token=\S+", text_of(message))
    return link


@contextmanager
def smtp_server(*, login: tuple[str, str] | None = None) -> Iterator[MailCatcher]:
    """An SMTP server on 127.0.0.1 until the block ends; `catcher.url` is its SMTP_URL
    (with `login`, it asks for that user name and password, over plain SMTP)."""
    catcher = MailCatcher()
    port = free_port()
    options = {}
    if login is not None:

        def authenticate(server, session, envelope, mechanism, auth_data) -> AuthResult:
            given = (auth_data.login.decode(), auth_data.password.decode())
            catcher.logins.append(given)
            return AuthResult(success=given == login)

        options = {"authenticator": authenticate, "auth_require_tls": False, "auth_required": True}
    controller = Controller(catcher, hostname="127.0.0.1", port=port, **options)
    controller.start()
    user = f"{login[0]}:{login[1]}@" if login else ""
    catcher.url = f"smtp://{user}127.0.0.1:{port}?starttls=0"
    try:
        yield catcher
    finally:
        controller.stop()
