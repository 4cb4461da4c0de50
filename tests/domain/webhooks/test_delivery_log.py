"""A game's webhook delivery log (`api/webhooks/delivery_log.py`): an endpoint's messages
newest first, filtered by type and status, paged, each opened with its body and attempts;
a message sent again and a time range replayed (the same `webhook-id`, attempts kept, in
order, within the limits); the secret rotated only after the password; another game's
endpoint answering like a missing one (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine
from sqlmodel import select

from api import webhooks
from api.accounts import Account, AccountError
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.core.paging import PAGE_SIZE
from api.postbacks.transport import AttemptResult
from api.webhooks import delivery_log as log
from api.webhooks import messages
from models import MessageStatus, Role, User, WebhookEndpoint
from models.tables import webhook_message as _message
from tests.factories import PASSWORD, make_account, make_game, make_user

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PLAYER = "00000000-0000-4000-8000-0000000000aa"


@pytest.fixture
def game_id(engine: Engine, box: SecretBox) -> str:
    return make_game(engine, box).game_id


def add(engine: Engine, box: SecretBox, game_id: str, **kwargs) -> str:
    with write_session(engine) as session:
        added = webhooks.add_endpoint(
            session=session,
            box=box,
            game_id=game_id,
            url="https://game.example/hooks",
            **kwargs,
        )
        return added.endpoint.id


def emit(engine: Engine, game_id: str, *types: str, at: datetime = T0, player: str = PLAYER):
    with write_session(engine) as session:
        webhooks.emit(
            session,
            game_id=game_id,
            player=player,
            items=[(t, {"n": n}) for n, t in enumerate(types)],
            now=at,
        )


def ids(engine: Engine, endpoint_id: str) -> list[int]:
    with new_session(engine) as session:
        return list(
            session.execute(
                sa.select(_message.c.id)
                .where(_message.c.endpoint_id == endpoint_id)
                .order_by(_message.c.id)
            ).scalars()
        )


def attempt(engine: Engine, message_id: int, *, code: int | None, at: datetime) -> None:
    """One attempt recorded as the dispatcher records it."""
    with new_session(engine) as session:
        row = session.execute(sa.select(_message).where(_message.c.id == message_id)).one()
    claimed = messages.Claimed(row.id, row.message_id, row.endpoint_id, row.body, row.created_at)
    delivered = code is not None and 200 <= code < 300
    result = AttemptResult(
        status_code=code,
        duration_ms=12,
        body_excerpt="ok" if delivered else "try again",
        error=None if code else "connection refused",
    )
    messages.record(engine, claimed, result, at)


def window(engine: Engine, game_id: str, endpoint_id: str, **filters):
    with new_session(engine) as session:
        return log.delivery_log(
            session=session, game_id=game_id, endpoint_id=endpoint_id, **filters
        )


def status_of(engine: Engine, message_id: int):
    with new_session(engine) as session:
        return session.execute(sa.select(_message).where(_message.c.id == message_id)).one()


def test_the_log_lists_the_endpoints_messages_newest_first_filtered_and_paged(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    other = add(engine, box, game_id, event_types=["conversion.approved"])
    emit(engine, game_id, *(["mission.completed"] * (PAGE_SIZE + 2)), "conversion.approved")
    made = ids(engine, endpoint)
    attempt(engine, made[0], code=200, at=T0 + timedelta(seconds=1))
    attempt(engine, made[1], code=500, at=T0 + timedelta(seconds=2))

    first = window(engine, game_id, endpoint)
    assert (first.total, first.page, first.pages) == (PAGE_SIZE + 3, 1, 2)
    assert [r.id for r in first.rows] == sorted(made, reverse=True)[:PAGE_SIZE]
    assert first.rows[0].type == "conversion.approved"
    second = window(engine, game_id, endpoint, page=2)
    assert [r.id for r in second.rows] == [made[2], made[1], made[0]]
    failing, delivered = second.rows[1], second.rows[2]
    assert (delivered.status, delivered.last_status, delivered.attempts) == ("delivered", "200", 1)
    assert delivered.delivered_at == T0 + timedelta(seconds=1)
    assert delivered.next_attempt_at is None and delivered.message_id.startswith("msg_")
    assert (failing.status, failing.last_status) == ("pending", "500")
    assert failing.next_attempt_at == T0 + timedelta(seconds=7)
    assert window(engine, game_id, endpoint, page=9).page == 2  # clamped

    by_type = window(engine, game_id, endpoint, message_type="conversion.approved")
    assert by_type.total == 1 and by_type.rows[0].id == made[-1]
    assert window(engine, game_id, endpoint, status="delivered").total == 1
    assert window(engine, game_id, endpoint, status="failed").rows == []
    # Each endpoint has a log of its own.
    assert window(engine, game_id, other).total == 1
    with pytest.raises(webhooks.WebhookError, match="Unknown status"):
        window(engine, game_id, endpoint, status="lost")
    with pytest.raises(webhooks.WebhookError, match="Unknown event type"):
        window(engine, game_id, endpoint, message_type="mission.failed")


def test_a_message_opens_with_its_body_and_every_attempt(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    emit(engine, game_id, "mission.completed")
    (made,) = ids(engine, endpoint)
    attempt(engine, made, code=None, at=T0 + timedelta(seconds=1))
    attempt(engine, made, code=204, at=T0 + timedelta(seconds=7))
    with new_session(engine) as session:
        found = log.opened(session=session, game_id=game_id, endpoint_id=endpoint, message_id=made)
    assert json.loads(found.body)["data"] == {"n": 0}
    assert found.body.startswith('{\n  "type": "mission.completed"')
    assert (found.row.status, found.row.last_status) == ("delivered", "204")
    first, second = found.attempts
    assert (first.status_code, first.error, first.started_at) == (
        "",
        "connection refused",
        T0 + timedelta(seconds=1),
    )
    assert (second.status_code, second.body_excerpt, second.duration_ms) == ("204", "ok", 12)


def test_another_games_endpoint_and_messages_answer_like_missing_ones(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    other_game = make_game(engine, box, "Other").game_id
    theirs = add(engine, box, other_game)
    emit(engine, game_id, "mission.completed")
    emit(engine, other_game, "mission.completed")
    (mine,) = ids(engine, endpoint)
    (their_message,) = ids(engine, theirs)
    account = make_account(Role.STAFF)
    calls = {
        "log": lambda s, e: log.delivery_log(session=s, game_id=game_id, endpoint_id=e),
        "open": lambda s, e: log.opened(session=s, game_id=game_id, endpoint_id=e, message_id=mine),
        "again": lambda s, e: log.send_again(
            session=s, game_id=game_id, endpoint_id=e, message_id=mine, now=T0
        ),
        "replay": lambda s, e: log.replay_range(
            session=s, game_id=game_id, endpoint_id=e, start=T0, end=T0 + timedelta(1), now=T0
        ),
        "rotate": lambda s, e: log.rotate_after_password(
            session=s,
            box=box,
            account=account,
            game_id=game_id,
            endpoint_id=e,
            password=PASSWORD,
            overlap="none",
            now=T0,
        ),
    }
    for name, call in calls.items():
        for endpoint_id in (theirs, "no-such-endpoint"):
            with write_session(engine) as session, pytest.raises(webhooks.WebhookError) as exc:
                call(session, endpoint_id)
            assert str(exc.value) == "No such webhook endpoint.", name
    # Their message, through my endpoint: no such message.
    for call in (log.opened, log.send_again):
        kwargs = {"now": T0} if call is log.send_again else {}
        with write_session(engine) as session, pytest.raises(webhooks.WebhookError) as exc:
            call(
                session=session,
                game_id=game_id,
                endpoint_id=endpoint,
                message_id=their_message,
                **kwargs,
            )
        assert str(exc.value) == "No such webhook message."
    assert status_of(engine, their_message).next_attempt_at == T0


def test_a_message_sent_again_keeps_its_id_and_attempts_and_is_claimed_now(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    emit(engine, game_id, "mission.completed", "conversion.approved")
    delivered, failing = ids(engine, endpoint)
    attempt(engine, delivered, code=200, at=T0)
    attempt(engine, failing, code=500, at=T0)
    before = status_of(engine, delivered)
    later = T0 + timedelta(hours=2)
    for message in (delivered, failing):
        with write_session(engine) as session:
            log.send_again(
                session=session,
                game_id=game_id,
                endpoint_id=endpoint,
                message_id=message,
                now=later,
            )
    again = status_of(engine, delivered)
    assert (again.status, again.attempts, again.message_id) == ("pending", 1, before.message_id)
    assert (again.next_attempt_at, again.delivered_at) == (later, None)
    claimed = messages.claim(engine, limit=10, lease_seconds=60, now=later, busy=frozenset())
    # In the order they were made: the player's second waits for the first.
    assert [c.id for c in claimed] == [delivered]
    # Being sent (leased): not queued twice.
    with write_session(engine) as session, pytest.raises(webhooks.WebhookError, match="right now"):
        log.send_again(
            session=session, game_id=game_id, endpoint_id=endpoint, message_id=delivered, now=later
        )


def test_a_time_range_is_replayed_in_order_within_its_limits(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    for hour in range(4):
        emit(
            engine,
            game_id,
            "mission.completed",
            "conversion.approved",
            at=T0 + timedelta(hours=hour),
            player=f"p{hour}",
        )
    made = ids(engine, endpoint)
    for message in made:
        attempt(engine, message, code=200, at=T0 + timedelta(hours=5))
    now = T0 + timedelta(days=1)

    def replay(start: datetime, end: datetime, message_type: str = "") -> int:
        with write_session(engine) as session:
            return log.replay_range(
                session=session,
                game_id=game_id,
                endpoint_id=endpoint,
                start=start,
                end=end,
                now=now,
                message_type=message_type,
            )

    # From 01:00 up to (not with) 03:00, conversions only.
    start, end = T0 + timedelta(hours=1), T0 + timedelta(hours=3)
    assert replay(start, end, "conversion.approved") == 2
    pending = [m for m in made if status_of(engine, m).status == MessageStatus.PENDING]
    assert pending == [made[3], made[5]]
    assert replay(start, end) == 4  # the rest of the range, and the two again
    claimed = messages.claim(engine, limit=10, lease_seconds=60, now=now, busy=frozenset())
    assert [c.id for c in claimed] == made[2:6:2]  # each player's first, oldest first

    with pytest.raises(webhooks.WebhookError, match="at most 7 days"):
        replay(T0, T0 + timedelta(days=7, seconds=1))
    with pytest.raises(webhooks.WebhookError, match="end must come after the start"):
        replay(end, start)
    assert replay(T0 - timedelta(days=7), T0) == 0


def test_a_replay_of_more_than_ten_thousand_messages_is_refused(engine, box, game_id, monkeypatch):
    monkeypatch.setattr(log, "REPLAY_MAX", 3)
    endpoint = add(engine, box, game_id)
    emit(engine, game_id, *(["mission.completed"] * 4))
    with write_session(engine) as session, pytest.raises(webhooks.WebhookError) as exc:
        log.replay_range(
            session=session,
            game_id=game_id,
            endpoint_id=endpoint,
            start=T0,
            end=T0 + timedelta(hours=1),
            now=T0,
        )
    assert "holds 4 messages; a replay takes at most 3" in str(exc.value)
    assert {status_of(engine, m).next_attempt_at for m in ids(engine, endpoint)} == {T0}


def test_the_secret_rotates_only_after_the_password(engine, box, game_id):
    endpoint = add(engine, box, game_id)
    email = make_user(engine, "staff@example.com")
    with new_session(engine) as session:
        user = session.exec(select(User).where(User.email == email)).one()
        account = Account(user.id, email, "", Role.STAFF, None, None)
        before = webhooks.signing_secrets(box, session.get(WebhookEndpoint, endpoint), T0)

    def rotate(password: str, overlap: str = "1h"):
        with write_session(engine) as session:
            return log.rotate_after_password(
                session=session,
                box=box,
                account=account,
                game_id=game_id,
                endpoint_id=endpoint,
                password=password,
                overlap=overlap,
                now=T0,
            )

    with pytest.raises(AccountError, match="Wrong password"):
        rotate("not it")
    with pytest.raises(webhooks.WebhookError, match="Choose how long"):
        rotate(PASSWORD, "2h")
    secret, rotated = rotate(PASSWORD)
    assert secret.startswith("whsec_") and rotated.previous_until == T0 + timedelta(hours=1)
    with new_session(engine) as session:
        now_signing = webhooks.signing_secrets(box, session.get(WebhookEndpoint, endpoint), T0)
    assert now_signing == [secret, *before]
