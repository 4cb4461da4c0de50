"""SMTP_URL's forms, and what a wrong one is refused with (never its password)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from api.accounts import passwords
from api.core.config import Settings
from api.core.smtp import SmtpServer, parse_smtp_url
from api.publishers import offerwalls
from portal import routes


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("smtp://mail.example.com", SmtpServer("mail.example.com", 587, False, None)),
        (
            "smtp://user:p%40ss@mail.example.com:2525?starttls=1",
            SmtpServer("mail.example.com", 2525, False, True, "user", "p@ss"),
        ),
        ("smtp://relay.internal:25?starttls=0", SmtpServer("relay.internal", 25, False, False)),
        (
            "smtps://u:p@mail.example.com",
            SmtpServer("mail.example.com", 465, True, False, "u", "p"),
        ),
    ],
)
def test_the_forms_of_smtp_url(url, expected):
    assert parse_smtp_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "http://user:hunter2@mail.example.com",
        "smtp://user:hunter2@:25",
        "smtp://user:hunter2@mail.example.com?starttls=yes",
        "smtps://user:hunter2@mail.example.com?starttls=1",
        "smtp://user:hunter2@mail.example.com:port",
    ],
)
def test_a_wrong_smtp_url_is_refused_without_showing_its_password(url):
    with pytest.raises(ValidationError) as refused:
        Settings(SMTP_URL=url)
    assert "hunter2" not in str(refused.value)
    assert "SMTP_URL" in str(refused.value)


def test_the_password_is_in_no_repr():
    settings = Settings(SMTP_URL="smtp://user:hunter2@mail.example.com")
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in repr(parse_smtp_url(settings.smtp_url))
    assert parse_smtp_url(settings.smtp_url).describe() == "smtp://mail.example.com:587"


def test_the_sender_defaults_to_the_portals_host():
    assert Settings(BASE_URL="https://portal.example.com/").sender == (
        "Questwall <noreply@portal.example.com>"
    )
    assert Settings(MAIL_FROM="Rewards <r@example.com>").sender == "Rewards <r@example.com>"


def test_links_in_mails_lead_to_the_portals_pages():
    assert passwords.RESET_PATH == routes.RESET_PAGE
    assert offerwalls.WORKSPACE_PATH == routes.PUBLISHER
    assert offerwalls.APPLICATION_PATH == routes.APPLICATION
