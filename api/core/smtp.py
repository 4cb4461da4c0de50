"""Sending one e-mail through the SMTP server of `SMTP_URL` (aiosmtplib).

The URL's forms (README, Configuration):

- `smtp://user:pass@host:587`: STARTTLS when the server offers it (port 587 by default);
  `?starttls=1` requires it, `?starttls=0` never upgrades (a local relay).
- `smtps://user:pass@host:465`: TLS from the first byte (port 465 by default).

User name and password are optional and percent-encoded like any URL's. The password
never appears in a log line, an error or a repr.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

import aiosmtplib

SCHEMES = {"smtp": 587, "smtps": 465}
EXAMPLE = "smtp://user:password@mail.example.com:587?starttls=1 or smtps://user:password@host:465"


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    implicit_tls: bool
    # True: STARTTLS required; False: never; None: when the server offers it.
    starttls: bool | None
    username: str = ""
    password: str = field(default="", repr=False)

    def describe(self) -> str:
        """Where mail goes, for messages and logs: no user name, no password."""
        return f"{'smtps' if self.implicit_tls else 'smtp'}://{self.host}:{self.port}"


def parse_smtp_url(url: str) -> SmtpServer:
    """The server an `SMTP_URL` names; ValueError says what is wrong (without the password)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in SCHEMES:
        raise ValueError(f"use {EXAMPLE}")
    try:
        port = parts.port or SCHEMES[parts.scheme]
    except ValueError:
        raise ValueError(f"the port is not a number; use {EXAMPLE}") from None
    if not parts.hostname:
        raise ValueError(f"the server's host name is missing; use {EXAMPLE}")
    query = parse_qs(parts.query)
    starttls: bool | None = None
    if "starttls" in query:
        value = query["starttls"][-1]
        if value not in ("0", "1"):
            raise ValueError("starttls is 1 (required) or 0 (never)")
        starttls = value == "1"
    if parts.scheme == "smtps" and starttls:
        raise ValueError("smtps:// is TLS from the start: leave out starttls")
    return SmtpServer(
        host=parts.hostname,
        port=port,
        implicit_tls=parts.scheme == "smtps",
        starttls=False if parts.scheme == "smtps" else starttls,
        username=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
    )


def send_message(server: SmtpServer, message: EmailMessage, *, timeout: float = 20.0) -> None:
    """Send one message, blocking: on an event loop of its own, in this thread, or in a
    thread of its own when this one already runs a loop (an async caller).

    Raises aiosmtplib.SMTPException (a 5xx code in `.code` is a permanent refusal) or
    OSError / TimeoutError when the server cannot be reached."""

    def send() -> None:
        asyncio.run(
            aiosmtplib.send(
                message,
                hostname=server.host,
                port=server.port,
                username=server.username or None,
                password=server.password or None,
                use_tls=server.implicit_tls,
                start_tls=server.starttls,
                timeout=timeout,
            )
        )

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        send()
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(send).result()
