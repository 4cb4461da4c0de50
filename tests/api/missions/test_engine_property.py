"""Incremental evaluation equals a from-scratch replay, however events are batched."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import func, select

from api.core.db import new_session
from api.missions.index import spec_of
from api.missions.rules import replay
from models import Conversion, Mission, Progress
from tests.api.tracking_helpers import click, platform_id
from tests.factories import make_mission

RULES = [
    {
        "event": "MATCH_END",
        "conditions": [{"field": "traits.score", "op": ">=", "value": 50}],
        "completion": {"kind": "consecutive", "threshold": 3},
    },
    {
        "event": "MATCH_END",
        "conditions": [{"field": "value", "op": "<", "value": 70}],
        "completion": {"kind": "count", "threshold": 4},
    },
    {
        "event": "MATCH_END",
        "conditions": [{"field": "traits.mode", "op": "==", "value": "ranked"}],
        "completion": {"kind": "sum", "threshold": 150, "field": "traits.score"},
    },
]

event_strategy = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["MATCH_END", "MATCH_END", "KILL_PLAYER"]),
        "score": st.integers(0, 100) | st.none(),
        "value": st.integers(0, 100) | st.none(),
        "mode": st.sampled_from(["ranked", "casual"]),
    }
)


def test_incremental_equals_replay(client, signed, game, wall, engine):
    missions = [
        make_mission(
            engine, game.game_id, title=f"m{i}", allowMultipleConversions=bool(i % 2), rule=rule
        )
        for i, rule in enumerate(RULES)
    ]
    with new_session(engine) as session:
        specs = [spec_of(session.get(Mission, m.id)) for m in missions]
    counter = {"n": 0}

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.lists(event_strategy, max_size=25), st.lists(st.integers(1, 6), min_size=1, max_size=25)
    )
    def check(stream, cuts):
        counter["n"] += 1
        user = f"player-{counter['n']}"
        players = [
            platform_id(click(client, "mission", m.id, wall[0].owid, uid=user)) for m in missions
        ]
        assert len(set(players)) == 1
        signed.identifiers({"userId": user, "platformUserId": players[0]})
        base = datetime.now(UTC) + timedelta(seconds=1)  # after the start
        events = []
        for i, raw in enumerate(stream):
            traits = {k: raw[k] for k in ("score", "mode") if raw[k] is not None}
            event = {
                "userId": user,
                "event": raw["event"],
                "time": (base + timedelta(milliseconds=i)).isoformat(),
                "traits": traits,
            }
            if raw["value"] is not None:
                event["value"] = raw["value"]
            events.append(event)
        # Split the stream into random batches, each shuffled (the API orders by time).
        position, batches = 0, []
        for size in cuts * (len(events) + 1):
            if position >= len(events):
                break
            batches.append(events[position : position + size][::-1])
            position += size
        for batch in batches:
            assert signed.events(*batch).status_code == 200
        for spec, mission in zip(specs, missions, strict=True):
            expected = replay(
                spec.rule,
                [json.loads(json.dumps(e)) for e in events],
                repeatable=spec.allow_multiple,
            )
            with new_session(engine) as session:
                progress = session.exec(
                    select(Progress).where(
                        Progress.mission_id == mission.id, Progress.platform_user_id == players[0]
                    )
                ).one()
                made = session.exec(
                    select(func.count())
                    .select_from(Conversion)
                    .where(Conversion.progress_id == progress.id)
                ).one()
            assert made == expected.completions
            if progress.status == "started":
                assert (progress.count, progress.run, progress.total) == (
                    expected.tally.count,
                    expected.tally.run,
                    expected.tally.total,
                )

    check()
