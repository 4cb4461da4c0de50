"""Each mission's funnel on the missions list: one grouped SQL statement per list, the same
figures on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from api.core.db import new_session, write_session
from api.missions.funnels import (
    Funnel,
    PeriodCounts,
    PeriodFunnel,
    duration_words,
    mission_funnels,
    period_funnels,
)
from models import ProgressStatus
from models.tables import conversion as _conversion
from models.tables import platform_user as _platform_user
from models.tables import progress as _progress
from models.types import new_uuid
from tests.factories import (
    make_click,
    make_game,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)

START = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _player(engine, wall, uid: str) -> str:
    with new_session(engine) as session:
        return session.execute(
            sa.select(_platform_user.c.id).where(
                _platform_user.c.offerwall_id == wall.id, _platform_user.c.uid == uid
            )
        ).scalar_one()


def _progress_of(engine, wall, mission_id: str, uid: str, **state) -> None:
    """Set a player's progress on a mission: its tally, status, start, and conversions
    `seconds` after the start (one per entry, in order)."""
    seconds = state.pop("seconds", [])
    player = _player(engine, wall, uid)
    where = sa.and_(_progress.c.mission_id == mission_id, _progress.c.platform_user_id == player)
    with write_session(engine) as session:
        session.execute(
            _progress.update()
            .where(where)
            .values(started_at=START, completions=len(seconds), **state)
        )
        row = session.execute(sa.select(_progress).where(where)).one()
        for sequence, after in enumerate(seconds, start=1):
            session.execute(
                _conversion.insert().values(
                    transaction_id=new_uuid(),
                    progress_id=row.id,
                    sequence=sequence,
                    mission_id=mission_id,
                    platform_user_id=player,
                    offerwall_id=wall.id,
                    click_id=row.click_id,
                    payout_micros=1_000_000,
                    created_at=START + timedelta(seconds=after),
                )
            )


def test_each_mission_counts_clicks_starts_progress_completions_and_the_median_time(engine, box):
    game = make_game(engine, box).game_id
    wall, _ = make_offerwall(engine, box)
    kills = make_mission(engine, game, title="Kill 10")
    again = make_mission(engine, game, title="Win daily", allowMultipleConversions=True)
    unclicked = make_mission(engine, game, title="Nobody yet")
    quest = make_quest(
        engine,
        game,
        [mission_data(title="Gate", rule={"event": "GATE"}), mission_data(title="Boss")],
    )
    other_game = make_mission(engine, make_game(engine, box, "Other").game_id)
    for uid in ("p1", "p1", "p2", "p3", "p4", "p5", "p6"):  # p1 clicks twice
        make_click(engine, offer_id=kills.id, offerwall=wall, uid=uid)
    make_click(engine, offer_id=other_game.id, offerwall=wall, uid="p1")
    # Four completions: 60 s, 180 s, 300 s and 600 s after the click; the median is 240 s.
    for uid, after in (("p1", 600), ("p2", 60), ("p3", 300), ("p4", 180)):
        _progress_of(engine, wall, kills.id, uid, count=1, status="completed", seconds=[after])
    _progress_of(engine, wall, kills.id, "p5", count=3)  # playing
    # p6 clicked and never played: not started.
    for uid in ("r1", "r2", "r3"):
        make_click(engine, offer_id=again.id, offerwall=wall, uid=uid)
    # A repeatable mission: the first completion counts (90 s), not the later ones.
    _progress_of(engine, wall, again.id, "r1", count=0, seconds=[90, 5000])
    _progress_of(engine, wall, again.id, "r2", count=1, seconds=[30])
    _progress_of(engine, wall, again.id, "r3", count=2, status=ProgressStatus.EXPIRED)
    for uid in ("q1", "q2"):
        make_click(engine, offer_id=quest.id, offerwall=wall, uid=uid, kind="quest")
    gate = next(m for m in quest_missions(engine, quest.id) if m.title == "Gate")
    _progress_of(engine, wall, gate.id, "q1", count=1, seconds=[7200])

    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with new_session(engine) as session:
        funnels = mission_funnels(session=session, game_id=game)
    # One grouped statement for the whole list.
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1

    assert funnels[kills.id] == Funnel(
        clicks=7, started=5, in_progress=1, completed=4, median_seconds=pytest.approx(240)
    )
    assert funnels[again.id] == Funnel(
        clicks=3, started=3, in_progress=0, completed=2, median_seconds=pytest.approx(60)
    )
    assert funnels[unclicked.id] == Funnel()
    # Missions inside a quest are clicked through the quest's link.
    assert funnels[gate.id] == Funnel(
        clicks=2, started=1, in_progress=0, completed=1, median_seconds=pytest.approx(7200)
    )
    boss = next(m for m in quest_missions(engine, quest.id) if m.title == "Boss")
    assert funnels[boss.id] == Funnel(clicks=2)
    assert other_game.id not in funnels


def quest_missions(engine, quest_id: str):
    from models import Mission

    with new_session(engine) as session:
        return list(session.scalars(sa.select(Mission).where(Mission.quest_id == quest_id)))


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (None, "–"),
        (0.4, "0 s"),
        (45, "45 s"),
        (125, "2 min 5 s"),
        (720, "12 min"),
        (7500, "2 h 5 min"),
        (7200, "2 h"),
        (3 * 86400 + 4 * 3600 + 60, "3 d 4 h"),
    ],
)
def test_durations_read_as_people_say_them(seconds, words):
    assert duration_words(seconds) == words


# --- per period ---------------------------------------------------------------------------

NOW = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)  # 10:00 on Saturday 28 Nov in New York


def _period_row(engine, wall, mission_id: str, uid: str, period: str):
    player = _player(engine, wall, uid)
    with new_session(engine) as session:
        return session.execute(
            sa.select(_progress).where(
                _progress.c.mission_id == mission_id,
                _progress.c.platform_user_id == player,
                _progress.c.period == period,
            )
        ).one()


def _played(engine, row, count: int, stages: list[int]) -> None:
    """A period's progress row with its tally and a conversion per stage reached."""
    with write_session(engine) as session:
        session.execute(
            _progress.update()
            .where(_progress.c.id == row.id)
            .values(count=count, completions=len(stages))
        )
        for sequence, stage in enumerate(stages, start=1):
            session.execute(
                _conversion.insert().values(
                    transaction_id=new_uuid(),
                    progress_id=row.id,
                    sequence=sequence,
                    mission_id=row.mission_id,
                    platform_user_id=row.platform_user_id,
                    offerwall_id=row.offerwall_id,
                    click_id=row.click_id,
                    payout_micros=100_000,
                    created_at=NOW,
                    period=row.period,
                    stage=stage,
                )
            )


def test_a_recurring_or_pooled_missions_funnel_this_period_beside_the_one_before(
    engine, box, clock
):
    from api.missions import offers
    from models.offer_schemas import PoolIn

    game = make_game(engine, box).game_id
    wall, _ = make_offerwall(engine, box)
    ladder = [{"threshold": n, "payout": "0.1"} for n in (1, 2, 3)]
    daily = make_mission(
        engine,
        game,
        title="Daily ladder",
        payout=None,
        stages=ladder,
        rule={"event": "KILL"},
        recurrence={"every": "day", "timeZone": "America/New_York"},
    )
    with write_session(engine) as session:
        offers.save_pool(
            session=session,
            game_id=game,
            data=PoolIn(name="weekly", size=1, every="week", weekStartsOn="sunday"),
        )
    pooled = make_mission(engine, game, title="Pooled", pool="weekly")
    plain = make_mission(engine, game, title="Plain")

    # The day before in New York: a click in the afternoon, and one at 23:30 there
    # (04:30 UTC on the 28th).
    clock.set(datetime(2026, 11, 27, 15, 0, tzinfo=UTC))
    make_click(engine, offer_id=daily.id, offerwall=wall, uid="p1")
    clock.set(datetime(2026, 11, 28, 4, 30, tzinfo=UTC))
    make_click(engine, offer_id=daily.id, offerwall=wall, uid="p2")
    clock.set(NOW)
    for uid in ("p3", "p4"):
        make_click(engine, offer_id=daily.id, offerwall=wall, uid=uid)
    make_click(engine, offer_id=pooled.id, offerwall=wall, uid="p5")
    # p1 reached the top of the ladder yesterday, p2 its first stage; p3 its first today.
    _played(engine, _period_row(engine, wall, daily.id, "p1", "2026-11-27"), 3, [1, 2, 3])
    _played(engine, _period_row(engine, wall, daily.id, "p2", "2026-11-27"), 1, [1])
    _played(engine, _period_row(engine, wall, daily.id, "p3", "2026-11-28"), 1, [1])

    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    with new_session(engine) as session:
        funnels = period_funnels(session=session, game_id=game, now=NOW)
    # The periods' definitions, then one grouped statement for every mission's figures.
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 3

    assert funnels[daily.id] == PeriodFunnel(
        "day",
        "2026-11-28",
        "2026-11-27",
        now=PeriodCounts(clicks=2, started=1, completed=0),
        before=PeriodCounts(clicks=2, started=2, completed=1),
    )
    # Weeks from Sunday: the 22nd to the 28th, and the week before.
    assert funnels[pooled.id] == PeriodFunnel(
        "week", "2026-11-22", "2026-11-15", now=PeriodCounts(clicks=1)
    )
    assert plain.id not in funnels


def test_a_game_without_recurring_or_pooled_missions_has_no_funnel_per_period(engine, box):
    game = make_game(engine, box).game_id
    make_mission(engine, game)
    with new_session(engine) as session:
        assert period_funnels(session=session, game_id=game) == {}
