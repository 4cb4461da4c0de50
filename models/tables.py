"""The tables as SQLAlchemy Core objects, for the hot paths that skip the ORM."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table

from models import (
    BlockedEntry,
    BudgetSpend,
    CapCount,
    CatalogVersion,
    CheatFlag,
    Click,
    Conversion,
    Event,
    Game,
    GameCredential,
    GameUser,
    GameUserIdentifier,
    IdempotencyRecord,
    Mission,
    MissionPool,
    Offerwall,
    PayoutRule,
    PlatformUser,
    PlatformUserIdentifier,
    Postback,
    PostbackAttempt,
    Progress,
    Promotion,
    Quest,
    RefusedClick,
    SupportTicket,
    WebhookAttempt,
    WebhookEndpoint,
    WebhookMessage,
)
from models.events import SignedRefusal, SignedRequest


def _table(model: Any) -> Table:
    table: Table = model.__table__
    return table


blocked_entry = _table(BlockedEntry)
budget_spend = _table(BudgetSpend)
cap_count = _table(CapCount)
catalog_version = _table(CatalogVersion)
cheat_flag = _table(CheatFlag)
click = _table(Click)
conversion = _table(Conversion)
event = _table(Event)
game = _table(Game)
game_credential = _table(GameCredential)
game_user = _table(GameUser)
game_user_identifier = _table(GameUserIdentifier)
idempotency_record = _table(IdempotencyRecord)
mission = _table(Mission)
mission_pool = _table(MissionPool)
offerwall = _table(Offerwall)
payout_rule = _table(PayoutRule)
platform_user = _table(PlatformUser)
platform_user_identifier = _table(PlatformUserIdentifier)
postback = _table(Postback)
postback_attempt = _table(PostbackAttempt)
progress = _table(Progress)
promotion = _table(Promotion)
quest = _table(Quest)
refused_click = _table(RefusedClick)
signed_refusal = _table(SignedRefusal)
signed_request = _table(SignedRequest)
support_ticket = _table(SupportTicket)
webhook_attempt = _table(WebhookAttempt)
webhook_endpoint = _table(WebhookEndpoint)
webhook_message = _table(WebhookMessage)

# A new progress row's tally: nothing counted yet.
EMPTY_TALLY = {
    "count": 0,
    "run": 0,
    "total": 0.0,
    "completions": 0,
    "rate_minute": 0,
    "rate_count": 0,
}

# A progress row's state, as the tracking link inserts it and the engine reads it back.
PROGRESS_STATE = (
    "mission_id",
    "platform_user_id",
    "quest_id",
    "offerwall_id",
    "click_id",
    "status",
    "started_at",
    "expires_at",
    "count",
    "run",
    "total",
    "completions",
    "period",
    "resets_at",
)
