"""The events anti-cheat rules set aside (docs/fraud.md#anti-cheat-rules): the Fraud page
lists them, and the game's live debugger (`api/ingest/debugger.py`) shows a game's or a
user's. Staff see everything; a designer what concerns their studio's games. The rows
carry the moment each was set aside; the portal writes it (portal/fraud/state.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Session

from models import Game
from models.tables import cheat_flag as _cheat_flag
from models.tables import mission as _mission

_game: sa.Table = Game.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class FlagRow:
    at: datetime
    mission: str
    user_id: str
    event: str
    rule: str
    detail: str


def cheat_flags(
    *, session: Session, studio_id: str | None, game_id: str = "", user_id: str = "", limit=50
) -> list[FlagRow]:
    """Events anti-cheat rules set aside, newest first (a game's, a user's)."""
    query = (
        sa.select(
            _cheat_flag.c.created_at,
            _mission.c.title,
            _cheat_flag.c.user_id,
            _cheat_flag.c.event,
            _cheat_flag.c.rule,
            _cheat_flag.c.detail,
        )
        .select_from(
            _cheat_flag.join(_mission, _mission.c.id == _cheat_flag.c.mission_id).join(
                _game, _game.c.id == _cheat_flag.c.game_id
            )
        )
        .order_by(_cheat_flag.c.id.desc())
        .limit(limit)
    )
    if studio_id is not None:
        query = query.where(_game.c.studio_id == studio_id)
    if game_id:
        query = query.where(_cheat_flag.c.game_id == game_id)
    if user_id:
        query = query.where(_cheat_flag.c.user_id == user_id)
    return [
        FlagRow(r.created_at, r.title, r.user_id, r.event, r.rule, r.detail)
        for r in session.execute(query)
    ]
