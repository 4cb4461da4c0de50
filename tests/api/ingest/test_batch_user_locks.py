"""A batch's game users are created and locked before its items are applied: what the
items do must stay exactly what applying them one by one, in request order, does."""

from __future__ import annotations

from sqlmodel import func, select

from api.core.db import new_session
from api.ingest._identifiers import identifiers_of
from models import GameUser
from tests.factories import make_platform_user

UNKNOWN_PLATFORM_USER = "7b0a3c9e-2a53-4f0e-9a57-0d1e3a4b5c6d"


def _ids(engine, game, user_id: str) -> dict:
    with new_session(engine) as session:
        return identifiers_of(session=session, game_id=game.game_id, user_id=user_id)


def _users(engine, user_id: str) -> int:
    with new_session(engine) as session:
        query = select(func.count()).select_from(GameUser).where(GameUser.user_id == user_id)
        return session.exec(query).one()


def test_an_all_null_item_before_the_item_creating_the_user_is_still_refused(signed, game, engine):
    response = signed.identifiers(
        {"userId": "newcomer", "email": None},
        {"userId": "newcomer", "email": "new@example.com"},
    )
    assert response.status_code == 207
    assert [(r["index"], r["code"]) for r in response.json()["rejected"]] == [
        (0, "identifier_required")
    ]
    assert _ids(engine, game, "newcomer") == {"email": "new@example.com"}


def test_a_user_whose_items_are_all_refused_is_not_created(signed, game, engine):
    response = signed.identifiers(
        {"userId": "ghost", "platformUserId": UNKNOWN_PLATFORM_USER, "email": "g@example.com"},
        {"userId": "ghost", "email": None},
        {"userId": "other", "steamId": "765"},
    )
    assert response.status_code == 207
    codes = [r["code"] for r in response.json()["rejected"]]
    assert codes == ["unknown_platform_user", "identifier_required"]
    assert _users(engine, "ghost") == 0
    assert _users(engine, "other") == 1


def test_items_of_a_batch_apply_in_request_order_whatever_the_order_of_user_ids(
    signed, game, engine
):
    platform = make_platform_user(engine)
    response = signed.identifiers(
        {"userId": "zed", "email": "a@example.com", "platformUserId": platform},
        {"userId": "amy", "steamId": "1"},
        {"userId": "zed", "email": "b@example.com"},
        {"userId": "amy", "steamId": None, "telegramId": "t"},
        {"userId": "zed", "platformUserId": None},
    )
    assert response.status_code == 200
    assert _ids(engine, game, "zed") == {"email": "b@example.com"}
    assert _ids(engine, game, "amy") == {"telegramId": "t"}


def test_a_link_made_by_an_earlier_item_stays_for_the_later_items_of_the_batch(
    signed, game, engine
):
    first = make_platform_user(engine)
    second = make_platform_user(engine, email="owner@example.com")
    response = signed.identifiers(
        {"userId": "p1", "platformUserId": first},
        {"userId": "p1", "email": "owner@example.com"},  # verified for another player
    )
    assert response.status_code == 200
    assert _ids(engine, game, "p1")["platformUserId"] == first != second
