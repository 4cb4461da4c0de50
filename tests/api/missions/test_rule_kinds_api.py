"""Every kind of rule through the real API: an import file with one mission per kind,
signed events from one player who completes each and one who falls just short, and the
publisher's receiver, which gets one postback per completed mission and no other; the
offers API shows the other player's progress of each kind (docs/missions.md)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from api.core.db import write_session
from api.missions import offers
from models import Progress
from models.offer_schemas import OffersFile
from tests.api.listing.test_wall import wall_page
from tests.api.steps import start
from tests.outbox import TEMPLATE, configure, run_once
from tests.receiver import running_receiver

NOW = datetime.now(UTC)
# Ten days ago at noon UTC: every event of the test happens after it, none in the future.
BASE = (NOW - timedelta(days=10)).replace(hour=12, minute=0, second=0, microsecond=0)


def ev(name: str, *, days: float = 0, minutes: float = 0, **fields) -> dict:
    moment = BASE + timedelta(days=days, minutes=minutes)
    event = {"event": name, "time": moment.isoformat().replace("+00:00", "Z")}
    if "value" in fields:
        event["value"] = fields.pop("value")
    if "group" in fields:
        event["groupId"] = fields.pop("group")
    if fields:
        event["traits"] = fields
    return event


# Each kind: its rule, the events that complete it, the events that fall short, and the
# progress (current, target) they leave.
KINDS = {
    "any of": (
        {
            "anyOf": [
                {"event": "KILL_PLAYER"},
                {
                    "event": "KILL_NPC",
                    "conditions": [{"field": "traits.boss", "op": "==", "value": True}],
                },
            ],
            "completion": {"threshold": 3},
        },
        [ev("KILL_PLAYER"), ev("KILL_NPC", minutes=1, boss=True), ev("KILL_PLAYER", minutes=2)],
        [
            ev("KILL_PLAYER"),
            *(ev("KILL_NPC", minutes=m, boss=False) for m in (1, 2, 3)),
            ev("KILL_PLAYER", minutes=4),
        ],
        (2, 3),
    ),
    "in": (
        {
            "event": "MATCH_END",
            "conditions": [{"field": "traits.map", "op": "in", "value": ["desert", "jungle"]}],
            "completion": {"threshold": 2},
        },
        [ev("MATCH_END", map="desert"), ev("MATCH_END", minutes=1, map="jungle")],
        [
            ev("MATCH_END", map="city"),
            ev("MATCH_END", minutes=1, map="city"),
            ev("MATCH_END", minutes=2, map="desert"),
        ],
        (1, 2),
    ),
    "not in": (
        {
            "event": "ROUND_WON",
            "conditions": [{"field": "groupId", "op": "not in", "value": ["practice"]}],
            "completion": {"threshold": 2},
        },
        [ev("ROUND_WON", group="m1"), ev("ROUND_WON", minutes=1, group="m2")],
        [
            ev("ROUND_WON", group="practice"),
            ev("ROUND_WON", minutes=1, group="practice"),
            ev("ROUND_WON", minutes=2, group="m1"),
        ],
        (1, 2),
    ),
    "max": (
        {"event": "LEVEL_UP", "completion": {"kind": "max", "threshold": 20, "field": "value"}},
        [ev("LEVEL_UP", value=5), ev("LEVEL_UP", minutes=1, value=21)],
        [ev("LEVEL_UP", value=5), ev("LEVEL_UP", minutes=1, value=19)],
        (19, 20),
    ),
    "min": (
        {
            "event": "RACE_END",
            "completion": {"kind": "min", "threshold": 60, "field": "traits.seconds"},
        },
        [ev("RACE_END", seconds=75), ev("RACE_END", minutes=5, seconds=59.5)],
        [ev("RACE_END", seconds=75), ev("RACE_END", minutes=5, seconds=61)],
        (61, 60),
    ),
    "distinct": (
        {
            "event": "MAP_PLAYED",
            "completion": {"kind": "distinct", "threshold": 3, "field": "traits.map"},
        },
        [
            ev("MAP_PLAYED", minutes=m, map=name)
            for m, name in enumerate(["desert", "jungle", "desert", "city"])
        ],
        [
            ev("MAP_PLAYED", minutes=m, map=name)
            for m, name in enumerate(["desert", "jungle", "desert", "jungle"])
        ],
        (2, 3),
    ),
    "days": (
        {
            "event": "START_GAME",
            "completion": {"kind": "days", "threshold": 3, "timeZone": "Europe/Berlin"},
        },
        [ev("START_GAME", days=d) for d in (0, 1, 2)],
        [ev("START_GAME", days=d, minutes=m) for d in (0, 1) for m in (0, 60)],
        (2, 3),
    ),
    "streak": (
        {
            "event": "DAILY_LOGIN",
            "completion": {"kind": "streak", "threshold": 3, "timeZone": "America/New_York"},
        },
        [ev("DAILY_LOGIN", days=d) for d in (0, 1, 2)],
        [ev("DAILY_LOGIN", days=d) for d in (0, 1, 3, 4)],
        (0, 3),  # 2 days in a row, but days ago: today the streak is broken
    ),
    "per group": (
        {"event": "KILL", "per": "groupId", "completion": {"threshold": 3}},
        [ev("KILL", minutes=m, group=g) for m, g in enumerate(["m1", "m2", "m1", "m1"])],
        [ev("KILL", minutes=m, group=g) for m, g in enumerate(["m1", "m2", "m1", "m2", "m3"])],
        (2, 3),
    ),
    "window": (
        {"event": "HEADSHOT", "window": {"seconds": 3600}, "completion": {"threshold": 3}},
        [ev("HEADSHOT", minutes=m) for m in (0, 10, 50)],
        [ev("HEADSHOT", minutes=m) for m in (0, 40, 70, 180)],
        (0, 3),  # the window of the last one ended days ago
    ),
    "steps": (
        {
            "steps": [
                {"event": "TUTORIAL_DONE"},
                {
                    "event": "MATCH_OVER",
                    "conditions": [{"field": "traits.won", "op": "==", "value": True}],
                },
            ],
            "within": {"seconds": 86400},
        },
        [ev("TUTORIAL_DONE"), ev("MATCH_OVER", minutes=120, won=True)],
        [
            ev("MATCH_OVER", won=True),
            ev("TUTORIAL_DONE", minutes=60),
            ev("MATCH_OVER", minutes=30 * 60, won=True),
        ],
        (0, 2),
    ),
}


@pytest.fixture
def api_settings(api_settings):
    """Days of play arrive in one request here, which the stale_event screen would hold
    for review (docs/fraud.md): it is off, and postbacks may go to the local receiver."""
    return api_settings.model_copy(update={"stale_event_hours": 0, "postback_allow_private": True})


def test_each_kind_pays_once_where_it_completes_and_never_where_it_falls_short(
    client, signed, game, wall, engine, box, api_settings
):
    data = OffersFile.model_validate(
        {
            "gameId": game.game_id,
            "missions": [
                {
                    "title": kind,
                    "payout": "1.00",
                    "destinationUrl": "https://game.example/m",
                    "rule": rule,
                }
                for kind, (rule, *_) in KINDS.items()
            ],
        }
    )
    with write_session(engine) as session:
        missions, _ = offers.import_offers(session=session, data=data)
    kind_of = {m.id: m.title for m in missions}
    players = {}
    for user in ("done", "short"):
        for mission in missions:
            players[user] = start(client, signed, wall, mission.id, user, uid=f"pub-{user}")
    with write_session(engine) as session:  # both clicked before the events' history
        session.execute(sa.update(Progress).values(started_at=BASE - timedelta(minutes=1)))
    shuffled = random.Random(7)
    for user, at in (("done", 1), ("short", 2)):
        events = [
            {"userId": user, **e} for _, *streams, _ in KINDS.values() for e in streams[at - 1]
        ]
        shuffled.shuffle(events)  # the API evaluates them in time order
        assert signed.events(*events).status_code == 200

    with running_receiver() as receiver:
        configure(engine, wall[0].id, TEMPLATE.replace("{base}", receiver.url))
        sent = 0
        while (claimed := run_once(engine, box, api_settings)) > 0:  # a claim takes a few
            sent += claimed
    assert sent == len(KINDS)
    paid = sorted(kind_of[dict(q)["mission"]] for q in receiver.queries())
    assert paid == sorted(KINDS)
    assert {dict(q)["uid"] for q in receiver.queries()} == {"pub-done"}

    # The one who fell short sees each mission's progress in its own terms.
    body = client.get(
        "/offerwall/offers", params={"uid": "pub-short"}, headers={"x-api-key": wall[1]}
    ).json()
    shown = {
        kind_of[o["id"]]: (o["progress"]["current"], o["progress"]["target"])
        for o in body["data"]["missions"]
    }
    assert shown == {kind: expected for kind, (*_, expected) in KINDS.items()}
    completions = {kind_of[o["id"]]: o["progress"]["completion"] for o in body["data"]["missions"]}
    assert completions["steps"] == "steps" and completions["streak"] == "streak"

    # The hosted wall tells the same progress in words that fit each kind.
    page = wall_page(client, wall[0].owid, "pub-short").text
    for words in ("best 61, needs 60 or less", "0 of 2 steps", "2 / 3 days", "2 / 3"):
        assert words in page
    assert wall_page(client, wall[0].owid, "pub-short", lang="de").text.count("Bestwert 61") == 1
