"""Webhooks to the game's own server through the real API, outbox and dispatcher, verified
by the `standardwebhooks` library (docs/game-integration.md#webhooks)."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from api import webhooks
from api.conversions import ledger, review
from api.core.db import new_session, write_session
from api.postbacks.transport import http_client
from models import EndpointStatus, WebhookEndpoint
from models.tables import conversion as _conversion
from models.tables import webhook_message as _message
from tests.api.steps import start
from tests.factories import make_mission
from tests.receiver import running_receiver

KILLS = {
    "event": "GAME_END",
    "conditions": [{"field": "traits.kills", "op": ">=", "value": 10}],
}


@pytest.fixture
def api_settings(api_settings):
    """Webhooks may go to the local receiver here (production refuses private addresses)."""
    return api_settings.model_copy(update={"postback_allow_private": True})


def _one_message(engine, game_id: str, now: datetime) -> None:
    """One `mission.completed` message for player p1, stored as the engine stores it."""
    with write_session(engine) as session:
        webhooks.emit(
            session,
            game_id=game_id,
            player="p1",
            now=now,
            items=[("mission.completed", {"n": 1})],
        )


def add(engine, box, game_id: str, url: str, **kwargs) -> webhooks.endpoints.Added:
    with write_session(engine) as session:
        added = webhooks.add_endpoint(
            session=session, box=box, game_id=game_id, url=url, allow_private=True, **kwargs
        )
        session.expunge(added.endpoint)
    return added


def deliver(engine, box, settings, rounds: int = 20) -> None:
    """Run the dispatcher until nothing is due (or `rounds` claims)."""
    dispatcher = webhooks.WebhookDispatcher(engine=engine, box=box, settings=settings)
    with ThreadPoolExecutor(4) as pool, http_client(settings) as client:
        for _ in range(rounds):
            claimed = dispatcher.run_once(pool, client)
            dispatcher.wait()
            if not claimed:
                return


def verified(receiver, secret: str) -> list[dict]:
    """Every body the receiver got, each verified as Standard Webhooks says."""
    hook = Webhook(secret)
    return [
        hook.verify(body, headers)
        for body, headers in zip(receiver.posts, receiver.post_headers, strict=True)
    ]


def win(user: str) -> dict:
    moment = datetime.now(UTC).isoformat()
    return {"userId": user, "event": "GAME_END", "time": moment, "traits": {"kills": 12}}


def test_a_conversion_tells_the_game_in_order_signed_as_standard_webhooks_says(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(engine, game.game_id, title="Kill 10", rule=KILLS)
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url + "/hooks")
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    assert [b["type"] for b in bodies] == [
        "mission.started",
        "player.linked",
        "mission.completed",
        "conversion.approved",
    ]
    data = bodies[3]["data"]
    assert (data["userId"], data["mission"]["title"], data["payoutUsd"]) == ("p1", "Kill 10", "1.5")
    with new_session(engine) as session:
        transaction = session.execute(sa.select(_conversion.c.transaction_id)).scalar_one()
    assert data["transactionId"] == transaction
    assert bodies[2]["data"]["progress"] == {"current": 1, "target": 1}


def test_a_signature_fails_for_a_tampered_body_another_secret_or_an_old_timestamp(
    engine, box, game
):
    from api.webhooks import signing

    secret, other = signing.new_secret(), signing.new_secret()
    body = b'{"type":"mission.completed","timestamp":"2026-11-28T12:00:00.000Z","data":{}}'
    now = int(time.time())
    headers = signing.headers("msg_1", now, body, [secret])
    assert Webhook(secret).verify(body, headers)["type"] == "mission.completed"
    for wrong in (
        (body.replace(b"completed", b"started"), headers, secret),
        (body, headers, other),
        (body, signing.headers("msg_1", now - 3600, body, [secret]), secret),
    ):
        with pytest.raises(WebhookVerificationError):
            Webhook(wrong[2]).verify(wrong[0], wrong[1])


def test_during_a_rotation_overlap_both_secrets_verify(engine, box, game):
    added = add(engine, box, game.game_id, "https://game.example/hooks")
    now = datetime.now(UTC)
    with write_session(engine) as session:
        endpoint = session.get(WebhookEndpoint, added.endpoint.id)
        new = webhooks.rotate_secret(
            session=session, box=box, endpoint=endpoint, overlap="24h", now=now
        )
        secrets = webhooks.signing_secrets(box, endpoint, now)
        later = webhooks.signing_secrets(box, endpoint, now + timedelta(hours=25))
    assert secrets == [new, added.secret] and later == [new]
    from api.webhooks import signing

    body = b'{"type":"mission.completed","timestamp":"x","data":{}}'
    headers = signing.headers("msg_2", int(time.time()), body, secrets)
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (new, added.secret):
        Webhook(secret).verify(body, headers)


def test_a_held_conversion_then_approved_tells_held_then_approved_and_a_reversal(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(
        engine, game.game_id, title="Kill 10", rule=KILLS, minCompletionSeconds=600
    )
    with running_receiver() as receiver:
        added = add(
            engine,
            box,
            game.game_id,
            receiver.url,
            event_types=["conversion.approved", "conversion.held", "conversion.reversed"],
        )
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200  # sooner than 10 minutes: held
        with new_session(engine) as session:
            transaction = session.execute(sa.select(_conversion.c.transaction_id)).scalar_one()
        with write_session(engine) as session:
            review.approve(
                session=session, transaction_ids=[transaction], actor="cli", studio_id=None
            )
        with write_session(engine) as session:
            ledger.reverse(
                session=session,
                transaction_id=transaction,
                reason="chargeback",
                actor="cli",
                studio_id=None,
            )
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    assert [b["type"] for b in bodies] == [
        "conversion.held",
        "conversion.approved",
        "conversion.reversed",
    ]
    assert bodies[2]["data"]["reason"] == "chargeback"
    assert {b["data"]["transactionId"] for b in bodies} == {transaction}


def test_a_held_conversion_then_rejected_tells_held_then_rejected_once(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(
        engine, game.game_id, title="Kill 10", rule=KILLS, minCompletionSeconds=600
    )
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url)
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200  # sooner than 10 minutes: held
        with new_session(engine) as session:
            transaction = session.execute(sa.select(_conversion.c.transaction_id)).scalar_one()
        for _ in range(2):  # rejecting again decides nothing new
            with write_session(engine) as session:
                review.reject(
                    session=session,
                    transaction_ids=[transaction],
                    actor="cli",
                    studio_id=None,
                    reason="bot pattern",
                )
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    conversions = [b for b in bodies if b["type"].startswith("conversion.")]
    assert [b["type"] for b in conversions] == ["conversion.held", "conversion.rejected"]
    assert {b["data"]["transactionId"] for b in conversions} == {transaction}
    assert "mission.completed" in [b["type"] for b in bodies]


def test_a_receiver_answering_500_gets_the_same_webhook_id_again_and_410_disables(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(engine, game.game_id, title="Kill 10", rule=KILLS)
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url, event_types=["conversion.approved"])
        receiver.post_statuses = [500]
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200
        deliver(engine, box, api_settings)
        with write_session(engine) as session:  # the retry's wait, skipped
            session.execute(sa.update(_message).values(next_attempt_at=datetime.now(UTC)))
        deliver(engine, box, api_settings)
        ids = [h["webhook-id"] for h in receiver.post_headers]
        assert receiver.post_answers == [500, 204] and ids[0] == ids[1]
        # A 410: the endpoint is disabled, what comes after waits.
        receiver.post_statuses = [410]
        assert signed.events(win("p1")).status_code == 200  # not repeatable: nothing new
        start(
            client,
            signed,
            wall,
            make_mission(engine, game.game_id, rule=KILLS).id,
            "p1",
            uid="pub-p1",
        )
        assert signed.events(win("p1")).status_code == 200
        deliver(engine, box, api_settings)
    with new_session(engine) as session:
        endpoint = session.get(WebhookEndpoint, added.endpoint.id)
        assert (endpoint.status, endpoint.status_reason) == (
            EndpointStatus.DISABLED,
            "the receiver answered 410 Gone",
        )


def test_one_players_messages_wait_for_the_one_before_and_a_hanging_game_holds_no_other(
    client, signed, game, wall, engine, box, api_settings
):
    from tests.factories import make_game

    other = make_game(engine, box, name="Other game")
    first = make_mission(engine, game.game_id, title="One", rule=KILLS)
    second = make_mission(engine, game.game_id, title="Two", rule=KILLS)
    with running_receiver() as slow, running_receiver() as fast:
        add(engine, box, game.game_id, slow.url, event_types=["conversion.approved"])
        added = add(engine, box, other.game_id, fast.url)
        slow.post_statuses = [500]  # p1's first message fails: the second waits for it
        start(client, signed, wall, first.id, "p1", uid="pub-p1")
        start(client, signed, wall, second.id, "p1", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200
        deliver(engine, box, api_settings)
        assert len(slow.posts) == 1  # the second never went before the first
        with write_session(engine) as session:
            session.execute(sa.update(_message).values(next_attempt_at=datetime.now(UTC)))
        deliver(engine, box, api_settings)
        titles = [json.loads(b)["data"]["mission"]["title"] for b in slow.posts]
        assert titles[0] == titles[1] and len(titles) == 3  # the first again, then the next
        # A game whose receiver hangs does not hold another game's message back.
        slow.hang_seconds = 3
        with write_session(engine) as session:
            webhooks.emit(
                session,
                game_id=game.game_id,
                player="p",
                now=datetime.now(UTC),
                items=[("conversion.approved", {"n": 1})],
            )
            webhooks.emit(
                session,
                game_id=other.game_id,
                player="p",
                now=datetime.now(UTC),
                items=[("mission.completed", {"n": 2})],
            )
        dispatcher = webhooks.WebhookDispatcher(engine=engine, box=box, settings=api_settings)
        with ThreadPoolExecutor(4) as pool, http_client(api_settings) as http:
            started = time.monotonic()
            dispatcher.run_once(pool, http)
            while not fast.posts and time.monotonic() - started < 2.5:
                time.sleep(0.01)
            waited = time.monotonic() - started
            dispatcher.wait()
    assert fast.posts and waited < 2.5
    assert Webhook(added.secret).verify(fast.posts[0], fast.post_headers[0])["type"] == (
        "mission.completed"
    )


def test_a_private_address_is_refused_and_an_unknown_type_named(engine, box, game):
    with write_session(engine) as session, pytest.raises(webhooks.WebhookError, match="public"):
        webhooks.add_endpoint(
            session=session, box=box, game_id=game.game_id, url="http://10.0.0.5/hooks"
        )
    with pytest.raises(webhooks.WebhookError, match=r"Unknown event type mission\.finished"):
        webhooks.chosen_types("mission.completed, mission.finished")


def test_every_type_is_sent_when_its_cause_happens_and_once(
    client, signed, game, wall, engine, box, api_settings
):
    from tests.factories import make_quest, mission_data

    quest = make_quest(
        engine,
        game.game_id,
        [mission_data(title="Step 1", rule=KILLS), mission_data(title="Step 2", rule=KILLS)],
    )
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url)
        start(client, signed, wall, quest.id, "p1", kind="quest", uid="pub-p1")
        assert signed.events(win("p1")).status_code == 200
        assert signed.events(win("p1")).status_code == 200  # nothing more to complete
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    types = [b["type"] for b in bodies]
    assert types[:2] == ["mission.started", "mission.started"]  # the quest's link: both
    assert types[2] == "player.linked" and bodies[2]["data"]["userId"] == "p1"
    completed = [b for b in bodies if b["type"] == "mission.completed"]
    assert sorted(b["data"]["mission"]["title"] for b in completed) == ["Step 1", "Step 2"]
    assert types.count("conversion.approved") == 2
    assert types.count("quest.completed") == 1 and types[-1] == "quest.completed"
    assert bodies[-1]["data"]["quest"] == {"id": quest.id, "name": quest.name}
    assert "mission.progressed" not in types  # only to endpoints that name it


def test_progress_is_told_only_when_asked_and_a_burst_makes_one_message(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(
        engine,
        game.game_id,
        title="Ten kills",
        rule={"event": "KILL", "completion": {"threshold": 10}},
    )
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url, event_types=["mission.progressed"])
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        now = datetime.now(UTC)
        for n in range(4):  # four requests in a burst
            kill = {
                "userId": "p1",
                "event": "KILL",
                "time": (now + timedelta(seconds=n)).isoformat(),
            }
            assert signed.events(kill).status_code == 200
        with write_session(engine) as session:  # the few seconds' wait, skipped
            session.execute(sa.update(_message).values(next_attempt_at=datetime.now(UTC)))
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    assert [b["type"] for b in bodies] == ["mission.progressed"]
    assert bodies[0]["data"]["progress"] == {"current": 4, "target": 10}


def test_a_day_of_failures_pauses_the_endpoint_mails_the_designers_and_enabling_resumes(
    engine, box, api_settings, clock
):
    from models import MailMessage, Role
    from tests.factories import make_game, make_studio, make_user

    studio = make_studio(engine)
    game = make_game(engine, box, studio_id=studio)
    make_user(engine, "designer@studio.example", role=Role.DESIGNER, studio_id=studio)
    t0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
    clock.set(t0)
    with running_receiver() as receiver:
        receiver.post_statuses = [500] * 50
        added = add(engine, box, game.game_id, receiver.url)
        _one_message(engine, game.game_id, t0)
        deliver(engine, box, api_settings, rounds=1)
        for hours in (6, 12, 20, 24.5):  # every retry fails
            clock.set(t0 + timedelta(hours=hours))
            with write_session(engine) as session:
                session.execute(sa.update(_message).values(next_attempt_at=t0))
            deliver(engine, box, api_settings, rounds=1)
        with new_session(engine) as session:
            endpoint = session.get(WebhookEndpoint, added.endpoint.id)
            assert (endpoint.status, endpoint.status_reason) == (
                EndpointStatus.PAUSED,
                "every attempt failed for a day",
            )
            [mail] = session.exec(sa.select(MailMessage)).scalars().all()
        assert mail.to_address == "designer@studio.example" and "paused" in mail.subject
        # Paused: nothing goes out; enabled again, the message (given up meanwhile) goes.
        sent = len(receiver.posts)
        deliver(engine, box, api_settings)
        assert len(receiver.posts) == sent
        receiver.post_statuses = []
        with write_session(engine) as session:
            webhooks.set_status(
                session=session,
                endpoint=session.get(WebhookEndpoint, added.endpoint.id),
                active=True,
            )
        deliver(engine, box, api_settings)
        assert receiver.post_answers[-1] == 204


def test_a_name_that_resolves_to_a_private_address_is_refused_at_connect_time(
    engine, box, game, settings
):
    from models.tables import webhook_attempt as _attempt

    # Saved while private addresses were allowed; sent where they are not (production).
    with running_receiver() as receiver:
        add(engine, box, game.game_id, f"http://localhost:{receiver.port}/hooks")
        _one_message(engine, game.game_id, datetime.now(UTC))
        deliver(engine, box, settings, rounds=1)
        assert receiver.posts == []
    with new_session(engine) as session:
        [attempt] = session.execute(sa.select(_attempt)).all()
    assert attempt.status_code is None and "not a public address" in attempt.error


def test_a_message_sent_again_days_later_gets_a_new_day_of_retries(
    engine, box, game, api_settings, clock
):
    from api.webhooks import delivery_log
    from models import MessageStatus

    t0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
    clock.set(t0)
    with running_receiver() as receiver:
        add(engine, box, game.game_id, receiver.url)
        _one_message(engine, game.game_id, t0)
        deliver(engine, box, api_settings)
        clock.set(t0 + timedelta(days=3))
        with write_session(engine) as session:
            [message_id] = session.execute(sa.select(_message.c.id)).scalars().all()
            endpoint_id = session.execute(sa.select(_message.c.endpoint_id)).scalar_one()
            delivery_log.send_again(
                session=session,
                game_id=game.game_id,
                endpoint_id=endpoint_id,
                message_id=message_id,
                now=t0 + timedelta(days=3),
            )
        receiver.post_statuses = [500]
        deliver(engine, box, api_settings, rounds=1)
    with new_session(engine) as session:
        status = session.execute(sa.select(_message.c.status)).scalar_one()
    assert status == MessageStatus.PENDING  # tried again later, not given up


def test_a_message_that_waited_days_behind_a_disabled_endpoint_gets_a_new_day_of_retries(
    engine, box, game, api_settings, clock
):
    from models import MessageStatus

    t0 = datetime(2026, 12, 1, 10, tzinfo=UTC)
    clock.set(t0)
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url)
        with write_session(engine) as session:
            endpoint = session.get(WebhookEndpoint, added.endpoint.id)
            webhooks.set_status(session=session, endpoint=endpoint, active=False)
            webhooks.emit(
                session,
                game_id=game.game_id,
                player="p1",
                now=t0,
                items=[("mission.completed", {"n": 1})],
            )
        deliver(engine, box, api_settings)
        assert receiver.posts == []  # a disabled endpoint's messages wait
        clock.set(t0 + timedelta(days=3))
        with write_session(engine) as session:
            endpoint = session.get(WebhookEndpoint, added.endpoint.id)
            webhooks.set_status(session=session, endpoint=endpoint, active=True)
        receiver.post_statuses = [500]
        deliver(engine, box, api_settings, rounds=1)
        assert receiver.post_answers == [500]
    with new_session(engine) as session:
        status = session.execute(sa.select(_message.c.status)).scalar_one()
    assert status == MessageStatus.PENDING  # tried again later, not given up


def kill(user: str, n: int = 0) -> dict:
    moment = (datetime.now(UTC) + timedelta(milliseconds=n)).isoformat()
    return {"userId": user, "event": "KILL", "time": moment}


def test_a_quest_with_a_ladder_is_completed_once_and_only_at_its_last_stage(
    client, signed, game, wall, engine, box, api_settings
):
    from tests.factories import make_quest, mission_data

    quest = make_quest(
        engine,
        game.game_id,
        [
            {
                "title": "Kill ladder",
                "destinationUrl": "https://game.example/m",
                "rule": {"event": "KILL"},
                "stages": [{"threshold": 1, "payout": "0.10"}, {"threshold": 3, "payout": "0.30"}],
            },
            mission_data(title="Win", rule=KILLS),
        ],
    )
    with running_receiver() as receiver:
        added = add(engine, box, game.game_id, receiver.url)
        start(client, signed, wall, quest.id, "p1", kind="quest", uid="pub-p1")
        assert signed.events(kill("p1", 0)).status_code == 200  # the ladder's first stage
        assert signed.events(win("p1")).status_code == 200  # the other mission: done
        assert signed.events(kill("p1", 1), kill("p1", 2)).status_code == 200  # last stage
        deliver(engine, box, api_settings)
        bodies = verified(receiver, added.secret)
    types = [b["type"] for b in bodies]
    assert types.count("quest.completed") == 1
    last_stage = max(i for i, t in enumerate(types) if t == "mission.stage_reached")
    assert types.index("quest.completed") > last_stage


def test_a_repeatable_missions_progress_never_overtakes_its_completion(
    client, signed, game, wall, engine, box, api_settings
):
    mission = make_mission(
        engine,
        game.game_id,
        title="Three kills",
        rule={"event": "KILL", "completion": {"threshold": 3}},
        allowMultipleConversions=True,
    )
    with running_receiver() as receiver:
        add(
            engine,
            box,
            game.game_id,
            receiver.url,
            event_types=["mission.progressed", "mission.completed"],
        )
        start(client, signed, wall, mission.id, "p1", uid="pub-p1")
        assert signed.events(kill("p1", 0), kill("p1", 1)).status_code == 200  # 2/3
        assert signed.events(kill("p1", 2)).status_code == 200  # 3/3: completed
        assert signed.events(kill("p1", 3)).status_code == 200  # 1/3 of the next round
        with write_session(engine) as session:  # the few seconds' wait, skipped
            session.execute(sa.update(_message).values(next_attempt_at=datetime.now(UTC)))
        deliver(engine, box, api_settings)
        bodies = [json.loads(b) for b in receiver.posts]
    seen = [(b["type"], b["data"].get("progress")) for b in bodies]
    assert seen == [
        ("mission.progressed", {"current": 2, "target": 3}),
        ("mission.completed", {"current": 3, "target": 3}),
        ("mission.progressed", {"current": 1, "target": 3}),
    ]


def test_prune_keeps_pending_and_recent_messages(engine, box, game):
    from api.webhooks import messages

    add(engine, box, game.game_id, "https://game.example/hooks")
    old, recent = datetime(2026, 10, 1, tzinfo=UTC), datetime(2026, 11, 20, tzinfo=UTC)
    with write_session(engine) as session:
        for moment in (old, old, recent):
            webhooks.emit(
                session,
                game_id=game.game_id,
                player="p",
                now=moment,
                items=[("mission.completed", {})],
            )
        first, second, _ = session.execute(
            sa.select(_message.c.id).order_by(_message.c.id)
        ).scalars()
        session.execute(
            sa.update(_message).where(_message.c.id.in_([first])).values(status="delivered")
        )
        removed = messages.prune(session, datetime(2026, 11, 28, tzinfo=UTC))
        left = session.execute(sa.select(_message.c.id).order_by(_message.c.id)).scalars().all()
    assert removed == 1 and left == [second, left[-1]] and len(left) == 2  # old pending kept
