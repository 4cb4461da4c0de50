"""The missions list (api/missions/offer_rows.py, live_badges.py): what each mission does in
live operations, and its funnel this period and the one before."""

from __future__ import annotations

from datetime import UTC, datetime

from api.core.db import new_session, write_session
from api.missions import offer_rows
from tests.factories import make_game


def test_the_missions_list_says_what_each_mission_does_in_live_operations(engine, box):
    from api.core.periods import Period
    from models.offers import CapCount
    from tests.factories import make_mission

    game = make_game(engine, box).game_id
    now = datetime(2026, 11, 28, 15, 0, tzinfo=UTC)
    make_mission(
        engine,
        game,
        title="Daily",
        recurrence={"every": "day", "timeZone": "America/New_York"},
        stages=[{"threshold": 1, "payout": "0.1"}, {"threshold": 3, "payout": "0.2"}],
        payout=None,
        rule={"event": "KILL"},
        startDate="2026-12-24T00:00:00Z",
    )
    make_mission(
        engine,
        game,
        title="Weekly",
        recurrence={"every": "week", "weekStartsOn": "sunday"},
        startDate="2027-01-02T09:00:00Z",
    )
    full = make_mission(
        engine, game, title="Full", periodCaps={"day": 1, "timeZone": "Europe/Berlin"}
    )
    make_mission(engine, game, title="Plain")
    with write_session(engine) as session:
        day = Period("day", "Europe/Berlin").key(now)
        session.add(CapCount(mission_id=full.id, scope="", period=f"day:{day}", count=1))

    with new_session(engine) as session:
        rows = {r.title: r for r in offer_rows.game_offers(session=session, game_id=game, now=now)}
    assert [(b.kind, b.text) for b in rows["Daily"].live] == [
        ("recurring", "Daily · America/New_York"),
        ("stages", "2 stages"),
        ("scheduled", "Starts 24 Dec"),
    ]
    assert [(b.kind, b.text) for b in rows["Weekly"].live] == [
        ("recurring", "Weekly from Sunday · UTC"),
        ("scheduled", "Starts 2 Jan 2027 09:00"),
    ]
    assert [(b.kind, b.text) for b in rows["Full"].live] == [
        ("full", "Full · reopens 29 Nov (Europe/Berlin)")
    ]
    assert rows["Plain"].live == rows["Plain"].periods == []
    assert [(p.label, p.first_day) for p in rows["Daily"].periods] == [
        ("Today", "2026-11-28"),
        ("Yesterday", "2026-11-27"),
    ]
    assert [(p.label, p.clicks, p.started, p.completed) for p in rows["Weekly"].periods] == [
        ("This week", "0", "0", "0"),
        ("Last week", "0", "0", "0"),
    ]
