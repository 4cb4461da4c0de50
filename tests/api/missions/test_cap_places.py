"""Places under caps when a conversion is taken back (docs/missions.md#caps), SQLite and
PostgreSQL: a reversed conversion frees its place under the mission's cap as a rejected
one does, and the next completion takes it; it frees its places in the period caps of the
period it was counted in and at its offerwall too, and the test player's, which took none,
frees none; a quest's start cap counts players who started, whatever becomes of their
conversions; under parallel completions, reversals and rejections no cap is overshot and
every freed place is reused once."""

from __future__ import annotations

import threading
from datetime import timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
import sqlalchemy as sa

from api.conversions import ledger as conversions
from api.conversions import review
from api.core.db import new_session, write_session
from models import Conversion, ConversionStatus
from models.tables import cap_count as _cap_count
from models.tables import mission as _mission
from models.tables import quest as _quest
from models.tracking import TEST_UID
from models.types import utcnow
from tests.api.live_server import post_signed, run_clients, serve_api
from tests.api.steps import SCORE, at, link_over_http, score_batch, start
from tests.api.tracking_helpers import click
from tests.databases import only_postgres
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


def _counters(engine) -> dict[tuple[str, str], int]:
    """The period and per-offerwall cap counters, by (scope, period)."""
    with new_session(engine) as session:
        rows = session.execute(
            sa.select(_cap_count.c.scope, _cap_count.c.period, _cap_count.c.count)
        )
        return {(scope, period): count for scope, period, count in rows}


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
    for n in range(2):
        start(client, signed, wall, mission.id, f"p{n}")
        _score(signed, f"p{n}")
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


def test_a_reversal_frees_its_places_in_the_period_it_was_counted_in_and_at_its_offerwall(
    engine, client, signed, game, wall, clock
):
    zone = "Pacific/Kiritimati"  # UTC+14: its day is seldom UTC's
    mission = make_mission(
        engine,
        game.game_id,
        periodCaps={"day": 2, "month": 5, "timeZone": zone},
        capPerOfferwall=2,
        **SCORE,
    )
    for n in range(2):
        start(client, signed, wall, mission.id, f"p{n}")
        _score(signed, f"p{n}")
    today = utcnow().astimezone(ZoneInfo(zone))
    day, month = f"day:{today.date()}", f"month:{today.date().replace(day=1)}"
    full = {("", day): 2, ("", month): 2, (wall[0].id, "total"): 2}
    assert _counters(engine) == full
    assert click(client, "mission", mission.id, wall[0].owid, uid="late").status_code == 410

    # A day later: the day the conversion was counted in gets its place back, not today.
    clock.set(utcnow() + timedelta(days=1))
    first, second = _made(engine)
    _reverse(engine, first.transaction_id)
    assert _counters(engine) == {("", day): 1, ("", month): 1, (wall[0].id, "total"): 1}
    assert _taken(engine) == 1
    _reverse(engine, second.transaction_id)
    assert _counters(engine) == {("", day): 0, ("", month): 0, (wall[0].id, "total"): 0}


def test_the_test_players_conversion_took_no_place_and_frees_none(
    engine, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, cap=1, capPerOfferwall=1, **SCORE)
    start(client, signed, wall, mission.id, "tester", uid=TEST_UID)
    _score(signed, "tester")
    start(client, signed, wall, mission.id, "p1")
    _score(signed, "p1")
    tested, paid = _made(engine)
    assert (tested.test, paid.test) == (True, False)
    assert _taken(engine) == 1 and _counters(engine) == {(wall[0].id, "total"): 1}

    _reverse(engine, tested.transaction_id)
    assert _taken(engine) == 1 and _counters(engine) == {(wall[0].id, "total"): 1}
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
        # A place still free after the 20 (none waited for it) goes to the next players.
        rest = run_clients(url, game, [[score_batch(game, name)] for name in players[25:]])
        assert [status for status, _, _ in rest] == [200] * 5
    assert len(live()) == _taken(engine) == 5
    assert {c.transaction_id for c in live()}.isdisjoint(first)


@only_postgres
@pytest.mark.timeout(180)
def test_under_parallel_completions_reversals_and_rejections_the_period_and_offerwall_caps_hold(
    engine, db_url, box, tmp_path
):
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    # Every completion is held (too fast), so some can be rejected and some approved.
    offer = make_mission(
        engine,
        game.game_id,
        periodCaps={"day": 5, "timeZone": "UTC"},
        capPerOfferwall=5,
        minCompletionSeconds=3600,
        **SCORE,
    )
    players = [f"p{n}" for n in range(30)]

    def live() -> list[Conversion]:
        kept = (ConversionStatus.APPROVED, ConversionStatus.PENDING)
        return [c for c in _made(engine) if c.status in kept]

    def counted() -> dict[tuple[str, str], int]:
        """Both counters, as the conversions that keep a place say they should be."""
        day = {f"day:{c.created_at.date()}" for c in _made(engine)}
        assert len(day) == 1  # the test ran within one UTC day
        return {("", day.pop()): len(live()), (wall.id, "total"): len(live())}

    with serve_api(db_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, offer.id, wall.owid, players)
            for name in players[:5]:  # the first five fill both caps
                assert post_signed(http, game, score_batch(game, name)).status_code == 200
        first = [c.transaction_id for c in _made(engine)]
        assert len(first) == 5 and _counters(engine) == counted()
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
        # Never over the caps, and each counter is exactly the conversions keeping a place.
        assert len(live()) <= 5 and _counters(engine) == counted()
        rest = run_clients(url, game, [[score_batch(game, name)] for name in players[25:]])
        assert [status for status, _, _ in rest] == [200] * 5
    # Every place given back was taken again, once, and no player was paid twice.
    assert len(live()) == _taken(engine) == 5 and _counters(engine) == counted()
    assert {c.transaction_id for c in live()}.isdisjoint(first)
    assert len({c.progress_id for c in live()}) == 5
