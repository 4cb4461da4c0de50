"""A replaced API key keeps listing offers for the grace period its publisher chose, and
gets 401 after it; with no grace it stops at once (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from api.core.db import write_session
from api.publishers import offerwalls
from models.types import utcnow


def _offers(client, key: str) -> int:
    return client.get("/offerwall/offers", headers={"x-api-key": key}).status_code


def _rotate(engine, box, offerwall_id: str, grace: str) -> str:
    with write_session(engine) as session:
        offerwall = offerwalls.get_offerwall(session=session, ref=offerwall_id)
        return offerwalls.rotate_key(
            session=session, box=box, offerwall=offerwall, grace=grace
        ).api_key


@pytest.mark.parametrize("grace", ["1h", "24h"])
def test_the_old_key_works_inside_its_grace_and_not_after(client, engine, box, wall, grace, clock):
    offerwall, old = wall
    new = _rotate(engine, box, offerwall.id, grace)
    assert (_offers(client, old), _offers(client, new)) == (200, 200)
    with write_session(engine) as session:
        until = offerwalls.key_grace_until(
            offerwalls.get_offerwall(session=session, ref=offerwall.id)
        )
    expected = timedelta(hours=1 if grace == "1h" else 24)
    assert until is not None and abs(until - utcnow() - expected) < timedelta(minutes=1)
    clock.set(until - timedelta(seconds=5))  # still inside: kept and listed
    assert _offers(client, old) == 200
    clock.set(until + timedelta(seconds=1))  # past it: refused, kept or not
    assert (_offers(client, old), _offers(client, new)) == (401, 200)


def test_no_grace_stops_the_old_key_at_once(client, engine, box, wall):
    offerwall, old = wall
    new = _rotate(engine, box, offerwall.id, "none")
    assert (_offers(client, old), _offers(client, new)) == (401, 200)


def test_only_the_last_replaced_key_has_grace(client, engine, box, wall):
    offerwall, first = wall
    second = _rotate(engine, box, offerwall.id, "24h")
    third = _rotate(engine, box, offerwall.id, "1h")
    assert [_offers(client, k) for k in (first, second, third)] == [401, 200, 200]


def test_an_unknown_grace_is_refused(engine, box, wall):
    with pytest.raises(offerwalls.OfferwallError, match="none, 1h or 24h"):
        _rotate(engine, box, wall[0].id, "1w")


def test_a_suspended_offerwalls_old_key_is_refused_like_its_new_one(client, engine, box, wall):
    offerwall, old = wall
    new = _rotate(engine, box, offerwall.id, "24h")
    with write_session(engine) as session:
        offerwalls.suspend(
            session=session, offerwall=offerwalls.get_offerwall(session=session, ref=offerwall.id)
        )
    assert (_offers(client, old), _offers(client, new)) == (403, 403)
