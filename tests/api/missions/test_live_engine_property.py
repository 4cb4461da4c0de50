"""Recurring missions and ladders pay the same however events are batched and whether the
player was linked before the events came or after some of them (late linking replays
those): the conversions made equal a count by hand, per day and per stage."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.core.db import new_session, write_session
from api.missions import offers
from models import Progress
from models.offer_schemas import OffersFile
from models.tables import conversion as _conversion
from tests.api.steps import send_linking_late
from tests.api.tracking_helpers import click, platform_id

# Thousands of generated cases through paths the example tests already measure: coverage's
# tracer adds 60-75% to a test's time (Python 3.11) and nothing to the figure.
pytestmark = pytest.mark.no_cover

ZONE = "Europe/Berlin"
LADDER = [1, 3, 6]


def _import(engine, game_id: str) -> dict[str, str]:
    def mission(title: str, **fields) -> dict:
        return {
            "title": title,
            "destinationUrl": "https://game.example/m",
            "rule": {"event": "WIN", "completion": {"threshold": 2}},
            **fields,
        }

    stages = [{"threshold": t, "payout": "0.10"} for t in LADDER]
    data = OffersFile.model_validate(
        {
            "gameId": game_id,
            "missions": [
                mission("daily", payout="1", recurrence={"every": "day", "timeZone": ZONE}),
                mission("ladder", stages=stages, rule={"event": "WIN"}),
                mission(
                    "daily ladder",
                    stages=stages[:2],
                    rule={"event": "WIN"},
                    recurrence={"every": "day", "timeZone": ZONE},
                ),
            ],
        }
    )
    with write_session(engine) as session:
        missions, _ = offers.import_offers(session=session, data=data)
    return {m.title: m.id for m in missions}


def _expected(times: list[datetime]) -> dict[str, Counter]:
    """(period, stage) → conversions, per mission, counted by hand."""
    from zoneinfo import ZoneInfo

    days = Counter(t.astimezone(ZoneInfo(ZONE)).date().isoformat() for t in times)
    return {
        "daily": Counter({(day, None): 1 for day, n in days.items() if n >= 2}),
        "ladder": Counter({(None, k + 1): 1 for k, t in enumerate(LADDER) if len(times) >= t}),
        "daily ladder": Counter(
            {(day, k + 1): 1 for day, n in days.items() for k, t in enumerate(LADDER[:2]) if n >= t}
        ),
    }


HISTORY = timedelta(days=20)


def test_recurring_missions_and_ladders_pay_the_same_however_batched(
    client, signed, game, wall, engine
):
    ids = _import(engine, game.game_id)
    counter = {"n": 0}

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        # Minutes after the previous win: most the same day, some a day or two later.
        st.lists(st.integers(0, 300) | st.integers(900, 2900), max_size=20),
        st.lists(st.integers(1, 5), min_size=1, max_size=20),
        st.integers(0, 3),
    )
    def check(gaps, cuts, linked_after):
        counter["n"] += 1
        user = f"player-{counter['n']}"
        players = {
            platform_id(click(client, "mission", mission, wall[0].owid, uid=user))
            for mission in ids.values()
        }
        [player] = players
        now = datetime.now(UTC)
        start = now.replace(microsecond=now.microsecond // 1000 * 1000) - HISTORY
        with write_session(engine) as session:  # the player clicked long ago
            session.execute(
                sa.update(Progress)
                .where(Progress.platform_user_id == player)
                .values(started_at=start)
            )
        moment, times = start, []
        for gap in gaps:
            moment += timedelta(minutes=gap, milliseconds=1)
            times.append(moment)
        events = [{"userId": user, "event": "WIN", "time": t.isoformat()} for t in times]
        send_linking_late(signed, events, cuts, user, player, linked_after)
        with new_session(engine) as session:
            made = session.execute(
                sa.select(
                    _conversion.c.mission_id, _conversion.c.period, _conversion.c.stage
                ).where(_conversion.c.platform_user_id == player)
            ).all()
        got = {title: Counter() for title in ids}
        title_of = {mission: title for title, mission in ids.items()}
        for mission_id, period, stage in made:
            got[title_of[mission_id]][(period, stage)] += 1
        assert got == _expected(times), (gaps, cuts, linked_after)

    check()
