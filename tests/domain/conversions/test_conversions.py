"""Finding and reversing conversions (`api/conversions/ledger.py`): a reversal marks the
conversion once and queues exactly one reversal postback, also when two arrive together;
a designer sees and reverses only their studio's conversions; the search matches every
id a person may have at hand (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from api.conversions import ConversionError, ConversionRow
from api.conversions import ledger as conversions
from api.core.crypto import SecretBox
from api.core.db import new_session, write_session
from models import ConversionStatus, PostbackKind, Role
from models.tables import conversion as _conversion
from models.tables import game_user as _game_user
from models.tables import offerwall as _offerwall
from models.tables import postback as _postback
from models.tracking import TEST_UID
from models.types import utcnow
from portal.state.rows import conversion_line
from tests.databases import postgres_and_pgbouncer
from tests.factories import (
    make_account,
    make_conversion,
    make_game,
    make_mission,
    make_offerwall,
    make_studio,
)

REASON = "Chargeback from the player's bank."


@dataclass(frozen=True)
class Sold:
    """Studio A's game has a mission two players completed through one offerwall; the
    first player is also "hero-1" in the game. Studio B has a game of its own."""

    studio_a: str
    studio_b: str
    game_a: str
    mission_a: str
    transaction_id: str  # the first player's conversion
    other_transaction_id: str  # the second player's
    platform_user_id: str  # the first player's


def _transaction_of(engine: Engine, postback_id: int) -> tuple[str, str]:
    """The transaction id and platform user of the conversion a postback is for."""
    with new_session(engine) as session:
        row = session.execute(
            sa.select(_conversion.c.transaction_id, _conversion.c.platform_user_id)
            .join(_postback, _postback.c.conversion_id == _conversion.c.id)
            .where(_postback.c.id == postback_id)
        ).one()
    return row.transaction_id, row.platform_user_id


def _link_game_user(engine: Engine, game_id: str, user_id: str, platform_user_id: str) -> None:
    now = utcnow()
    with write_session(engine) as session:
        session.execute(
            _game_user.insert().values(
                game_id=game_id,
                user_id=user_id,
                platform_user_id=platform_user_id,
                created_at=now,
                updated_at=now,
            )
        )


@pytest.fixture
def sold(engine: Engine, box: SecretBox) -> Sold:
    studio_a, studio_b = make_studio(engine, "Studio A"), make_studio(engine, "Studio B")
    game_a = make_game(engine, box, "Arena A", studio_id=studio_a).game_id
    make_game(engine, box, "Arena B", studio_id=studio_b)
    mission = make_mission(engine, game_a, title="Win the Castle Siege").id
    wall, _ = make_offerwall(engine, box)
    first = make_conversion(engine, mission_id=mission, offerwall=wall, uid="pub-first")
    second = make_conversion(engine, mission_id=mission, offerwall=wall, uid="pub-second")
    transaction_id, player = _transaction_of(engine, first)
    other, _ = _transaction_of(engine, second)
    _link_game_user(engine, game_a, "hero-1", player)
    return Sold(studio_a, studio_b, game_a, mission, transaction_id, other, player)


def _reverse(engine: Engine, transaction_id: str, *, studio_id: str | None = None, **kw):
    with write_session(engine) as session:
        return conversions.reverse(
            session=session,
            transaction_id=transaction_id,
            reason=kw.get("reason", REASON),
            actor=kw.get("actor", "staff@example.com"),
            studio_id=studio_id,
        )


def _search(engine: Engine, text: str = "", *, studio_id: str | None = None, status: str = ""):
    with new_session(engine) as session:
        return conversions.search(session=session, studio_id=studio_id, text=text, status=status)


def _postbacks(engine: Engine) -> list[sa.Row]:
    with new_session(engine) as session:
        return list(
            session.execute(
                sa.select(_postback.c.conversion_id, _postback.c.kind, _conversion.c.transaction_id)
                .join(_conversion, _conversion.c.id == _postback.c.conversion_id)
                .order_by(_postback.c.id)
            )
        )


def _reversals(engine: Engine) -> list[str]:
    """The transaction ids of the reversal postbacks in the outbox."""
    return [r.transaction_id for r in _postbacks(engine) if r.kind == PostbackKind.REVERSAL]


def _status(engine: Engine, transaction_id: str) -> str:
    with new_session(engine) as session:
        return session.execute(
            sa.select(_conversion.c.status).where(_conversion.c.transaction_id == transaction_id)
        ).scalar_one()


def test_a_reversal_marks_the_conversion_and_queues_one_reversal_postback(engine, sold):
    row = _reverse(engine, sold.transaction_id, actor="ops@example.com")
    assert isinstance(row, ConversionRow)
    assert (row.transaction_id, row.status, row.reversal_reason, row.reversed_by) == (
        sold.transaction_id,
        ConversionStatus.REVERSED,
        REASON,
        "ops@example.com",
    )
    assert conversion_line(row).reversed_at != ""
    assert _status(engine, sold.transaction_id) == ConversionStatus.REVERSED
    assert _status(engine, sold.other_transaction_id) == ConversionStatus.APPROVED
    # The conversion's own postback, and one reversal of the same conversion.
    kinds = [(r.transaction_id, r.kind) for r in _postbacks(engine)]
    assert kinds.count((sold.transaction_id, PostbackKind.CONVERSION)) == 1
    assert _reversals(engine) == [sold.transaction_id]


def test_a_second_reversal_is_refused_and_queues_nothing(engine, sold):
    _reverse(engine, sold.transaction_id)
    with pytest.raises(ConversionError, match="already reversed"):
        _reverse(engine, sold.transaction_id, reason="Reversed again by mistake.")
    assert _reversals(engine) == [sold.transaction_id]
    [row] = _search(engine, sold.transaction_id).rows
    assert row.reversal_reason == REASON  # the first reason stays


@pytest.mark.parametrize("status", [ConversionStatus.PENDING, ConversionStatus.REJECTED])
def test_a_conversion_under_review_is_not_reversed(engine, sold, status):
    with write_session(engine) as session:
        session.execute(
            sa.update(_conversion)
            .where(_conversion.c.transaction_id == sold.transaction_id)
            .values(status=status)
        )
    with pytest.raises(ConversionError, match=f"is {status}: only an approved"):
        _reverse(engine, sold.transaction_id)
    assert _reversals(engine) == []


@pytest.mark.parametrize("reason", ["", "  no ", "x" * 501])
def test_a_reason_of_the_wrong_length_is_refused_beside_its_input(engine, sold, reason):
    with pytest.raises(ConversionError) as refused:
        _reverse(engine, sold.transaction_id, reason=reason)
    assert refused.value.field_errors() == {"reason": "Give a reason of 3 to 500 characters."}
    assert _status(engine, sold.transaction_id) == ConversionStatus.APPROVED
    assert _reversals(engine) == []


def test_a_designer_of_another_studio_gets_no_such_conversion(engine, sold):
    with pytest.raises(ConversionError, match=r"^No such conversion\.$"):
        _reverse(engine, sold.transaction_id, studio_id=sold.studio_b)
    with pytest.raises(ConversionError, match=r"^No such conversion\.$"):
        _reverse(engine, "not-a-transaction", studio_id=sold.studio_b)  # the same answer
    assert _search(engine, studio_id=sold.studio_b).rows == []
    assert _search(engine, sold.transaction_id, studio_id=sold.studio_b).rows == []
    assert _reversals(engine) == []
    # The studio's own designer sees and reverses it.
    assert len(_search(engine, studio_id=sold.studio_a).rows) == 2
    assert _reverse(engine, sold.transaction_id, studio_id=sold.studio_a).status == "reversed"


def test_the_scope_of_an_account():
    assert conversions.scope(make_account(Role.STAFF)) is None
    assert conversions.scope(make_account(Role.DESIGNER, studio_id="studio-a")) == "studio-a"
    # A designer without a studio sees no conversion, never every one.
    assert conversions.scope(make_account(Role.DESIGNER)) == conversions.NO_STUDIO


def test_a_designer_without_a_studio_sees_nothing(engine, sold):
    homeless = conversions.scope(make_account(Role.DESIGNER))
    assert _search(engine, studio_id=homeless).rows == []
    with pytest.raises(ConversionError, match="No such conversion"):
        _reverse(engine, sold.transaction_id, studio_id=homeless)


@pytest.mark.parametrize(
    "text",
    ["transaction", "uid", "platform user", "game user", "mission id", "part of the title"],
)
def test_the_search_finds_a_conversion_by(engine, sold, text):
    query = {
        "transaction": sold.transaction_id,
        "uid": "pub-first",
        "platform user": sold.platform_user_id,
        "game user": "hero-1",
        "mission id": sold.mission_a,
        "part of the title": "castle sie",
    }[text]
    found = {r.transaction_id for r in _search(engine, f" {query} ").rows}
    assert sold.transaction_id in found
    if text not in ("mission id", "part of the title"):  # both players share the mission
        assert found == {sold.transaction_id}


def test_the_search_finds_nothing_for_other_words(engine, sold):
    for text in ("nobody", "hero", "pub-f", "%", "_"):  # ids match whole, titles in part
        assert _search(engine, text).rows == [], text


def test_a_game_user_of_another_game_does_not_match(engine, box, sold):
    """A game user id of another game is another person, even when linked to the player."""
    other_game = make_game(engine, box, "Other", studio_id=sold.studio_a).game_id
    _link_game_user(engine, other_game, "hero-2", sold.platform_user_id)
    assert _search(engine, "hero-2").rows == []


def test_the_status_filter(engine, sold):
    _reverse(engine, sold.transaction_id)
    reversed_ = _search(engine, status=ConversionStatus.REVERSED).rows
    approved = _search(engine, status=ConversionStatus.APPROVED).rows
    assert [r.transaction_id for r in reversed_] == [sold.transaction_id]
    assert [r.transaction_id for r in approved] == [sold.other_transaction_id]
    assert len(_search(engine).rows) == 2


def _wanting_test_postbacks(engine: Engine, wall_id: str) -> None:
    with write_session(engine) as session:
        session.execute(
            sa.update(_offerwall).where(_offerwall.c.id == wall_id).values(test_postbacks=True)
        )


def test_the_test_players_conversions_are_marked_and_filtered_in_sql(engine, box, sold):
    wall, _ = make_offerwall(engine, box, name="Tried Wall")
    _wanting_test_postbacks(engine, wall.id)  # the factory returns the test one's postback
    tried, _ = _transaction_of(
        engine, make_conversion(engine, mission_id=sold.mission_a, offerwall=wall, uid=TEST_UID)
    )

    def listed(test: bool | None, **search) -> tuple[list[tuple[str, bool]], int]:
        with new_session(engine) as session:
            found = conversions.search(session=session, studio_id=None, test=test, **search)
        return [(r.transaction_id, r.test) for r in found.rows], found.total

    # Every conversion by default, the test player's marked; the total counted in SQL.
    every, total = listed(None)
    assert total == 3 and (tried, True) in every
    assert {r for r, test in every if not test} == {sold.transaction_id, sold.other_transaction_id}
    assert listed(True) == ([(tried, True)], 1)
    real, total = listed(False)
    assert total == 2 and {r for r, _ in real} == {sold.transaction_id, sold.other_transaction_id}
    # With the search and the status filter, as the Conversions page combines them.
    assert listed(True, text=TEST_UID) == ([(tried, True)], 1)
    assert listed(False, text=TEST_UID) == ([], 0)
    assert listed(True, status=ConversionStatus.REVERSED) == ([], 0)
    assert conversion_line(conversions_row(engine, tried)).test is True


def conversions_row(engine: Engine, transaction_id: str) -> ConversionRow:
    [row] = _search(engine, transaction_id).rows
    return row


def test_a_uid_equal_to_another_transaction_id_reverses_only_that_transaction(engine, box, sold):
    """A publisher's uid is any text they send, another conversion's transaction id too:
    the reversal answers with its own conversion, not with whatever the text matches."""
    wall, _ = make_offerwall(engine, box, name="Echo Wall")
    make_conversion(engine, mission_id=sold.mission_a, offerwall=wall, uid=sold.transaction_id)
    assert len(_search(engine, sold.transaction_id).rows) == 2
    row = _reverse(engine, sold.transaction_id)
    assert (row.transaction_id, row.uid, row.status) == (
        sold.transaction_id,
        "pub-first",
        "reversed",
    )
    assert _reversals(engine) == [sold.transaction_id]


def test_two_reversals_at_once_reverse_it_once(engine, sold):
    """The first reversal holds its transaction open while the second arrives: on
    PostgreSQL the second found the conversion approved and waits on its row; when the
    first commits, its update finds it reversed. One reversal, one postback."""
    first_updated = threading.Event()

    def first() -> str:
        with write_session(engine) as session:
            conversions.reverse(
                session=session,
                transaction_id=sold.transaction_id,
                reason="First reason.",
                actor="first@example.com",
                studio_id=None,
            )
            first_updated.set()
            time.sleep(0.5)  # the second reaches its update meanwhile
        return "reversed"

    def second() -> str:
        first_updated.wait(10)
        try:
            _reverse(engine, sold.transaction_id, reason="Second reason.")
        except ConversionError as refused:
            return str(refused)
        return "reversed"

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = [pool.submit(first), pool.submit(second)]
        results = [a.result(timeout=30) for a in answers]
    assert results == ["reversed", "This conversion is already reversed."]
    assert _reversals(engine) == [sold.transaction_id]
    [row] = _search(engine, sold.transaction_id).rows
    assert (row.reversal_reason, row.reversed_by) == ("First reason.", "first@example.com")


@postgres_and_pgbouncer
def test_two_reversals_released_together_reverse_it_once(engine, sold):
    """Both start at the same moment, each on its own connection (PostgreSQL: SQLite's
    writers queue on one lock, so nothing races there)."""
    start = threading.Barrier(2)

    def one(n: int) -> str:
        start.wait()
        try:
            _reverse(engine, sold.transaction_id, reason=f"Reason {n}.")
        except ConversionError:
            return "refused"
        return "reversed"

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = sorted(pool.map(one, range(2)))
    assert results == ["refused", "reversed"]
    assert _reversals(engine) == [sold.transaction_id]
