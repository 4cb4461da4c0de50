"""Clicks that arrive together share one transaction (SQLite's group commit,
`api.tracking.record_clicks_together`): each gets its own answer, and a refused click,
even one refused after its first writes, leaves nothing behind while the others stand."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Engine

from api.core.crypto import SecretBox
from api.fraud import DEFAULT_POLICY
from api.tracking import ClickIn, ScreenedClick, Tracked, TrackingRefusal, record_clicks_together
from models import RefusalReason
from tests.factories import (
    FixedCountries,
    make_game,
    make_mission,
    make_offerwall,
    make_quest,
    mission_data,
)


def _click(offer_id: str, owid: str, uid: str, kind: str = "mission") -> ScreenedClick:
    return ScreenedClick(
        ClickIn(
            kind=kind,
            offer_id=offer_id,
            owid=owid,
            uid=uid,
            clickid=None,
            subs=(None, None, None),
            ip="203.0.113.7",
            user_agent="test",
        )
    )


def _count(engine: Engine, table: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


def test_each_click_of_a_group_gets_its_own_answer(engine: Engine, box: SecretBox) -> None:
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    first, second = make_mission(engine, game.game_id), make_mission(engine, game.game_id)

    answers = record_clicks_together(
        engine,
        FixedCountries(),
        DEFAULT_POLICY,
        [
            _click(first.id, wall.owid, "p1"),
            _click("no-such-offer", wall.owid, "p1"),
            _click(second.id, wall.owid, "p1"),  # the player the first click created
            _click(first.id, "no-such-wall", "p2"),
        ],
    )

    tracked, unknown_offer, again, unknown_wall = answers
    assert isinstance(tracked, Tracked) and isinstance(again, Tracked)
    assert again.platform_user_id == tracked.platform_user_id
    assert tracked.redirect_url.endswith(f"platformid={tracked.platform_user_id}")
    assert isinstance(unknown_offer, TrackingRefusal)
    assert unknown_offer.reason == RefusalReason.UNKNOWN_OFFER
    assert isinstance(unknown_wall, TrackingRefusal)
    assert unknown_wall.reason == RefusalReason.UNKNOWN_OFFERWALL
    assert (_count(engine, "click"), _count(engine, "progress")) == (2, 2)
    assert _count(engine, "platform_user") == 1


def test_a_click_refused_after_its_writes_is_rolled_back_alone(
    engine: Engine, box: SecretBox
) -> None:
    """A quest's start cap refuses the second new player only once their player, click and
    progress rows are written: those go, the first player's stay."""
    game = make_game(engine, box)
    wall, _ = make_offerwall(engine, box)
    quest = make_quest(engine, game.game_id, [mission_data()], startCap=1)

    first, second = record_clicks_together(
        engine,
        FixedCountries(),
        DEFAULT_POLICY,
        [_click(quest.id, wall.owid, "p1", "quest"), _click(quest.id, wall.owid, "p2", "quest")],
    )

    assert isinstance(first, Tracked)
    assert isinstance(second, TrackingRefusal) and second.status == 410
    assert (_count(engine, "click"), _count(engine, "progress")) == (1, 1)
    assert _count(engine, "platform_user") == 1
    with engine.connect() as conn:
        starts = conn.execute(sa.text("SELECT starts FROM quest")).scalar_one()
    assert starts == 1
