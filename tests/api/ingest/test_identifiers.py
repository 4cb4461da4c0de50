"""Identifiers: omitted / null / value, the first-request rule, linking, concurrency."""

from __future__ import annotations

import json
import threading

from sqlmodel import func, select

from api.core.db import new_session
from api.ingest import SignedMessage, parse_batch, store_batch
from api.ingest._identifiers import identifiers_of
from models import GameUser, GameUserIdentifier
from tests.databases import also_pgbouncer
from tests.factories import SignedClient, iso_now, make_platform_user, now_ms


def _ids(engine, game, user_id="p1") -> dict:
    with new_session(engine) as session:
        return identifiers_of(session=session, game_id=game.game_id, user_id=user_id)


def test_original_spec_flow(signed, game, engine):
    # (1) userId + email → email; (2) userId + discordId → both; (3) email: null → discordId.
    assert signed.identifiers({"userId": "p1", "email": "p1@example.com"}).status_code == 200
    assert _ids(engine, game) == {"email": "p1@example.com"}
    assert signed.identifiers({"userId": "p1", "discordId": "80351110224678912"}).status_code == 200
    assert _ids(engine, game) == {"email": "p1@example.com", "discordId": "80351110224678912"}
    assert signed.identifiers({"userId": "p1", "email": None}).status_code == 200
    assert _ids(engine, game) == {"discordId": "80351110224678912"}


def test_a_value_replaces_and_other_identifiers_are_unchanged(signed, game, engine):
    signed.identifiers({"userId": "p1", "email": "a@example.com", "steamId": "765"})
    signed.identifiers({"userId": "p1", "email": "b@example.com"})
    assert _ids(engine, game) == {"email": "b@example.com", "steamId": "765"}


def test_email_domain_is_stored_lower_case(signed, game, engine):
    signed.identifiers({"userId": "p1", "email": "Player.One@Example.ORG"})
    assert _ids(engine, game) == {"email": "Player.One@example.org"}


def test_first_item_needs_a_non_null_identifier(signed, game, engine):
    response = signed.identifiers({"userId": "new"}, {"userId": "new2", "email": None})
    assert response.status_code == 422
    assert [r["code"] for r in response.json()["rejected"]] == ["identifier_required"] * 2


def test_later_items_may_carry_only_nulls(signed, game, engine):
    signed.identifiers({"userId": "p1", "email": "a@example.com"})
    response = signed.identifiers({"userId": "p1", "email": None})
    assert response.status_code == 200
    assert _ids(engine, game) == {}
    with new_session(engine) as session:
        assert session.exec(select(func.count()).select_from(GameUser)).one() == 1


def test_first_rule_counts_an_earlier_item_of_the_same_request(signed, game, engine):
    response = signed.identifiers(
        {"userId": "p1", "twitterId": "12"}, {"userId": "p1", "twitterId": None}
    )
    assert response.status_code == 200
    assert _ids(engine, game) == {}


def test_platform_user_id_links_and_null_unlinks(signed, game, engine):
    platform = make_platform_user(engine)
    signed.identifiers({"userId": "p1", "platformUserId": platform})
    assert _ids(engine, game) == {"platformUserId": platform}
    signed.identifiers({"userId": "p1", "platformUserId": None})
    assert _ids(engine, game) == {}


def test_unknown_platform_user_is_rejected(signed, game, engine):
    response = signed.identifiers(
        {"userId": "p1", "platformUserId": "7b0a3c9e-2a53-4f0e-9a57-0d1e3a4b5c6d"},
        {"userId": "p2", "email": "ok@example.com"},
    )
    assert response.status_code == 207
    assert response.json()["rejected"][0]["code"] == "unknown_platform_user"
    assert _ids(engine, game, "p1") == {}


def test_verified_identifier_of_exactly_one_platform_user_links(signed, game, engine):
    owner = make_platform_user(engine, email="ada@example.com")
    signed.identifiers({"userId": "p1", "email": "ada@EXAMPLE.com"})
    assert _ids(engine, game)["platformUserId"] == owner


def test_identifier_verified_for_two_platform_users_does_not_link(signed, game, engine):
    make_platform_user(engine, discordId="42")
    make_platform_user(engine, discordId="42")
    signed.identifiers({"userId": "p1", "discordId": "42"})
    assert "platformUserId" not in _ids(engine, game)


def test_wallet_matches_case_insensitively(signed, game, engine):
    owner = make_platform_user(engine, walletAddress="0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
    signed.identifiers(
        {"userId": "p1", "walletAddress": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}
    )
    assert _ids(engine, game)["platformUserId"] == owner


def test_identifiers_are_applied_before_events_in_one_request(signed, game, engine):
    response = signed.events(
        {"userId": "p1", "event": "START_GAME", "time": iso_now()},
        identifiers=[{"userId": "p1", "email": "p1@example.com"}],
    )
    assert response.json()["accepted"] == {"identifiers": 1, "events": 1}


def test_identifiers_are_per_game(client, signed, game, engine, box):
    from tests.factories import make_game

    other = SignedClient(client, make_game(engine, box, name="Other"))
    signed.identifiers({"userId": "p1", "email": "one@example.com"})
    other.identifiers({"userId": "p1", "email": "two@example.com"})
    assert _ids(engine, game) == {"email": "one@example.com"}
    assert _ids(engine, other.credential) == {"email": "two@example.com"}


@also_pgbouncer
def test_ten_parallel_requests_for_one_new_user_leave_one_consistent_user(
    engine, settings, box, game
):
    items = {"userId": "racer", "email": "racer@example.com", "discordId": "777"}
    bodies = []
    for i in range(10):
        body = json.dumps(
            {
                "gameId": game.game_id,
                "identifiers": [items],
                "events": [
                    {"userId": "racer", "event": "START_GAME", "time": iso_now(), "value": i}
                ],
            }
        ).encode()
        bodies.append((body, SignedClient(None, game).headers(body, timestamp=now_ms() + i)))  # type: ignore[arg-type]
    barrier = threading.Barrier(10)
    results: list[int] = []

    def send(body: bytes, headers: dict[str, str]) -> None:
        barrier.wait()
        signed = SignedMessage(
            headers["x-client-id"], headers["x-timestamp"], headers["x-signature"], body
        )
        parsed = parse_batch(body=body, settings=settings)
        outcome = store_batch(
            engine=engine, box=box, settings=settings, request=signed, parsed=parsed
        )
        results.append(outcome.status)

    threads = [threading.Thread(target=send, args=pair) for pair in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == [200] * 10
    with new_session(engine) as session:
        users = session.exec(select(GameUser)).all()
        assert len(users) == 1
        rows = session.exec(select(GameUserIdentifier)).all()
    assert sorted((r.kind, r.value) for r in rows) == [
        ("discordId", "777"),
        ("email", "racer@example.com"),
    ]
