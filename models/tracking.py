"""Clicks on tracking links, players' progress on missions, and conversions."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from models.types import BigIntPK, JSONDoc, UTCDateTime, new_uuid, utcnow

# The uid of an offerwall's test player (the publisher's "Open my wall as a test player"):
# its clicks and conversions are tests, never paid, out of the reports, and without
# postbacks unless the offerwall asks for them (docs/publisher-integration.md#the-test-player).
TEST_UID = "questwall-test-player"
# The lists of conversions and postbacks mark the test player's and filter by it: every
# one (no choice), real players' only, or the test player's only (the `test` they want).
TEST_CHOICES: dict[str, bool] = {"real": False, "test": True}


class Click(SQLModel, table=True):
    __tablename__ = "click"
    __table_args__ = (
        sa.Index("ix_click_offerwall_created", "offerwall_id", "created_at"),
        # Reports and the staff dashboard over every offerwall read a range of days.
        sa.Index("ix_click_created", "created_at"),
        # The multi_offerwall signal looks back over an address's clicks, the shared_ip
        # signal over those of one device at the address.
        sa.Index("ix_click_ip_created", "ip", "created_at"),
        sa.Index("ix_click_ip_device_created", "ip", "device", "created_at"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    offerwall_id: str = Field(foreign_key="offerwall.id", max_length=36)
    mission_id: str | None = Field(
        default=None, foreign_key="mission.id", index=True, max_length=36, ondelete="SET NULL"
    )
    quest_id: str | None = Field(
        default=None, foreign_key="quest.id", index=True, max_length=36, ondelete="SET NULL"
    )
    platform_user_id: str = Field(foreign_key="platform_user.id", index=True, max_length=36)
    uid: str | None = Field(default=None, max_length=255)
    clickid: str | None = Field(default=None, max_length=255)
    sub1: str | None = Field(default=None, max_length=255)
    sub2: str | None = Field(default=None, max_length=255)
    sub3: str | None = Field(default=None, max_length=255)
    ip: str = Field(max_length=64)
    user_agent: str = Field(default="", max_length=1024)
    country: str | None = Field(default=None, max_length=2)
    os: str | None = Field(default=None, max_length=32)
    # A digest of the device the click came from (`geo.device_signature`: its parsed
    # User-Agent, languages and platform); the languages and platform are not kept.
    device: str | None = Field(default=None, max_length=32)
    # Whether this click started the player's progress (the first click does).
    started: bool = Field(default=False)
    # Risk signals seen at the click (docs/fraud.md#signals), e.g. ["hosting_network"].
    signals: list[str] | None = Field(default=None, sa_type=JSONDoc)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    # The offerwall's test player clicked (uid TEST_UID): the conversions it leads to are tests.
    test: bool = Field(default=False)


class RefusalReason(StrEnum):
    """Why a tracking link did not redirect; stored with the refused click."""

    INVALID_LINK = "invalid_link"  # no uid or clickid, a value too long, a NUL character
    UNKNOWN_OFFER = "unknown_offer"
    UNKNOWN_OFFERWALL = "unknown_offerwall"  # no such owid, or not approved
    ENDED = "ended"  # inactive, expired, or not started yet
    CAPPED = "capped"  # the offer's cap (or its cap of the period), or a quest's cap of players
    NOT_PICKED = "not_picked"  # a pooled mission outside the player's picks of the period
    COUNTRY = "country"  # outside the offer's country targeting
    DEVICE = "device"  # outside the offer's operating systems
    BLOCKED_NETWORK = "blocked_network"  # the address is in QUESTWALL_BLOCKED_NETWORKS
    SCRIPTED_AGENT = "scripted_agent"  # a script, crawler or headless browser's User-Agent
    IP_RATE = "ip_rate"  # too many clicks from one IP address in a minute
    UID_RATE = "uid_rate"  # too many clicks by one player in a minute
    BLOCKED = "blocked"  # the IP address, network or uid is on staff's blocklist
    HOSTING_NETWORK = "hosting_network"  # a datacenter, when the offerwall refuses those


class RefusedClick(SQLModel, table=True):
    """A click on a tracking link that was refused, with the reason; what it carried is
    kept as received (cut to the column's length), since it may name nothing that exists."""

    __tablename__ = "refused_click"
    __table_args__ = (
        sa.Index("ix_refused_click_created", "created_at"),
        sa.Index("ix_refused_click_offerwall_created", "offerwall_id", "created_at"),
        sa.Index("ix_refused_click_ip_created", "ip", "created_at"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    reason: str = Field(max_length=32)
    kind: str = Field(max_length=8)  # "mission" or "quest"
    offer_id: str = Field(max_length=255)
    owid: str | None = Field(default=None, max_length=255)
    # The offerwall the owid names, when it names one (approved or not).
    offerwall_id: str | None = Field(default=None, max_length=36)
    uid: str | None = Field(default=None, max_length=255)
    clickid: str | None = Field(default=None, max_length=255)
    sub1: str | None = Field(default=None, max_length=255)
    sub2: str | None = Field(default=None, max_length=255)
    sub3: str | None = Field(default=None, max_length=255)
    ip: str = Field(max_length=64)
    user_agent: str = Field(default="", max_length=1024)
    country: str | None = Field(default=None, max_length=2)
    os: str | None = Field(default=None, max_length=32)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class ProgressStatus(StrEnum):
    """Where a player's progress on a mission stands; stored as the plain string value."""

    STARTED = "started"
    COMPLETED = "completed"
    EXPIRED = "expired"
    CAPPED = "capped"


# A progress's status as every reader sees it (the offers API with uid, the progress
# endpoint, the wall, the designers' funnels, tickets): one still stored `started` whose
# time limit has passed reads `expired`, from the moment it passes, without waiting for the
# player's next event to store it so. The engine counts an event timed at `expires_at`
# itself, so the limit passes strictly after it.


def status_at(status: str, expires_at: datetime | None, now: datetime) -> ProgressStatus:
    """The status of a progress row read at `now` (the rule above)."""
    if status == ProgressStatus.STARTED and expires_at is not None and expires_at < now:
        return ProgressStatus.EXPIRED
    return ProgressStatus(status)


def status_at_sql(status: Any, expires_at: Any, now: datetime) -> Any:
    """`status_at` as an SQL expression over a progress row's columns."""
    ran_out = sa.and_(status == ProgressStatus.STARTED, expires_at.is_not(None), expires_at < now)
    return sa.case((ran_out, sa.literal(ProgressStatus.EXPIRED.value)), else_=status)


class Progress(SQLModel, table=True):
    """One player's progress on one mission, from the click that started it."""

    __tablename__ = "progress"
    __table_args__ = (
        sa.UniqueConstraint(
            "mission_id", "platform_user_id", "period", name="uq_progress_mission_player_period"
        ),
        # The completions waiting for a place under a cap, in turn (few rows: partial).
        sa.Index(
            "ix_progress_waiting",
            "mission_id",
            "waiting_on",
            "waiting_since",
            postgresql_where=sa.text("waiting_on IS NOT NULL"),
            sqlite_where=sa.text("waiting_on IS NOT NULL"),
        ),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    mission_id: str = Field(foreign_key="mission.id", max_length=36, ondelete="CASCADE")
    platform_user_id: str = Field(foreign_key="platform_user.id", index=True, max_length=36)
    quest_id: str | None = Field(
        default=None, foreign_key="quest.id", max_length=36, ondelete="SET NULL"
    )
    offerwall_id: str = Field(foreign_key="offerwall.id", max_length=36)
    # The click the progress (and so its conversions) is attributed to.
    click_id: int = Field(sa_type=sa.BigInteger, foreign_key="click.id")
    status: str = Field(default=ProgressStatus.STARTED, max_length=16)
    started_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # A recurring mission's period (its start date, "2026-11-28"; api/core/periods.py)
    # and when it ends: each period has its own row. "" and None for the others.
    period: str = Field(default="", max_length=10, sa_column_kwargs={"server_default": ""})
    resets_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The rule's tally since the start (or since the last conversion, when repeatable).
    count: int = Field(default=0)
    run: int = Field(default=0)
    total: float = Field(default=0)
    # What the richer kinds keep besides (distinct values, days, a window's events, groups,
    # a sequence's steps: api/missions/rules.py `Tally`); None for the plain kinds.
    state: Any = Field(default=None, sa_type=JSONDoc, nullable=True)
    completions: int = Field(default=0)
    # The anti-cheat rate rule's count: matching events in the minute (of event time)
    # numbered `rate_minute` (minutes since the epoch).
    rate_minute: int = Field(
        default=0, sa_type=sa.BigInteger, sa_column_kwargs={"server_default": sa.text("0")}
    )
    rate_count: int = Field(default=0, sa_column_kwargs={"server_default": sa.text("0")})
    # A completion a full cap refused (docs/missions.md#caps): the counter it waits on
    # ("cap", "total:<offerwall id>", "day:2026-11-28"…), since when, and what the event
    # that completed it said ({time, arrived, country, userId}) to pay it as it would have
    # been paid when a place is given back. None when nothing waits.
    waiting_on: str | None = Field(default=None, max_length=64)
    waiting_since: datetime | None = Field(default=None, sa_type=UTCDateTime)
    waiting_event: dict[str, Any] | None = Field(default=None, sa_type=JSONDoc)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class ConversionStatus(StrEnum):
    """Where a conversion stands; stored as the plain string value.

    approved: paid, its postback sent. reversed: taken back after approval (a reversal
    postback tells the publisher). pending and rejected belong to review
    (docs/fraud.md#the-review-queue): a held conversion is pending until approved or
    rejected, and a rejected one is never paid."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    REVERSED = "reversed"


class Conversion(SQLModel, table=True):
    """One completed, paid mission for one player."""

    __tablename__ = "conversion"
    __table_args__ = (
        # A completion converts once, also under concurrent requests and processes.
        sa.UniqueConstraint("progress_id", "sequence", name="uq_conversion_progress_sequence"),
        sa.Index("ix_conversion_offerwall_created", "offerwall_id", "created_at"),
        sa.Index("ix_conversion_created", "created_at"),
        # The review queue, and the held conversions due to be approved by themselves.
        sa.Index("ix_conversion_status_due", "status", "review_due_at"),
    )

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    transaction_id: str = Field(default_factory=new_uuid, unique=True, max_length=36)
    progress_id: int = Field(sa_type=sa.BigInteger, foreign_key="progress.id")
    sequence: int = Field(default=1)
    mission_id: str = Field(foreign_key="mission.id", index=True, max_length=36)
    quest_id: str | None = Field(default=None, foreign_key="quest.id", max_length=36)
    platform_user_id: str = Field(foreign_key="platform_user.id", index=True, max_length=36)
    offerwall_id: str = Field(foreign_key="offerwall.id", max_length=36)
    click_id: int = Field(sa_type=sa.BigInteger, foreign_key="click.id")
    payout_micros: int = Field(sa_type=sa.BigInteger)
    # The economics of its moment (docs/economics.md), never rewritten by later edits: what
    # the game pays (None: the mission has no revenue), the player's country (the click's),
    # which payout rule chose `payout_micros`, and the offerwall's promotion that applied:
    # its name and multiplier in hundredths (100: none; 250: 2.5×).
    revenue_micros: int | None = Field(default=None, sa_type=sa.BigInteger)
    country: str | None = Field(default=None, max_length=2)
    payout_rule: str = Field(
        default="default", max_length=16, sa_column_kwargs={"server_default": "default"}
    )
    promotion: str | None = Field(default=None, max_length=80)
    multiplier: int = Field(default=100, sa_column_kwargs={"server_default": sa.text("100")})
    # The budgets its revenue was drawn on, [[scope, period], …] (None: none), so that taking
    # it back gives back exactly what it took, whatever the budgets became since.
    budget_charges: list[list[str]] | None = Field(default=None, sa_type=JSONDoc)
    # The cap counters it took besides the mission's `cap`, [[scope, period], …] as
    # `cap_count` names them (None: none), given back exactly when it is taken back.
    cap_places: list[list[str]] | None = Field(default=None, sa_type=JSONDoc)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
    # A recurring mission's period (its progress row's) and a ladder's stage (1, 2, …).
    period: str | None = Field(default=None, max_length=10)
    stage: int | None = Field(default=None)
    status: str = Field(default=ConversionStatus.APPROVED, max_length=16)
    # A reversal: when, why (sent to the publisher as {reason}) and by whom (an account's
    # e-mail address, or "cli").
    reversed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    reversal_reason: str | None = Field(default=None, sa_type=sa.Text)
    reversed_by: str | None = Field(default=None, max_length=320)
    # Risk signals at the click and at completion; a pending conversion was held for them.
    signals: list[str] | None = Field(default=None, sa_type=JSONDoc)
    # A held conversion is approved by itself at this time, unless a reviewer decides
    # first or flags it (None: it waits for a reviewer).
    review_due_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    # The review's decision: when, by whom (an e-mail address, "cli" or "auto") and why.
    reviewed_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    reviewed_by: str | None = Field(default=None, max_length=320)
    review_note: str | None = Field(default=None, sa_type=sa.Text)
    # The test player's (its click's `test`): never paid, not in the reports.
    test: bool = Field(default=False)


class CheatFlag(SQLModel, table=True):
    """An event a mission's anti-cheat rule set aside (it did not count toward the
    mission), kept for the debugger and the fraud page as long as events are."""

    __tablename__ = "cheat_flag"
    __table_args__ = (sa.Index("ix_cheat_flag_game_created", "game_id", "created_at"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    game_id: str = Field(max_length=36)
    mission_id: str = Field(max_length=36)
    platform_user_id: str = Field(max_length=36)
    user_id: str = Field(max_length=128)  # the game's own user id
    event: str = Field(max_length=64)
    event_time: datetime = Field(sa_type=UTCDateTime, nullable=False)
    value: float | None = Field(default=None)
    # Which rule: max_value, max_trait, rate; and what it said, for people.
    rule: str = Field(max_length=16)
    detail: str = Field(max_length=300)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


class BlockKind(StrEnum):
    IP = "ip"
    NETWORK = "network"
    UID = "uid"


class BlockedEntry(SQLModel, table=True):
    """A blocklist entry staff added: clicks from this IP address or network, or by this
    player (uid, at every offerwall), are refused."""

    __tablename__ = "blocked_entry"
    __table_args__ = (sa.UniqueConstraint("kind", "value", name="uq_blocked_entry_kind_value"),)

    id: int | None = Field(default=None, sa_type=BigIntPK, primary_key=True)
    kind: str = Field(max_length=8)
    value: str = Field(max_length=255)
    note: str = Field(default="", max_length=300)
    created_by: str = Field(max_length=320)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)
