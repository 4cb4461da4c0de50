"""Concurrent signed batches over the same players, against a real API process.

Several clients update the same game users in different orders at once. Each answer
must be the one the batch would get alone (never a 5xx), and the stored identifiers
must be what the batches say. Each client owns one identifier kind, so the final state
does not depend on which client committed first: for every player and kind it is the
value of that client's last batch.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from api.core.db import new_session
from api.ingest._identifiers import identifiers_of
from api.studios.games import IssuedCredential
from tests.api.live_server import run_clients, serve_api
from tests.factories import iso_now, make_game

PLAYERS = [f"player-{n:02d}" for n in range(30)]
BATCHES = 25
# One identifier kind per client, with a value that says which batch set it.
KINDS = ("email", "discordId", "steamId", "telegramId")


def _value(kind: str, batch: int, player: int) -> str:
    if kind == "email":
        return f"p{player}.b{batch}@example.com"
    if kind == "discordId":
        return f"{batch}{player:03d}"
    return f"{kind}-{batch}-{player}"


def _updates(game: IssuedCredential, client: int, seed: int) -> list[dict[str, Any]]:
    """Client `client`'s batches: every player in a random order, an identifier of the
    client's own kind and an event each. The last batch removes the kind of every
    third player (null), which is then absent from the final state."""
    kind, rng = KINDS[client], random.Random(seed)
    batches = []
    for batch in range(BATCHES):
        order = list(range(len(PLAYERS)))
        rng.shuffle(order)
        last = batch == BATCHES - 1
        identifiers = [
            {
                "userId": PLAYERS[p],
                kind: None if last and p % 3 == 0 else _value(kind, batch, p),
            }
            for p in order
        ]
        events = [
            {"userId": PLAYERS[p], "event": "ROUND_END", "time": iso_now(), "value": batch}
            for p in order
        ]
        batches.append({"gameId": game.game_id, "identifiers": identifiers, "events": events})
    return batches


def _new_users(game: IssuedCredential, client: int, seed: int) -> list[dict[str, Any]]:
    """Batches that create the same new users, each client in its own interleaved order."""
    kind, rng = KINDS[client], random.Random(seed)
    batches = []
    for round_ in range(5):
        users = [f"new-{round_}-{n:02d}" for n in range(16)]
        rng.shuffle(users)
        identifiers = [{"userId": u, kind: _value(kind, round_, int(u[-2:]))} for u in users]
        batches.append({"gameId": game.game_id, "identifiers": identifiers, "events": []})
    return batches


def _assert_all_accepted(answers: list[tuple[int, Any, int]]) -> None:
    failures = [(status, body) for status, body, _ in answers if status != 200]
    assert failures == [], failures[:3]
    for _, body, identifiers in answers:
        assert body["accepted"]["identifiers"] == identifiers
        assert body["rejected"] == []


@pytest.mark.timeout(120)
def test_concurrent_batches_over_the_same_players_all_succeed_with_the_right_identifiers(
    engine, db_url, box, tmp_path
):
    game = make_game(engine, box)
    with serve_api(db_url, tmp_path) as url:
        answers = run_clients(url, game, [_updates(game, c, seed=c) for c in range(4)])
        new_answers = run_clients(url, game, [_new_users(game, c, seed=100 + c) for c in range(4)])
    _assert_all_accepted(answers)
    _assert_all_accepted(new_answers)
    with new_session(engine) as session:
        last = BATCHES - 1
        for p, player in enumerate(PLAYERS):
            expected = {} if p % 3 == 0 else {k: _value(k, last, p) for k in KINDS}
            found = identifiers_of(session=session, game_id=game.game_id, user_id=player)
            assert found == expected, player
        for round_ in range(5):
            for n in range(16):
                found = identifiers_of(
                    session=session, game_id=game.game_id, user_id=f"new-{round_}-{n:02d}"
                )
                assert found == {k: _value(k, round_, n) for k in KINDS}
