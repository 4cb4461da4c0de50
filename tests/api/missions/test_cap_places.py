"""Places under caps when a conversion is taken back (docs/missions.md#caps), SQLite and
PostgreSQL: a reversed conversion frees its place under the mission's cap as a rejected
one does, and the next completion takes it; a quest's start cap counts players who
started, whatever becomes of their conversions; under parallel completions, reversals and
rejections the cap is never overshot and every freed place is reused once."""

from __future__ import annotations

import threading

import httpx
import pytest
import sqlalchemy as sa

from api.conversions import ledger as conversions
from api.conversions import review
from api.core.db import new_session, write_session
from models import Conversion, ConversionStatus
from models.tables import mission as _mission
from models.tables import quest as _quest
from tests.api.live_server import post_signed, run_clients, serve_api
from tests.api.steps import SCORE, at, link_over_http, score_batch, start
from tests.api.tracking_helpers import click
from tests.factories import (
    make_game,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)

STAFF = "staff@example.com"


def _score(signed, user: str) -> None:
    answer = signed.events({"userId": user, "event": "MATCH_END", "time": at(1), "value": 700})
    assert answer.status_code == 200, answer.text


def _made(engine) -> list[Conversion]:
    with new_session(engine) as session:
        return list(session.scalars(sa.select(Conversion).order_by(Conversion.id)))  # type: ignore[arg-type]


def _taken(engine) -> int:
    with new_session(engine) as session:
        return int(session.scalar(sa.select(_mission.c.conversions)) or 0)


def _reverse(engine, transaction_id: str) -> None:
    with write_session(engine) as session:
        conversions.reverse(
            session=session,
            transaction_id=transaction_id,
            reason="Chargeback from the store.",
            actor=STAFF,
            studio_id=None,
        )


def test_a_reversal_frees_its_place_and_the_next_completion_takes_it(
    engine, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, cap=2, **SCORE)
    for n in range(3):
        start(client, signed, wall, mission.id, f"p{n}")
    for n in range(3):
        _score(signed, f"p{n}")  # the third finds the cap reached
    first, _ = _made(engine)
    assert _taken(engine) == 2
    assert click(client, "mission", mission.id, wall[0].owid, uid="late").status_code == 410

    _reverse(engine, first.transaction_id)
    assert _taken(engine) == 1  # the game did not get that player: the place is free
    start(client, signed, wall, mission.id, "p3")  # the offer is open again
    _score(signed, "p3")
    assert [c.status for c in _made(engine)] == ["reversed", "approved", "approved"]
    assert _taken(engine) == 2
    assert click(client, "mission", mission.id, wall[0].owid, uid="late").status_code == 410


def test_a_quests_start_cap_counts_players_who_started_whatever_their_conversions_became(
    engine, client, signed, game, wall
):
    quest = make_quest(engine, game.game_id, [mission_data(**SCORE)], startCap=1)
    start(client, signed, wall, quest.id, "p1", kind="quest")
    _score(signed, "p1")
    [made] = _made(engine)
    _reverse(engine, made.transaction_id)
    with new_session(engine) as session:
        assert session.execute(sa.select(_quest.c.starts, _quest.c.start_cap)).one() == (1, 1)
    assert click(client, "quest", quest.id, wall[0].owid, uid="second").status_code == 410


@pytest.mark.timeout(180)
def test_under_parallel_completions_reversals_and_rejections_the_cap_holds_and_places_are_reused(
    engine, db_url, box, tmp_path
):
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    # Every completion is held (too fast), so some can be rejected and some approved.
    offer = make_mission(engine, game.game_id, cap=5, minCompletionSeconds=3600, **SCORE)
    players = [f"p{n}" for n in range(30)]

    with serve_api(db_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, offer.id, wall.owid, players)
            for name in players[:5]:  # the first five fill the cap
                assert post_signed(http, game, score_batch(game, name)).status_code == 200
        first = [c.transaction_id for c in _made(engine)]
        assert len(first) == 5 and _taken(engine) == 5
        with write_session(engine) as session:
            review.approve(session=session, transaction_ids=first[:3], actor=STAFF, studio_id=None)

        # 20 players complete at once while the three approved are reversed and the two
        # held rejected, each in its own transaction.
        def reverse_all() -> None:
            for tx in first[:3]:
                _reverse(engine, tx)

        def reject_all() -> None:
            for tx in first[3:]:
                with write_session(engine) as session:
                    review.reject(
                        session=session,
                        transaction_ids=[tx],
                        actor=STAFF,
                        studio_id=None,
                        reason="Bot farm",
                    )

        deciders = [threading.Thread(target=reverse_all), threading.Thread(target=reject_all)]
        for decider in deciders:
            decider.start()
        answers = run_clients(url, game, [[score_batch(game, name)] for name in players[5:25]])
        for decider in deciders:
            decider.join()
        assert [status for status, _, _ in answers] == [200] * 20

        def live() -> list[Conversion]:
            kept = (ConversionStatus.APPROVED, ConversionStatus.PENDING)
            return [c for c in _made(engine) if c.status in kept]

        # Never over the cap, and the counter is exactly the conversions that keep a place.
        assert len(live()) == _taken(engine) <= 5
        by_tx = {c.transaction_id: c.status for c in _made(engine)}
        assert [by_tx[tx] for tx in first] == ["reversed"] * 3 + ["rejected"] * 2
        # Places freed after the 20 had completed go to the next players, one each.
        rest = run_clients(url, game, [[score_batch(game, name)] for name in players[25:]])
        assert [status for status, _, _ in rest] == [200] * 5
    assert len(live()) == _taken(engine) == 5
    assert {c.transaction_id for c in live()}.isdisjoint(first)
