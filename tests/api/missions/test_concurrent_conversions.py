"""Concurrent batches that convert the same missions in different orders, against a
real API process: no 5xx, and every completion is paid exactly once within the cap."""

from __future__ import annotations

import random
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import sqlalchemy as sa

from api.core.db import new_session
from models.tables import conversion as _conversion
from models.tables import mission as _mission
from models.tables import postback as _postback
from tests.api.live_server import post_signed, run_clients, serve_api
from tests.factories import iso_now, make_game, make_mission, make_offerwall

CLIENTS, PLAYERS_PER_CLIENT, BATCHES = 4, 3, 10
CAP = 50  # below the 120 completions of the first mission: the cap must hold exactly
REPEATABLE = {"allowMultipleConversions": True}


def _click(http: httpx.Client, mission_id: str, owid: str, uid: str) -> str:
    response = http.get(f"/missions/{mission_id}", params={"owid": owid, "uid": uid})
    assert response.status_code == 302, response.text
    return parse_qs(urlsplit(response.headers["location"]).query)["platformid"][0]


def _plan(game_id: str, players: list[str], seed: int) -> list[dict[str, Any]]:
    """Batches of one completing event per player (each completes both missions)."""
    rng = random.Random(seed)
    batches = []
    for _ in range(BATCHES):
        order = players[:]
        rng.shuffle(order)
        events = [
            {"userId": p, "event": "GAME_END", "time": iso_now(), "traits": {"kills": 12}}
            for p in order
        ]
        batches.append({"gameId": game_id, "identifiers": [], "events": events})
    return batches


@pytest.mark.timeout(120)
def test_concurrent_conversions_of_the_same_missions_are_exactly_once_within_the_cap(
    engine, db_url, box, tmp_path
):
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    capped = make_mission(engine, game.game_id, title="Capped", cap=CAP, **REPEATABLE)
    open_ = make_mission(engine, game.game_id, title="Open", **REPEATABLE)
    players = {c: [f"c{c}-p{n}" for n in range(PLAYERS_PER_CLIENT)] for c in range(CLIENTS)}
    with serve_api(db_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            links = []
            for c, names in players.items():
                # Half the clients' players start the capped mission first, half the open
                # one: their batches then convert the two missions in opposite orders.
                first, second = (capped, open_) if c % 2 == 0 else (open_, capped)
                for name in names:
                    platform_id = _click(http, first.id, wall.owid, name)
                    assert _click(http, second.id, wall.owid, name) == platform_id
                    links.append({"userId": name, "platformUserId": platform_id})
            linked = post_signed(http, game, {"gameId": game.game_id, "identifiers": links})
            assert linked.status_code == 200, linked.text
        plans = [_plan(game.game_id, players[c], seed=c) for c in range(CLIENTS)]
        answers = run_clients(url, game, plans)

    failures = [(status, body) for status, body, _ in answers if status != 200]
    assert failures == [], failures[:3]
    completions = CLIENTS * PLAYERS_PER_CLIENT * BATCHES
    with new_session(engine) as session:
        made = dict(
            session.execute(
                sa.select(_conversion.c.mission_id, sa.func.count()).group_by(
                    _conversion.c.mission_id
                )
            ).all()
        )
        counters = dict(session.execute(sa.select(_mission.c.id, _mission.c.conversions)).all())
        sequences = session.execute(
            sa.select(_conversion.c.progress_id, _conversion.c.sequence)
        ).all()
        postbacks = session.execute(sa.select(sa.func.count()).select_from(_postback)).scalar()
    assert made == {capped.id: CAP, open_.id: completions}
    assert counters == {capped.id: CAP, open_.id: completions}
    assert len(set(sequences)) == len(sequences)  # no completion paid twice
    assert postbacks == CAP + completions
