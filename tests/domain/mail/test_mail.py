"""The mail outbox: stored with the action's transaction, sent through a real SMTP server
right after the commit, kept and retried when the server is down, never lost."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from api.core.db import new_session, write_session
from api.mail import outbox as mail
from models import MailMessage, MailStatus
from models.types import utcnow
from tests.live import free_port
from tests.smtp import smtp_server, text_of


def queue(engine, to="ada@example.com", **fields) -> int:
    fields.setdefault("subject", "Hello")
    fields.setdefault("body", "A line of text.\n")
    with write_session(engine) as session:
        return mail.enqueue(session, to=to, **fields).id


def stored(engine, message_id: int) -> MailMessage:
    with new_session(engine) as session:
        return session.get(MailMessage, message_id)


def sender(engine, settings, url: str) -> mail.MailSender:
    return mail.MailSender(engine=engine, settings=settings.model_copy(update={"smtp_url": url}))


def test_without_smtp_a_message_stays_queued_in_the_outbox(engine):
    message_id = queue(engine, subject="Your application")
    with new_session(engine) as session:
        window = mail.list_messages(session=session)
        body = mail.readable_body(session=session, message_id=message_id, smtp_configured=False)
    [row] = window.rows
    assert (row.to_address, row.subject, row.status, row.attempts) == (
        "ada@example.com",
        "Your application",
        "queued",
        0,
    )
    assert body == "A line of text.\n"


def test_a_message_rolled_back_with_its_action_is_not_stored(engine):
    with pytest.raises(RuntimeError), write_session(engine) as session:
        mail.enqueue(session, to="ada@example.com", subject="Hi", body="x")
        raise RuntimeError("the action failed")
    with new_session(engine) as session:
        assert session.exec(select(MailMessage)).all() == []


def test_a_queued_message_goes_out_through_smtp_and_is_marked_sent(engine, settings):
    message_id = queue(engine, subject="Welcome")
    with smtp_server() as server:
        assert sender(engine, settings, server.url).run_once() == 1
        received = server.wait_for("ada@example.com")
    assert received["Subject"] == "Welcome"
    assert received["From"] == "Questwall <noreply@localhost>"
    assert text_of(received) == "A line of text.\n"
    sent = stored(engine, message_id)
    assert (sent.status, sent.attempts, sent.last_error) == (MailStatus.SENT, 1, None)
    assert sent.sent_at is not None


def test_mail_from_sets_the_sender(engine, settings):
    queue(engine)
    with smtp_server() as server:
        own = settings.model_copy(update={"mail_from": "Rewards <rewards@example.com>"})
        sender(engine, own, server.url).run_once()
        assert server.wait_for("ada@example.com")["From"] == "Rewards <rewards@example.com>"


def test_the_commit_of_an_action_wakes_the_running_sender_at_once(engine, settings):
    with smtp_server() as server:
        running = sender(engine, settings, server.url)
        running.poll = 600  # only the commit can wake it within the test
        thread = threading.Thread(target=running.run, daemon=True)
        thread.start()
        try:
            threading.Event().wait(0.3)  # it has looked once and sleeps
            queue(engine, to="grace@example.com", subject="Right away")
            assert server.wait_for("grace@example.com", timeout=5)["Subject"] == "Right away"
        finally:
            running.stop()
            thread.join(timeout=10)


def test_a_server_that_does_not_answer_leaves_the_message_queued_for_a_later_attempt(
    engine, settings
):
    message_id = queue(engine)
    down = f"smtp://127.0.0.1:{free_port()}?starttls=0"  # nothing listens there
    assert sender(engine, settings, down).run_once() == 1
    waiting = stored(engine, message_id)
    assert (waiting.status, waiting.attempts) == (MailStatus.QUEUED, 1)
    assert "did not take it" in waiting.last_error
    assert waiting.next_attempt_at > utcnow() + timedelta(seconds=50)
    assert waiting.lease_until is None
    # Not due yet: nothing is tried. Once due, a server that answers gets it.
    with smtp_server() as server:
        assert sender(engine, settings, server.url).run_once() == 0
        _make_due(engine, message_id)
        assert sender(engine, settings, server.url).run_once() == 1
        server.wait_for("ada@example.com")
    assert stored(engine, message_id).status == MailStatus.SENT


def _make_due(engine, message_id: int) -> None:
    with write_session(engine) as session:
        session.execute(
            sa.update(MailMessage)
            .where(MailMessage.id == message_id)
            .values(next_attempt_at=utcnow() - timedelta(seconds=1))
        )


def test_a_permanent_refusal_fails_the_message_at_once(engine, settings):
    message_id = queue(engine)
    with smtp_server() as server:
        server.refuse_with = "550 No such mailbox here"
        sender(engine, settings, server.url).run_once()
    failed = stored(engine, message_id)
    assert (failed.status, failed.attempts) == (MailStatus.FAILED, 1)
    assert failed.last_error == "The mail server answered 550: No such mailbox here"


def test_a_message_fails_after_its_last_attempt(engine, settings):
    message_id = queue(engine)
    down = sender(engine, settings, f"smtp://127.0.0.1:{free_port()}?starttls=0")
    for _ in range(mail.MAX_ATTEMPTS):
        _make_due(engine, message_id)
        down.run_once()
    failed = stored(engine, message_id)
    assert (failed.status, failed.attempts) == (MailStatus.FAILED, mail.MAX_ATTEMPTS)


def test_a_reset_link_is_hidden_from_staff_when_smtp_sends_and_blanked_once_sent(engine, settings):
    message_id = queue(engine, body="Open https://x.example/reset#token=secret", sensitive=True)
    with new_session(engine) as session:
        hidden = mail.readable_body(session=session, message_id=message_id, smtp_configured=True)
        shown = mail.readable_body(session=session, message_id=message_id, smtp_configured=False)
    assert "secret" not in hidden and "secret" in shown
    with smtp_server() as server:
        sender(engine, settings, server.url).run_once()
        assert "token=secret" in text_of(server.wait_for("ada@example.com"))
    assert "secret" not in stored(engine, message_id).body


def test_a_message_past_its_expiry_is_given_up_not_sent_stale(engine, settings):
    message_id = queue(
        engine, body="token=secret", sensitive=True, expires_at=utcnow() - timedelta(seconds=1)
    )
    with smtp_server() as server:
        assert sender(engine, settings, server.url).run_once() == 0
        assert server.messages == []
    expired = stored(engine, message_id)
    assert (expired.status, expired.last_error) == (
        MailStatus.FAILED,
        "Not sent before it expired.",
    )
    assert "secret" not in expired.body


def test_the_user_name_and_password_of_smtp_url_log_in(engine, settings):
    queue(engine)
    with smtp_server(login=("mailer", "s3cret-pass")) as server:
        sender(engine, settings, server.url).run_once()
        server.wait_for("ada@example.com")
    assert server.logins == [("mailer", "s3cret-pass")]


def test_a_claimed_message_is_not_sent_twice_by_two_senders(engine, settings):
    message_id = queue(engine)
    assert [m.id for m in mail.claim(engine)] == [message_id]
    assert mail.claim(engine) == []  # leased to the first sender


def test_prune_removes_old_sent_and_failed_messages_only(engine):
    old = utcnow() - mail.KEPT_FOR - timedelta(days=1)
    ids = {status: queue(engine, subject=status) for status in MailStatus}
    with write_session(engine) as session:
        for status, message_id in ids.items():
            session.execute(
                sa.update(MailMessage)
                .where(MailMessage.id == message_id)
                .values(status=status, created_at=old)
            )
    with write_session(engine) as session:
        assert mail.prune(session, utcnow()) == 2
    with new_session(engine) as session:
        left = session.exec(select(MailMessage.status)).all()
    assert left == [MailStatus.QUEUED]
