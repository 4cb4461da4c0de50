"""What a game hears of its conversions decided after they were made: a held one
approved or rejected in review, an approved one reversed (docs/game-integration.md#webhooks).
The conversion made is told by the engine itself (api/missions/progress.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from api.webhooks.messages import emit
from models.tables import conversion as _conversion
from models.tables import game_user as _game_user
from models.tables import mission as _mission


def tell_decided(
    db: Any,
    conversion_ids: Sequence[int],
    message_type: str,
    now: datetime,
    *,
    reason: str | None = None,
) -> int:
    """Store `message_type` (conversion.approved, conversion.rejected, conversion.reversed)
    for each conversion, but the test player's, in the caller's transaction."""
    if not conversion_ids:
        return 0
    user = (
        sa.select(sa.func.min(_game_user.c.user_id))
        .where(
            _game_user.c.platform_user_id == _conversion.c.platform_user_id,
            _game_user.c.game_id == _mission.c.game_id,
        )
        .scalar_subquery()
    )
    rows = db.execute(
        sa.select(
            _conversion.c.transaction_id,
            _conversion.c.platform_user_id,
            _conversion.c.quest_id,
            _conversion.c.period,
            _conversion.c.stage,
            _conversion.c.payout_micros,
            _mission.c.id.label("mission_id"),
            _mission.c.title,
            _mission.c.game_id,
            user.label("user_id"),
        )
        .select_from(_conversion.join(_mission, _mission.c.id == _conversion.c.mission_id))
        .where(_conversion.c.id.in_(list(conversion_ids)), ~_conversion.c.test)
        .order_by(_conversion.c.id)
    ).all()
    told = 0
    for r in rows:
        data = {
            "userId": r.user_id,
            "platformUserId": r.platform_user_id,
            "mission": {"id": r.mission_id, "title": r.title},
            "questId": r.quest_id,
            "period": r.period,
            "transactionId": r.transaction_id,
            "payoutUsd": format(Decimal(r.payout_micros) / 1_000_000, "f"),
            "stage": r.stage,
        }
        if reason is not None:
            data["reason"] = reason
        told += emit(
            db, game_id=r.game_id, player=r.platform_user_id, items=[(message_type, data)], now=now
        )
    return told
