"""Who gets a place given back (docs/missions.md#waiting), SQLite and PostgreSQL: the
earliest player who completed while the mission was full, of that cap's scope (the
mission's cap, the period still running, the offerwall), paid as their completion would
have been (screened, held, its postback queued), once, a repeatable mission's then starting
its next round; nobody while the mission is inactive; and under reversals racing
completions each freed place pays exactly one player."""

from __future__ import annotations

import threading
from datetime import timedelta

import httpx
import pytest
import sqlalchemy as sa

from api.conversions import ledger as conversions
from api.conversions import review
from api.core.db import new_session, write_session
from api.fraud import Policy
from api.missions import offers
from models import Conversion, ConversionStatus, PostbackKind
from models.tables import mission as _mission
from models.tables import progress as _progress
from models.types import utcnow
from tests.api.live_server import post_signed, run_clients, serve_api
from tests.api.steps import SCORE, at, link_over_http, score_batch, start
from tests.api.tracking_helpers import click
from tests.databases import only_postgres
from tests.factories import make_game, make_mission, make_offerwall
from tests.outbox import postback_rows

STAFF = "staff@example.com"


@pytest.fixture
def policy(settings) -> Policy:
    """The fraud policy a reversal screens the completion it pays with: the test API's
    (its players share one address and several offerwalls)."""
    return Policy.from_settings(settings)


def _score(signed, user: str) -> None:
    answer = signed.events({"userId": user, "event": "MATCH_END", "time": at(1), "value": 700})
    assert answer.status_code == 200, answer.text


def _made(engine) -> list[Conversion]:
    with new_session(engine) as session:
        return list(session.scalars(sa.select(Conversion).order_by(Conversion.id)))  # type: ignore[arg-type]


def _paid(engine, player: str) -> list[str]:
    """The statuses of the player's conversions."""
    return [c.status for c in _made(engine) if c.platform_user_id == player]


def _progress_of(engine, player: str) -> tuple[str, str | None]:
    """The player's progress: (status, the counter its completion waits on)."""
    with new_session(engine) as session:
        status, waiting_on = session.execute(
            sa.select(_progress.c.status, _progress.c.waiting_on).where(
                _progress.c.platform_user_id == player
            )
        ).one()
    return status, waiting_on


def _taken(engine) -> int:
    with new_session(engine) as session:
        return int(session.scalar(sa.select(_mission.c.conversions)) or 0)


def _reverse(engine, policy: Policy, conversion: Conversion) -> None:
    with write_session(engine) as session:
        conversions.reverse(
            session=session,
            transaction_id=conversion.transaction_id,
            reason="Chargeback from the store.",
            actor=STAFF,
            studio_id=None,
            policy=policy,
        )


def _complete(client, signed, wall, mission_id: str, *names: str) -> list[str]:
    """The players click (while the mission is open), then complete one after the other;
    their platform user ids."""
    players = [start(client, signed, wall, mission_id, name) for name in names]
    for name in names:
        _score(signed, name)
    return players


def test_a_freed_place_goes_to_the_earliest_player_who_completed_while_the_mission_was_full(
    engine, policy, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, cap=1, **SCORE)
    _, second, third = _complete(client, signed, wall, mission.id, "p1", "p2", "p3")
    assert _paid(engine, second) == _paid(engine, third) == []
    assert _progress_of(engine, second) == _progress_of(engine, third) == ("capped", "cap")

    [paid] = _made(engine)
    _reverse(engine, policy, paid)
    # p2 waited longest: paid now, once, its postback queued like any conversion's.
    assert _paid(engine, second) == ["approved"] and _paid(engine, third) == []
    assert _progress_of(engine, second) == ("completed", None)
    assert _progress_of(engine, third) == ("capped", "cap")
    converted = _made(engine)[-1]
    queued = [p.kind for p in postback_rows(engine) if p.conversion_id == converted.id]
    assert queued == [PostbackKind.CONVERSION]
    assert _taken(engine) == 1
    assert click(client, "mission", mission.id, wall[0].owid, uid="late").status_code == 410

    _reverse(engine, policy, converted)
    assert _paid(engine, third) == ["approved"]
    assert _paid(engine, second) == ["reversed"]  # taken back, and not paid again
    # Nobody waits any more: the next place is the next completion's.
    _reverse(engine, policy, _made(engine)[-1])
    assert _taken(engine) == 0
    assert click(client, "mission", mission.id, wall[0].owid, uid="late").status_code == 302


def test_a_place_of_the_period_goes_to_a_player_waiting_in_it_only_while_it_runs(
    engine, policy, client, signed, game, wall, clock
):
    mission = make_mission(engine, game.game_id, periodCaps={"day": 1, "timeZone": "UTC"}, **SCORE)
    _, second, third = _complete(client, signed, wall, mission.id, "p1", "p2", "p3")
    today = f"day:{utcnow().date()}"
    # A full day leaves the progress as it stood, waiting in that day's turn.
    assert _progress_of(engine, second) == _progress_of(engine, third) == ("started", today)

    [paid] = _made(engine)
    _reverse(engine, policy, paid)
    assert _paid(engine, second) == ["approved"] and _paid(engine, third) == []
    assert _progress_of(engine, second) == ("completed", None)

    # The next day, a place of that day given back pays nobody: the day is over.
    clock.set(utcnow() + timedelta(days=1))
    _reverse(engine, policy, _made(engine)[-1])
    assert _paid(engine, third) == []
    assert _progress_of(engine, third) == ("started", today)


def test_a_place_at_an_offerwall_goes_to_a_player_waiting_at_that_offerwall(
    engine, policy, client, signed, game, wall, box
):
    other = make_offerwall(engine, box, name="Other")
    mission = make_mission(engine, game.game_id, capPerOfferwall=1, **SCORE)
    a1, a2 = (start(client, signed, wall, mission.id, name) for name in ("a1", "a2"))
    b2 = [start(client, signed, other, mission.id, name) for name in ("b1", "b2")][1]
    for name in ("a1", "b1", "b2", "a2"):
        _score(signed, name)
    assert _progress_of(engine, b2) == ("capped", f"total:{other[0].id}")
    assert _progress_of(engine, a2) == ("capped", f"total:{wall[0].id}")

    _reverse(engine, policy, next(c for c in _made(engine) if c.platform_user_id == a1))
    # b2 waited longer, but for a place at the other offerwall.
    assert _paid(engine, a2) == ["approved"] and _paid(engine, b2) == []
    assert _progress_of(engine, b2) == ("capped", f"total:{other[0].id}")


def test_the_waiting_players_completion_is_screened_as_any_and_held_when_too_fast(
    engine, policy, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, cap=1, minCompletionSeconds=3600, **SCORE)
    _, second = _complete(client, signed, wall, mission.id, "p1", "p2")
    [held] = _made(engine)
    assert held.status == ConversionStatus.PENDING
    with write_session(engine) as session:
        review.reject(
            session=session,
            transaction_ids=[held.transaction_id],
            actor=STAFF,
            studio_id=None,
            reason="Bot farm",
            policy=policy,
        )
    # p2 completed as fast: paid by the place given back, and held for review too.
    assert _paid(engine, second) == ["pending"]
    assert postback_rows(engine) == []
    assert _taken(engine) == 1


def test_a_waiting_player_of_a_repeatable_mission_is_paid_and_starts_the_next_round(
    engine, policy, client, signed, game, wall
):
    mission = make_mission(engine, game.game_id, cap=1, allowMultipleConversions=True, **SCORE)
    _, second = _complete(client, signed, wall, mission.id, "p1", "p2")
    assert _progress_of(engine, second) == ("capped", "cap")
    _reverse(engine, policy, _made(engine)[0])
    assert _paid(engine, second) == ["approved"]
    assert _progress_of(engine, second) == ("started", None)
    with new_session(engine) as session:
        count = session.scalar(
            sa.select(_progress.c.count).where(_progress.c.platform_user_id == second)
        )
    assert count == 0  # its next round counts from nothing


def test_an_inactive_mission_pays_no_waiting_player(engine, policy, client, signed, game, wall):
    mission = make_mission(engine, game.game_id, cap=1, **SCORE)
    _, second = _complete(client, signed, wall, mission.id, "p1", "p2")
    with write_session(engine) as session:
        offers.set_active(session=session, kind="mission", offer_id=mission.id, active=False)
    _reverse(engine, policy, _made(engine)[0])
    assert _paid(engine, second) == []
    assert _progress_of(engine, second) == ("capped", "cap")
    assert _taken(engine) == 0


@only_postgres
@pytest.mark.timeout(180)
def test_under_20_reversals_and_completions_at_once_each_freed_place_pays_one_waiting_player(
    engine, policy, db_url, box, tmp_path
):
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    offer = make_mission(engine, game.game_id, cap=5, **SCORE)
    players = [f"p{n}" for n in range(23)]

    def platform_ids() -> dict[str, str]:
        with new_session(engine) as session:
            rows = session.execute(
                sa.text("SELECT uid, id FROM platform_user WHERE uid LIKE 'p%'")
            ).all()
        return dict(rows)

    with serve_api(db_url, tmp_path) as url:
        with httpx.Client(base_url=url, timeout=30) as http:
            link_over_http(http, game, offer.id, wall.owid, players)
            # Five fill the cap, then three wait, in this order.
            for name in players[:8]:
                assert post_signed(http, game, score_batch(game, name)).status_code == 200
        ids = platform_ids()
        paid = _made(engine)
        assert len(paid) == 5
        waiting = [ids[name] for name in players[5:8]]
        assert {_progress_of(engine, p) for p in waiting} == {("capped", "cap")}

        # Five reversals, each in its own transaction, while 15 new players complete.
        reversers = [threading.Thread(target=_reverse, args=(engine, policy, c)) for c in paid]
        for reverser in reversers:
            reverser.start()
        answers = run_clients(url, game, [[score_batch(game, name)] for name in players[8:]])
        for reverser in reversers:
            reverser.join()
        assert [status for status, _, _ in answers] == [200] * 15

    made = _made(engine)
    live = [c for c in made if c.status == ConversionStatus.APPROVED]
    # Every place given back paid one player, once: the three who waited first, and the
    # rest of the places whoever completed next (a waiting player, or one who found a place
    # free). Never over the cap, never a player twice.
    assert len(made) == 10 and len(live) == _taken(engine) == 5
    assert len({c.platform_user_id for c in live}) == 5
    assert {c.platform_user_id for c in live} >= set(waiting)
    assert {_progress_of(engine, p) for p in waiting} == {("completed", None)}
    conversion_postbacks = [
        p.conversion_id for p in postback_rows(engine) if p.kind == PostbackKind.CONVERSION
    ]
    assert sorted(conversion_postbacks) == sorted(c.id for c in made)
    # The others who completed while it was full still wait, unpaid.
    unpaid = set(ids.values()) - {c.platform_user_id for c in made}
    assert len(unpaid) == 13
    assert {_progress_of(engine, p) for p in unpaid} == {("capped", "cap")}
