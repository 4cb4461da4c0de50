"""The all-in-one server end to end: click, play, conversion, postback to a real receiver."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from api.core.crypto import signed_headers
from tests.live import cli
from tests.receiver import running_receiver

pytestmark = pytest.mark.e2e


def _signed_post(portal, path: str, payload: dict) -> httpx.Response:
    game = portal.game
    body = json.dumps(payload).encode()
    headers = signed_headers(game["clientId"], game["clientSecret"], body)
    return httpx.post(portal.url + path, content=body, headers=headers)


def test_a_played_mission_is_posted_back_by_the_servers_dispatcher(portal, tmp_path):
    with running_receiver() as receiver:
        wall = json.loads(cli(portal.env, "offerwall", "create", "E2E wall"))
        approved = json.loads(cli(portal.env, "offerwall", "approve", wall["id"]))
        cli(
            portal.env,
            "offerwall",
            "set-postback",
            approved["owid"],
            receiver.url + "/pb?tx={transaction_id}&uid={uid}&h={hash_key}",
        )
        offers_file = tmp_path / "offers.json"
        offers_file.write_text(
            json.dumps(
                {
                    "gameId": portal.game["gameId"],
                    "missions": [
                        {
                            "title": "Win once",
                            "payout": 2,
                            "destinationUrl": "https://game.example/",
                            "rule": {"event": "WIN"},
                        }
                    ],
                }
            )
        )
        [mission] = json.loads(cli(portal.env, "offers", "import", str(offers_file)))["missions"]

        click = httpx.get(
            f"{portal.url}/missions/{mission['id']}",
            params={"owid": approved["owid"], "uid": "e2e-player"},
        )
        assert click.status_code == 302
        player = parse_qs(urlsplit(click.headers["location"]).query)["platformid"][0]
        when = (datetime.now(UTC) + timedelta(seconds=1)).isoformat()
        answer = _signed_post(
            portal,
            "/v2/custom-events",
            {
                "gameId": portal.game["gameId"],
                "identifiers": [{"userId": "g-1", "platformUserId": player}],
                "events": [{"userId": "g-1", "event": "WIN", "time": when}],
            },
        )
        assert answer.json()["message"] == "OK"
        converted = time.perf_counter()
        while not receiver.requests and time.perf_counter() - converted < 10:
            time.sleep(0.05)
        print(
            f"\nconversion to postback received: {(time.perf_counter() - converted) * 1000:.0f} ms"
        )
        assert len(receiver.requests) == 1
        assert dict(receiver.queries()[0])["uid"] == "e2e-player"
