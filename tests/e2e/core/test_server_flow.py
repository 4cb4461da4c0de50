"""The all-in-one server end to end: click, play, conversion, postback to a real receiver."""

from __future__ import annotations

import time

import pytest

from api.publishers import offerwalls
from tests.e2e.steps import approved_wall, convert
from tests.receiver import running_receiver

pytestmark = pytest.mark.e2e


def test_a_played_mission_is_posted_back_by_the_servers_dispatcher(portal):
    with running_receiver() as receiver:
        # The offerwall as staff's commands make it (tests/unit/core/test_cli.py runs them).
        owid = approved_wall(portal, "E2E wall")
        with portal.setting_up() as (session, _):
            offerwalls.set_postback_url(
                session=session,
                offerwall=offerwalls.get_offerwall(session=session, ref=owid),
                url=receiver.url + "/pb?tx={transaction_id}&uid={uid}&h={hash_key}",
            )
        convert(portal, owid, "e2e-player")
        converted = time.perf_counter()
        while not receiver.requests and time.perf_counter() - converted < 10:
            time.sleep(0.05)
        print(
            f"\nconversion to postback received: {(time.perf_counter() - converted) * 1000:.0f} ms"
        )
        assert len(receiver.requests) == 1
        assert dict(receiver.queries()[0])["uid"] == "e2e-player"
