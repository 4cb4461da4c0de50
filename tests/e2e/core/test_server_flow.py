"""The all-in-one server end to end: click, play, conversion, postback to a real receiver."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.steps import convert
from tests.live import cli
from tests.receiver import running_receiver

pytestmark = pytest.mark.e2e


def test_a_played_mission_is_posted_back_by_the_servers_dispatcher(portal):
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
        convert(portal, approved["owid"], "e2e-player")
        converted = time.perf_counter()
        while not receiver.requests and time.perf_counter() - converted < 10:
            time.sleep(0.05)
        print(
            f"\nconversion to postback received: {(time.perf_counter() - converted) * 1000:.0f} ms"
        )
        assert len(receiver.requests) == 1
        assert dict(receiver.queries()[0])["uid"] == "e2e-player"
