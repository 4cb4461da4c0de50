"""Incremental evaluation equals a from-scratch replay, however events are batched, for
every kind of rule, whether the player was linked before the events came (live) or after
some of them (late linking replays those)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import func, select

from api.core.db import new_session, write_session
from api.missions.index import spec_of
from api.missions.rules import replay
from models import Conversion, Mission, Progress
from tests.api.steps import send_linking_late
from tests.api.tracking_helpers import click, platform_id
from tests.factories import make_mission

# Thousands of generated cases through paths the example tests already measure: coverage's
# tracer adds 60-75% to a test's time (Python 3.11) and nothing to the figure.
pytestmark = pytest.mark.no_cover

RANKED = {"field": "traits.mode", "op": "==", "value": "ranked"}
SCORED = {"field": "traits.score", "op": ">=", "value": 50}
RULES = [
    {
        "event": "MATCH_END",
        "conditions": [SCORED],
        "completion": {"kind": "consecutive", "threshold": 3},
    },
    {
        "event": "MATCH_END",
        "conditions": [{"field": "value", "op": "<", "value": 70}],
        "completion": {"kind": "count", "threshold": 4},
    },
    {
        "event": "MATCH_END",
        "conditions": [RANKED],
        "completion": {"kind": "sum", "threshold": 150, "field": "traits.score"},
    },
    {
        "anyOf": [
            {"event": "MATCH_END", "conditions": [SCORED]},
            {
                "event": "KILL_PLAYER",
                "conditions": [{"field": "traits.map", "op": "in", "value": ["desert", "jungle"]}],
            },
        ],
        "completion": {"threshold": 4},
    },
    {"event": "MATCH_END", "completion": {"kind": "max", "threshold": 90, "field": "traits.score"}},
    {
        "event": "MATCH_END",
        "conditions": [RANKED],
        "completion": {"kind": "min", "threshold": 5, "field": "value"},
    },
    {
        "event": "MATCH_END",
        "completion": {"kind": "distinct", "threshold": 3, "field": "traits.map"},
    },
    {
        "event": "KILL_PLAYER",
        "completion": {"kind": "distinct", "threshold": 2, "field": "groupId"},
    },
    {
        "event": "MATCH_END",
        "completion": {"kind": "days", "threshold": 3, "timeZone": "Europe/Berlin"},
    },
    {
        "event": "MATCH_END",
        "conditions": [SCORED],
        "completion": {"kind": "streak", "threshold": 3, "timeZone": "America/New_York"},
    },
    {"event": "KILL_PLAYER", "per": "groupId", "completion": {"threshold": 3}},
    {
        "event": "MATCH_END",
        "conditions": [SCORED],
        "per": "traits.map",
        "completion": {"kind": "consecutive", "threshold": 2},
    },
    {"event": "KILL_PLAYER", "window": {"seconds": 3 * 3600}, "completion": {"threshold": 3}},
    {
        "event": "MATCH_END",
        "window": {"seconds": 12 * 3600},
        "completion": {"kind": "sum", "threshold": 120, "field": "value"},
    },
    {
        "steps": [
            {"event": "TUTORIAL_DONE"},
            {"event": "MATCH_END", "conditions": [SCORED]},
            {"event": "KILL_PLAYER"},
        ],
        "within": {"seconds": 2 * 86400},
    },
]

event_strategy = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["MATCH_END", "MATCH_END", "KILL_PLAYER", "TUTORIAL_DONE"]),
        "score": st.integers(0, 100) | st.none(),
        "value": st.integers(0, 100) | st.none(),
        "mode": st.sampled_from(["ranked", "casual"]),
        "map": st.sampled_from(["desert", "jungle", "city"]) | st.none(),
        "group": st.sampled_from(["m1", "m2", "m3"]) | st.none(),
        # Minutes after the previous event: most within a day, some a day or two later.
        "gap": st.integers(0, 90) | st.integers(600, 2900),
    }
)
HISTORY = timedelta(days=80)  # the clicks are moved this far back, so events fit after them


def _engine_event(event: dict) -> dict:
    """An event as the API hands it to the engine (time parsed, groupId kept)."""
    plain = json.loads(json.dumps(event))
    return plain | {"time": datetime.fromisoformat(plain["time"]), "groupId": plain.get("groupId")}


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

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.lists(event_strategy, max_size=25),
        st.lists(st.integers(1, 6), min_size=1, max_size=25),
        st.integers(0, 4),
    )
    def check(stream, cuts, linked_after):
        counter["n"] += 1
        user = f"player-{counter['n']}"
        players = [
            platform_id(click(client, "mission", m.id, wall[0].owid, uid=user)) for m in missions
        ]
        assert len(set(players)) == 1
        now = datetime.now(UTC)
        start = now.replace(microsecond=now.microsecond // 1000 * 1000) - HISTORY  # as stored
        with write_session(engine) as session:  # the player clicked long ago
            session.execute(
                sa.update(Progress)
                .where(Progress.platform_user_id == players[0])
                .values(started_at=start)
            )
        moment, events = start, []
        for raw in stream:
            moment += timedelta(minutes=raw["gap"], milliseconds=1)
            traits = {k: raw[k] for k in ("score", "mode", "map") if raw[k] is not None}
            event = {
                "userId": user,
                "event": raw["event"],
                "time": moment.isoformat(),
                "traits": traits,
            }
            if raw["value"] is not None:
                event["value"] = raw["value"]
            if raw["group"] is not None:
                event["groupId"] = raw["group"]
            events.append(event)
        send_linking_late(signed, events, cuts, user, players[0], linked_after)
        for spec, mission in zip(specs, missions, strict=True):
            expected = replay(
                spec.rule, [_engine_event(e) for e in events], repeatable=spec.allow_multiple
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
            assert made == expected.completions, spec.rule
            if progress.status == "started":
                kept = json.loads(json.dumps(expected.tally.state))
                assert (progress.count, progress.run, progress.total, progress.state) == (
                    expected.tally.count,
                    expected.tally.run,
                    expected.tally.total,
                    kept,
                ), spec.rule

    check()
