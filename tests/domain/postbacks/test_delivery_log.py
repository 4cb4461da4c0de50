"""The publisher's delivery log (`api/postbacks/delivery_log.py`: `delivery_log`, `attempts`,
`owned_postback`):
an offerwall's postbacks newest first, each with its kind (conversion or reversal) and its
conversion's status, filtered by status and searched by player uid, click id or
transaction id, paged, with each attempt; another offerwall's postbacks never appear
and never open (SQLite and PostgreSQL, a real local receiver)."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import Engine

from api.conversions import ledger as conversions
from api.core import paging
from api.core.config import Settings
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from api.postbacks import delivery_log as deliveries
from api.postbacks import outbox as postbacks
from api.postbacks.endpoint import EndpointError
from api.publishers.wall_settings import set_test_postbacks
from models import Offerwall, Role
from models.tracking import TEST_UID
from portal.postbacks.state import attempt_line, delivery_line
from tests.factories import (
    make_account,
    make_conversion,
    make_game,
    make_mission,
    make_paying_offerwall,
)
from tests.outbox import run_once
from tests.receiver import running_receiver


@pytest.fixture
def private_ok(settings: Settings) -> Settings:
    return settings.model_copy(update={"postback_allow_private": True})


@pytest.fixture
def mission_id(engine: Engine, box: SecretBox) -> str:
    return make_mission(engine, make_game(engine, box).game_id).id


PLAYERS = itertools.count()


def _convert(engine: Engine, mission_id: str, wall: Offerwall, count: int) -> list[int]:
    """`count` conversions through the offerwall, each by a new player."""
    return [
        make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=f"p{next(PLAYERS)}")
        for _ in range(count)
    ]


def _deliver(engine: Engine, box: SecretBox, settings: Settings) -> None:
    """Dispatch until nothing is due."""
    while run_once(engine, box, settings, threads=2):
        pass


def _log(engine: Engine, wall: Offerwall, **filters) -> paging.Window:
    with new_session(engine) as session:
        return deliveries.delivery_log(session=session, offerwall=wall, **filters)


def test_the_log_lists_the_offerwalls_postbacks_newest_first_with_their_last_answer(
    engine, box, mission_id, private_ok
):
    with running_receiver() as receiver:
        receiver.statuses = [500]  # the first postback sent is retried later
        wall = make_paying_offerwall(
            engine, box, name="Wall one", postback_url=receiver.url + "/pb?tx={transaction_id}"
        )
        ids = _convert(engine, mission_id, wall, 2)
        _deliver(engine, box, private_ok)
    log = _log(engine, wall)
    assert [row.id for row in log.rows] == sorted(ids, reverse=True)
    assert (log.total, log.page, log.pages) == (2, 1, 1)
    by_status = {row.status: row for row in log.rows}
    assert set(by_status) == {"pending", "delivered"}
    pending, delivered = delivery_line(by_status["pending"]), delivery_line(by_status["delivered"])
    assert (pending.last_status, pending.attempts) == ("500", 1) and pending.next_attempt_at
    assert (delivered.last_status, delivered.next_attempt_at) == ("200", "")
    assert delivered.payout == "150 GEM" and delivered.mission == "Kill 10 players in one game"
    assert {(row.kind, row.conversion_status) for row in log.rows} == {("conversion", "approved")}


def test_a_reversal_is_a_row_of_its_own_beside_its_conversions(engine, box, mission_id, private_ok):
    with running_receiver() as receiver:
        wall = make_paying_offerwall(
            engine, box, name="Wall one", postback_url=receiver.url + "/pb"
        )
        kept, reversed_id = _convert(engine, mission_id, wall, 2)
        _deliver(engine, box, private_ok)
        target = next(row for row in _log(engine, wall).rows if row.id == reversed_id)
        with write_session(engine) as session:
            conversions.reverse(
                session=session,
                transaction_id=target.transaction_id,
                reason="Chargeback",
                actor="staff@example.com",
                studio_id=None,
            )
    log = _log(engine, wall)
    assert [(row.kind, row.conversion_status, row.status) for row in log.rows] == [
        ("reversal", "reversed", "pending"),
        ("conversion", "reversed", "delivered"),
        ("conversion", "approved", "delivered"),
    ]
    assert log.rows[2].id == kept
    # The filters see both kinds: the status, and the transaction id they share.
    pending = _log(engine, wall, status="pending").rows
    assert [(row.kind, row.transaction_id) for row in pending] == [
        ("reversal", target.transaction_id)
    ]
    found = _log(engine, wall, search=target.transaction_id).rows
    assert [row.kind for row in found] == ["reversal", "conversion"]


def test_status_and_transaction_id_filter_the_log(engine, box, mission_id, private_ok):
    with running_receiver() as receiver:
        wall = make_paying_offerwall(
            engine, box, name="Wall one", postback_url=receiver.url + "/pb"
        )
        _convert(engine, mission_id, wall, 2)
        _deliver(engine, box, private_ok)
    _convert(engine, mission_id, wall, 1)  # queued after the delivery: still pending
    assert [row.status for row in _log(engine, wall, status="pending").rows] == ["pending"]
    assert len(_log(engine, wall, status="delivered").rows) == 2
    assert _log(engine, wall, status="failed").rows == []

    target = _log(engine, wall).rows[1]
    found = _log(engine, wall, search=f"  {target.transaction_id[4:16]} ").rows
    assert [row.id for row in found] == [target.id]
    assert _log(engine, wall, search="no-such-transaction").total == 0


def test_the_log_is_searched_by_player_uid_click_id_or_transaction_id(engine, box, mission_id):
    wall = make_paying_offerwall(engine, box, name="Wall one")
    for uid, clickid in (("Player-Alpha", "ck-100"), ("player-beta", "ck-200"), ("gamma", "x_1")):
        make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=uid, clickid=clickid)

    def found(text: str) -> list[str]:
        return sorted(row.uid for row in _log(engine, wall, search=text).rows)

    assert found("player-alpha") == ["Player-Alpha"]  # any case
    assert found("PLAYER") == ["Player-Alpha", "player-beta"]
    assert found("ck-200") == ["player-beta"]
    assert found("ck-") == ["Player-Alpha", "player-beta"]
    # A wildcard of LIKE is a plain character here.
    assert found("x_1") == ["gamma"] and found("_") == ["gamma"] and found("%") == []
    beta = next(row for row in _log(engine, wall).rows if row.uid == "player-beta")
    assert beta.clickid == "ck-200"
    assert found(beta.transaction_id) == ["player-beta"]


def test_the_test_players_postbacks_are_marked_and_filtered_in_sql(engine, box, mission_id):
    wall = make_paying_offerwall(engine, box, name="Wall one")
    with write_session(engine) as session:  # so that the test player's has a postback
        staff = make_account(Role.STAFF)
        set_test_postbacks(session=session, account=staff, requested=wall.id, send=True)
    real = make_conversion(engine, mission_id=mission_id, offerwall=wall, uid="real-player")
    tried = make_conversion(engine, mission_id=mission_id, offerwall=wall, uid=TEST_UID)

    def listed(**filters) -> tuple[list[tuple[int, bool]], int]:
        found = _log(engine, wall, **filters)
        return [(row.id, row.test) for row in found.rows], found.total

    assert listed() == ([(tried, True), (real, False)], 2)  # every one, the test one marked
    assert listed(test=True) == ([(tried, True)], 1)
    assert listed(test=False) == ([(real, False)], 1)
    assert listed(test=True, search="real-player") == ([], 0)
    assert listed(test=True, status="pending") == ([(tried, True)], 1)
    assert delivery_line(_log(engine, wall, test=True).rows[0]).test is True


def test_the_log_is_paged_by_twenty_and_a_page_out_of_range_is_clamped(engine, box, mission_id):
    wall = make_paying_offerwall(engine, box, name="Wall one")
    ids = sorted(_convert(engine, mission_id, wall, paging.PAGE_SIZE + 3), reverse=True)
    first, second = _log(engine, wall, page=1), _log(engine, wall, page=2)
    assert [row.id for row in first.rows] == ids[:20]
    assert [row.id for row in second.rows] == ids[20:]
    assert (second.total, second.pages) == (23, 2)
    assert _log(engine, wall, page=99).page == 2
    assert _log(engine, wall, page=0).page == 1
    assert _log(engine, wall, status="delivered").pages == 1  # an empty log is one page


def test_another_offerwalls_postbacks_never_appear_or_open(engine, box, mission_id):
    mine = make_paying_offerwall(engine, box, name="Mine")
    theirs = make_paying_offerwall(engine, box, name="Theirs")
    my_ids = _convert(engine, mission_id, mine, 2)
    [their_id] = _convert(engine, mission_id, theirs, 1)
    assert sorted(row.id for row in _log(engine, mine).rows) == sorted(my_ids)
    their_txn = _log(engine, theirs).rows[0].transaction_id
    assert _log(engine, mine, search=their_txn).rows == []
    with new_session(engine) as session:
        assert deliveries.owned_postback(session=session, offerwall=mine, postback_id=my_ids[0])
        with pytest.raises(EndpointError) as other:
            deliveries.owned_postback(session=session, offerwall=mine, postback_id=their_id)
        with pytest.raises(EndpointError) as missing:
            deliveries.owned_postback(session=session, offerwall=mine, postback_id=10**9)
    assert str(other.value) == str(missing.value)  # the same answer: nothing learned


def test_attempts_list_every_try_in_order_and_whether_it_was_sent(
    engine, box, mission_id, private_ok
):
    with running_receiver() as receiver:
        receiver.statuses = [503]
        wall = make_paying_offerwall(
            engine, box, name="Wall one", postback_url=receiver.url + "/pb"
        )
        [postback_id] = _convert(engine, mission_id, wall, 1)
        _deliver(engine, box, private_ok)
        postbacks.resend(engine, postback_id)
        _deliver(engine, box, private_ok)
    unsent = make_paying_offerwall(engine, box, name="No URL")
    [unsent_id] = _convert(engine, mission_id, unsent, 1)
    _deliver(engine, box, private_ok)
    with new_session(engine) as session:
        postback = deliveries.owned_postback(
            session=session, offerwall=wall, postback_id=postback_id
        )
        tries = deliveries.attempts(session=session, postback=postback)
        never = deliveries.attempts(
            session=session,
            postback=deliveries.owned_postback(
                session=session, offerwall=unsent, postback_id=unsent_id
            ),
        )
    assert [(a.status_code, a.answer, a.sent) for a in tries] == [
        ("503", "try again", True),
        ("200", "ok", True),
    ]
    assert attempt_line(tries[0]).started_at <= attempt_line(tries[1]).started_at
    assert [(a.status_code, a.sent, a.error) for a in never] == [
        ("", False, "the offerwall has no postback URL")
    ]
