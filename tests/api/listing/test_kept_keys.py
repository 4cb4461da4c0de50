"""What the offers API keeps in memory (an API key's offerwall, the catalog version, the
rendered pages) never outlives a change: a suspension made by another process is refused
by a running API process within a second, and a rotation or a mission's change shows at
once in the process that made it (SQLite and PostgreSQL)."""

from __future__ import annotations

import time

import httpx

from api.core.db import write_session
from api.publishers import offerwalls
from tests.api.live_server import serve_api
from tests.databases import also_pgbouncer


def _status(http: httpx.Client, key: str) -> int:
    return http.get("/offerwall/offers", headers={"x-api-key": key}).status_code


def _set(engine, offerwall_id: str, change) -> None:
    with write_session(engine) as session:
        change(
            session=session, offerwall=offerwalls.get_offerwall(session=session, ref=offerwall_id)
        )


@also_pgbouncer
def test_a_suspended_key_is_refused_by_another_api_process_within_a_second(
    db_url, engine, wall, tmp_path
):
    offerwall, key = wall
    with serve_api(db_url, tmp_path) as url, httpx.Client(base_url=url, timeout=10) as http:
        assert [_status(http, key) for _ in range(3)] == [200, 200, 200]  # read, then kept
        _set(engine, offerwall.id, offerwalls.suspend)  # by this process, not the server
        began, statuses = time.monotonic(), []
        while not statuses or statuses[-1] == 200:
            statuses.append(_status(http, key))
            assert time.monotonic() - began < 1.0, f"still listed a second later: {statuses}"
            time.sleep(0.01)
        assert statuses[-1] == 403
        _set(engine, offerwall.id, offerwalls.reinstate)
        began = time.monotonic()
        while _status(http, key) != 200:
            assert time.monotonic() - began < 1.0, "still refused a second after reinstating"
            time.sleep(0.01)


def test_a_change_in_this_process_shows_on_the_next_call(client, engine, box, wall):
    offerwall, key = wall
    assert _status(client, key) == 200
    _set(engine, offerwall.id, offerwalls.suspend)
    assert _status(client, key) == 403
    _set(engine, offerwall.id, offerwalls.reinstate)
    assert _status(client, key) == 200
    with write_session(engine) as session:
        new = offerwalls.rotate_key(
            session=session,
            box=box,
            offerwall=offerwalls.get_offerwall(session=session, ref=offerwall.id),
            grace="none",
        ).api_key
    assert (_status(client, key), _status(client, new)) == (401, 200)
