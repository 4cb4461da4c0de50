"""API steps: the HTTP flows tests repeat (a player clicks a tracking link and is linked
to the game's user; a mission is completed through the signed endpoint), and an
offerwall's fraud rules set as staff set them."""

from __future__ import annotations

import httpx

from api.core.db import write_session
from api.fraud import Policy
from api.fraud import rules as fraud_rules
from api.studios.games import IssuedCredential
from tests.api.live_server import post_signed
from tests.api.tracking_helpers import click, platform_id
from tests.factories import iso_now, make_mission, mission_data

KILLS = mission_data()  # kill 10 players in one GAME_END
# Score 500 or more in one MATCH_END (the fraud tests' mission).
SCORE = {
    "title": "Score 500",
    "rule": {
        "event": "MATCH_END",
        "conditions": [{"field": "value", "op": ">=", "value": 500}],
        "completion": {"kind": "count", "threshold": 1},
    },
}


def at(seconds: float) -> str:
    """A time `seconds` from now, as the API takes it."""
    return iso_now(seconds)


def start(
    client, signed, wall, offer_id: str, user: str, kind: str = "mission", uid: str | None = None
) -> str:
    """The player clicks the tracking link and the game links its user to them."""
    player = platform_id(click(client, kind, offer_id, wall[0].owid, uid=uid or f"pub-{user}"))
    assert signed.identifiers({"userId": user, "platformUserId": player}).status_code == 200
    return player


def convert(client, signed, game, wall, engine) -> None:
    """Player p1 clicks the offerwall's link to a kills mission and completes it."""
    mission = make_mission(engine, game.game_id, **KILLS)
    start(client, signed, wall, mission.id, "p1")
    signed.events({"userId": "p1", "event": "GAME_END", "time": at(1), "traits": {"kills": 11}})


def set_offerwall_rules(
    engine, offerwall_id: str, actions: dict[str, str], policy: Policy | None = None
) -> None:
    """Staff set the offerwall's action per signal (over `policy`'s defaults)."""
    with write_session(engine) as session:
        fraud_rules.set_offerwall_rules(
            session=session,
            offerwall_id=offerwall_id,
            actions=actions,
            review_postbacks=False,
            policy=policy or Policy(),
        )


def link_over_http(
    http: httpx.Client, game: IssuedCredential, mission_id: str, owid: str, players: list[str]
) -> None:
    """On a running API (`serve_api`): each player clicks the mission's tracking link with
    their name as uid, and the game links its user of that name to them in one request."""
    links = []
    for name in players:
        answer = http.get(f"/missions/{mission_id}", params={"owid": owid, "uid": name})
        links.append({"userId": name, "platformUserId": platform_id(answer)})
    linked = post_signed(http, game, {"gameId": game.game_id, "identifiers": links})
    assert linked.status_code == 200, linked.text


def score_batch(game: IssuedCredential, user: str) -> dict:
    """A signed request's body: the game's user `user` scores 900 now (completes SCORE)."""
    event = {"userId": user, "event": "MATCH_END", "time": iso_now(), "value": 900}
    return {"gameId": game.game_id, "identifiers": [], "events": [event]}


def send_linking_late(
    signed, events: list[dict], cuts: list[int], user: str, player: str, linked_after: int
) -> None:
    """Send `events` split into batches of the sizes `cuts` gives (in turn), each batch in
    reverse (the API orders by time), and link the game's `user` to `player` after the
    first `linked_after` batches: those are replayed when the link comes."""
    position, batches = 0, []
    for size in cuts * (len(events) + 1):
        if position >= len(events):
            break
        batches.append(events[position : position + size][::-1])
        position += size
    for n, batch in enumerate(batches):
        if n == linked_after:
            signed.identifiers({"userId": user, "platformUserId": player})
        assert signed.events(*batch).status_code == 200
    if linked_after >= len(batches):
        signed.identifiers({"userId": user, "platformUserId": player})
